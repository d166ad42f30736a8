"""Meta rules of the creation ops."""

from __future__ import annotations
