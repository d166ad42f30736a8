"""``torch.accelerator``: ember has no accelerator (it computes on the cpu), and answers
as PyTorch's CPU-only build does.

>>> ember.accelerator.is_available(), ember.accelerator.current_accelerator()
(False, None)
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "current_accelerator", "current_device_index", "device_count", "is_available",
    "synchronize",
]  # fmt: skip


def is_available() -> bool:
    return False


def current_accelerator(check_available: bool = False) -> Any:
    return None


def device_count() -> int:
    return 0


def current_device_index() -> int:
    raise RuntimeError(
        "accelerator.current_device_index: ember has no accelerator; check "
        "accelerator.is_available() first"
    )


def synchronize(device: Any = None) -> None:
    return None
