"""``torch.cpu``: the CPU device's module (ember computes on it alone) and its deprecated
``torch.cpu.amp`` aliases.

>>> ember.cpu.is_available(), ember.cpu.device_count()
(True, 1)
"""

from __future__ import annotations

from ember._streams import CpuStream as Stream
from ember._streams import StreamContext, current_stream, stream
from ember.cpu import amp

__all__ = [
    "Stream", "StreamContext", "amp", "current_device", "current_stream", "device_count",
    "is_available", "stream", "synchronize",
]  # fmt: skip


def is_available() -> bool:
    """Always True: the CPU is there."""
    return True


def device_count() -> int:
    """1, as PyTorch's."""
    return 1


def current_device() -> str:
    return "cpu"


def synchronize(device: object = None) -> None:
    """Nothing to wait for: CPU ops finish before they return."""
