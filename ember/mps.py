"""``torch.mps``: ember has no Metal backend; it answers as PyTorch built without one.

>>> ember.mps.is_available(), ember.mps.device_count()
(False, 0)
"""

from __future__ import annotations

__all__ = ["device_count", "is_available"]


def is_available() -> bool:
    return False


def device_count() -> int:
    return 0
