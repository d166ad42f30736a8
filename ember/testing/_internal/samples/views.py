"""Sample inputs for the views ops (see ember/testing/_internal/opinfo.py)."""

from __future__ import annotations
