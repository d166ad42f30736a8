"""The views ops: schemas (catalogue)."""

from __future__ import annotations
