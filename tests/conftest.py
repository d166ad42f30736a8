"""Shared fixtures: PyTorch as the oracle when installed."""

from __future__ import annotations

import pytest

try:
    import torch
except ImportError:  # pragma: no cover - the test extra installs it
    torch = None

requires_torch = pytest.mark.skipif(
    torch is None, reason="PyTorch (the test oracle) is not installed"
)
