"""Sample inputs for the creation ops (see ember/testing/_internal/opinfo.py)."""

from __future__ import annotations
