"""Sample inputs for the copies ops (see ember/testing/_internal/opinfo.py)."""

from __future__ import annotations
