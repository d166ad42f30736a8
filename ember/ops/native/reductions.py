"""The reductions ops: schemas (catalogue)."""

from __future__ import annotations
