"""Meta rules of the indexing ops."""

from __future__ import annotations
