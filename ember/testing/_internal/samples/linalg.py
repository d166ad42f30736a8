"""Sample inputs for the linalg ops (see ember/testing/_internal/opinfo.py)."""

from __future__ import annotations
