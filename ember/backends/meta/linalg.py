"""Meta rules of the linalg ops."""

from __future__ import annotations
