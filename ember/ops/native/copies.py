"""The copies ops: schemas (catalogue)."""

from __future__ import annotations
