"""Sample inputs for the indexing ops (see ember/testing/_internal/opinfo.py)."""

from __future__ import annotations
