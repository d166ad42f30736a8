"""CPU kernels of the views ops."""

from __future__ import annotations
