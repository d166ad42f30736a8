"""CPU kernels of the linalg ops."""

from __future__ import annotations
