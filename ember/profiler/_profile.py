"""``profile``: a dispatch mode that times every op, the ``record_function`` ranges, and
the step schedule (NOTE in ``ember/profiler/__init__.py``)."""

from __future__ import annotations

import enum
import os
import socket
import time
import warnings
from collections.abc import Callable, Iterable
from typing import Any

from ember._tensor import Tensor
from ember.autograd import profiler as _ranges
from ember.profiler._events import EventList, FunctionEvent
from ember.utils._python_dispatch import TorchDispatchMode

__all__ = [
    "ProfilerAction", "ProfilerActivity", "kineto_available", "profile", "schedule",
    "supported_activities", "tensorboard_trace_handler",
]  # fmt: skip


class ProfilerActivity(enum.Enum):
    """What a profile records: ember runs on the CPU only."""

    CPU = 0


class ProfilerAction(enum.Enum):
    """What the schedule asks of a step (PyTorch's values)."""

    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


def supported_activities() -> set[ProfilerActivity]:
    return {ProfilerActivity.CPU}


def kineto_available() -> bool:
    """False: ember records its events itself, with no Kineto backend."""
    return False


def schedule(
    *, wait: int, warmup: int, active: int, repeat: int = 0, skip_first: int = 0
) -> Callable[[int], ProfilerAction]:
    """PyTorch's step schedule: skip ``skip_first`` steps, then cycles of ``wait`` idle,
    ``warmup`` and ``active`` recorded steps (the last of which saves), ``repeat`` times
    (0: forever).

    >>> s = ember.profiler.schedule(wait=1, warmup=1, active=2)
    >>> [s(i).name for i in range(4)]
    ['NONE', 'WARMUP', 'RECORD', 'RECORD_AND_SAVE']
    """
    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise ValueError(
            "schedule: wait, warmup, repeat and skip_first must be >= 0 and active > 0, got "
            f"wait={wait}, warmup={warmup}, active={active}, repeat={repeat}, "
            f"skip_first={skip_first}"
        )
    if warmup == 0:  # as PyTorch's
        warnings.warn(
            "Profiler won't be using warmup, this can skew profiler results", stacklevel=2
        )
    cycle = wait + warmup + active

    def action(step: int) -> ProfilerAction:
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if repeat and step // cycle >= repeat:
            return ProfilerAction.NONE
        at = step % cycle
        if at < wait:
            return ProfilerAction.NONE
        if at < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if at < cycle - 1 else ProfilerAction.RECORD_AND_SAVE

    return action


def tensorboard_trace_handler(
    dir_name: str, worker_name: str | None = None, use_gzip: bool = False
) -> Callable[[profile], None]:
    """An ``on_trace_ready`` that writes each recorded cycle as a Chrome trace file in
    ``dir_name`` (``<worker>.<ms>.pt.trace.json``, as PyTorch names them)."""
    if use_gzip:
        raise NotImplementedError("tensorboard_trace_handler: use_gzip is not supported yet")

    def handler(prof: profile) -> None:
        os.makedirs(dir_name, exist_ok=True)
        worker = worker_name or f"{socket.gethostname()}_{os.getpid()}"
        name = f"{worker}.{time.time_ns() // 1_000_000}.pt.trace.json"
        prof.export_chrome_trace(os.path.join(dir_name, name))

    return handler


def _shapes(args: Iterable[Any]) -> list[Any]:
    return [list(a.shape) if isinstance(a, Tensor) else [] for a in args]


class _Recorder(TorchDispatchMode):
    """Times each op that reaches the Python key, as an event of ``prof``."""

    def __init__(self, prof: profile) -> None:
        super().__init__()
        self.prof = prof

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        prof = self.prof
        if not prof._recording or func.namespace == "profiler":  # a range: its own event
            return func(*args, **(kwargs or {}))
        event = prof._begin(func.overloadpacket._qualified_op_name, args)
        try:
            return func(*args, **(kwargs or {}))
        finally:
            prof._end(event, time.perf_counter_ns())


