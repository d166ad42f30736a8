"""Sample inputs for the reductions ops (see ember/testing/_internal/opinfo.py)."""

from __future__ import annotations
