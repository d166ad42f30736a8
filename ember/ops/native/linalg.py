"""The linalg ops: schemas (catalogue)."""

from __future__ import annotations