class profile:  # noqa: N801  (PyTorch's name)
    """Record the ops and ``record_function`` ranges run inside it (CPU activity).

    >>> with ember.profiler.profile(record_shapes=True) as prof:
    ...     _ = ember.ones(2, 3).sum(0)
    >>> [(e.name, e.input_shapes) for e in prof.events() if e.name == "aten::sum"]
    [('aten::sum', [[2, 3], []])]
    """

    def __init__(
        self,
        *,
        activities: Iterable[ProfilerActivity] | None = None,
        schedule: Callable[[int], ProfilerAction] | None = None,
        on_trace_ready: Callable[[profile], Any] | None = None,
        record_shapes: bool = False,
        profile_memory: bool = False,
        with_stack: bool = False,
        with_flops: bool = False,
        with_modules: bool = False,
        experimental_config: Any = None,
        execution_trace_observer: Any = None,
        acc_events: bool = False,
        use_cuda: bool | None = None,
    ) -> None:
        for a in activities or ():
            if a is not ProfilerActivity.CPU:
                raise ValueError(
                    f"profile: ember records CPU activity only, got {a}; pass "
                    "activities=[ProfilerActivity.CPU] or leave it out"
                )
        if use_cuda:
            raise ValueError("profile: use_cuda=True, but ember has no CUDA device")
        self.schedule = schedule
        self.on_trace_ready = on_trace_ready
        self.record_shapes = record_shapes
        self.acc_events = acc_events
        self.step_num = 0
        self._action = schedule(0) if schedule is not None else ProfilerAction.RECORD
        self._recording = False
        self._events: list[FunctionEvent] = []
        self._open: list[FunctionEvent] = []
        self._ranges: dict[int, FunctionEvent] = {}
        self._origin_ns = time.perf_counter_ns()
        self._mode: _Recorder | None = None

    # ------------------------------------------------------------------ life cycle

    def __enter__(self) -> profile:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        if _ranges.ACTIVE[0] is not None:
            raise RuntimeError("profile: another profile is running; ember runs one at a time")
        _ranges.ACTIVE[0] = self
        self._mode = _Recorder(self)
        self._mode.__enter__()
        self._recording = self._action in (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE)

    def stop(self) -> None:
        if self._mode is None:
            return
        self._mode.__exit__(None, None, None)
        self._mode = None
        _ranges.ACTIVE[0] = None
        was = self._action
        self._recording = False
        if self.schedule is None or was in (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE):
            self._ready()

    def step(self) -> None:
        """End a step: the schedule says whether the next records, and a finished
        recording cycle goes to ``on_trace_ready``."""
        if self.schedule is None:
            return
        was = self._action
        self.step_num += 1
        self._action = self.schedule(self.step_num)
        if was is ProfilerAction.RECORD_AND_SAVE:
            self._ready()
        if self._action in (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE):
            if was not in (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE):
                if not self.acc_events:
                    self._events = []
            self._recording = True
        else:
            self._recording = False

    def _ready(self) -> None:
        if self.on_trace_ready is not None:
            self.on_trace_ready(self)

    # ------------------------------------------------------------------ events

    def _begin(self, name: str, args: Any) -> FunctionEvent:
        now = time.perf_counter_ns()
        shapes = _shapes(args) if self.record_shapes else []
        event = FunctionEvent(name, (now - self._origin_ns) / 1e3, shapes, len(self._events))
        if self._open:
            event.parent = self._open[-1]
        self._open.append(event)
        self._events.append(event)
        return event

    def _end(self, event: FunctionEvent, now_ns: int) -> None:
        event.end_us = (now_ns - self._origin_ns) / 1e3
        while self._open and self._open[-1] is not event:
            self._open.pop()  # a range left open inside it (an exception): closed with it
        if self._open:
            self._open.pop()
        if event.parent is not None:
            event.parent.child_us += event.cpu_time_total

    def _open_range(self, record: Any) -> None:
        """A ``record_function`` range opened (called through ``ACTIVE``)."""
        if self._recording:
            self._ranges[id(record)] = self._begin(record.name, ())

    def _close_range(self, record: Any, now_ns: int) -> None:
        event = self._ranges.pop(id(record), None)
        if event is not None:
            self._end(event, now_ns)

    # ------------------------------------------------------------------ results

    def events(self) -> EventList:
        """Every event recorded, in the order they started."""
        return EventList(self._events)

    def key_averages(self, group_by_input_shape: bool = False) -> EventList:
        """The events grouped by name (and, if asked, input shapes)."""
        return self.events().key_averages(group_by_input_shape)

    def export_chrome_trace(self, path: str) -> None:
        self.events().export_chrome_trace(path)
