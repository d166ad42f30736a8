"""CPU kernels of the copies ops."""

from __future__ import annotations
