"""``torch.Stream``/``torch.Event`` and ``torch.cpu``'s streams, for the one device ember
has: CPU ops finish before they return, so a stream has nothing queued and an event is
complete as soon as it is recorded. Scripts that pass streams around, record events to
time code, or enter ``torch.cpu.stream(s)`` run unchanged.

>>> s = ember.Stream(device="cpu")
>>> e = s.record_event(); e.query(), s.query()
(True, True)
"""

from __future__ import annotations

import time
from typing import Any

from ember.device import as_device

__all__ = ["CpuStream", "Event", "Stream", "StreamContext", "current_stream", "stream"]


def _cpu(device: Any, what: str) -> None:
    d = as_device(device if device is not None else "cpu")
    if d.type != "cpu":
        raise RuntimeError(
            f"{what}: ember computes on the cpu device only, got device {d.type!r}; "
            "pass device='cpu' or leave it out"
        )


class Stream:
    """A stream of the cpu device (PyTorch's ``torch.Stream``): ``query`` is always True,
    ``synchronize`` and ``wait_*`` return at once."""

    def __init__(self, device: Any = None, *, priority: int = 0) -> None:
        _cpu(device, "Stream")
        # PyTorch's numbers: device type 0 is the cpu's, index -1 the current device
        self.device_type, self.device_index, self.stream_id = 0, -1, 0
        self.priority = priority

    @property
    def device(self) -> Any:
        return as_device("cpu")

    def query(self) -> bool:
        return True

    def synchronize(self) -> None:
        return None

    def wait_event(self, event: Event) -> None:
        return None

    def wait_stream(self, stream: Stream) -> None:
        return None

    def record_event(self, event: Event | None = None) -> Event:
        event = event if event is not None else Event()
        event.record(self)
        return event

    def __enter__(self) -> Stream:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Stream) and other.stream_id == self.stream_id

    def __hash__(self) -> int:
        return hash(("cpu", self.stream_id))

    def __repr__(self) -> str:
        return (
            f"ember.Stream device_type=cpu, device_index={self.device_index}, "
            f"stream_id={self.stream_id}"
        )


class CpuStream(Stream):
    """``torch.cpu.Stream``."""


class Event:
    """An event of the cpu device (PyTorch's ``torch.Event``): complete once recorded;
    with ``enable_timing``, ``elapsed_time`` gives the milliseconds between two records."""

    def __init__(
        self,
        device: Any = None,
        *,
        enable_timing: bool = False,
        blocking: bool = False,
        interprocess: bool = False,
    ) -> None:
        _cpu(device, "Event")
        self.device_type, self.device_index = 0, -1
        self.enable_timing = enable_timing
        self._at: float | None = None

    def record(self, stream: Stream | None = None) -> None:
        self._at = time.perf_counter()

    def query(self) -> bool:
        return True

    def synchronize(self) -> None:
        return None

    def wait(self, stream: Stream | None = None) -> None:
        return None

    def elapsed_time(self, end_event: Event) -> float:
        if not (self.enable_timing and end_event.enable_timing):
            raise ValueError("Event.elapsed_time: both events need enable_timing=True when created")
        if self._at is None or end_event._at is None:
            raise ValueError("Event.elapsed_time: both events must be recorded first")
        return (end_event._at - self._at) * 1e3

    def __repr__(self) -> str:
        return f"ember.Event device_type=cpu, device_index={self.device_index}"


_CURRENT = CpuStream()


def current_stream(device: Any = None) -> CpuStream:
    """The cpu device's one stream (the same object on every call)."""
    return _CURRENT


class StreamContext:
    """``with torch.cpu.stream(s):`` — nothing changes: ember's cpu ops run in order."""

    def __init__(self, stream: Stream | None) -> None:
        self.stream = stream

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


def stream(stream: Stream | None) -> StreamContext:
    return StreamContext(stream)
