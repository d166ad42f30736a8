"""The events of a profile and their per-name averages, with PyTorch's field names
(``key``, ``count``, ``cpu_time_total``, ``self_cpu_time_total``, ``cpu_time``, in
microseconds) and a table that fits 80 columns."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

__all__ = ["EventList", "FunctionEvent", "FunctionEventAvg"]


class FunctionEvent:
    """One op call or ``record_function`` range: its name, start and end (µs since the
    profile started), the time its children took, and its input shapes (with
    ``record_shapes``)."""

    __slots__ = ("name", "start_us", "end_us", "child_us", "input_shapes", "id", "parent")

    def __init__(self, name: str, start_us: float, input_shapes: Any, event_id: int) -> None:
        self.name, self.start_us, self.end_us = name, start_us, start_us
        self.child_us = 0.0
        self.input_shapes = input_shapes
        self.id = event_id
        self.parent: FunctionEvent | None = None

    @property
    def key(self) -> str:
        return self.name

    @property
    def count(self) -> int:
        return 1

    @property
    def cpu_time_total(self) -> float:
        return self.end_us - self.start_us

    @property
    def self_cpu_time_total(self) -> float:
        return self.cpu_time_total - self.child_us

    @property
    def cpu_time(self) -> float:
        return self.cpu_time_total

    def __repr__(self) -> str:
        return (
            f"<FunctionEvent id={self.id} name={self.name} "
            f"cpu_time={_fmt(self.cpu_time_total)} self_cpu_time={_fmt(self.self_cpu_time_total)}>"
        )


class FunctionEventAvg:
    """The events of one name (and, when grouped so, one list of input shapes) together."""

    def __init__(self, key: str, input_shapes: Any = None) -> None:
        self.key, self.input_shapes = key, input_shapes
        self.count = 0
        self.cpu_time_total = 0.0
        self.self_cpu_time_total = 0.0

    def add(self, event: FunctionEvent) -> None:
        self.count += 1
        self.cpu_time_total += event.cpu_time_total
        self.self_cpu_time_total += event.self_cpu_time_total

    @property
    def cpu_time(self) -> float:
        """The mean time of one call, µs."""
        return self.cpu_time_total / self.count if self.count else 0.0

    def __repr__(self) -> str:
        return (
            f"<FunctionEventAvg key={self.key} count={self.count} "
            f"cpu_time_total={_fmt(self.cpu_time_total)}>"
        )


def _fmt(us: float) -> str:
    """A time as PyTorch's tables write it: ``12.345us``, ``1.234ms``, ``2.000s``."""
    if us >= 1e6:
        return f"{us / 1e6:.3f}s"
    if us >= 1e3:
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


_SORT_KEYS = ("cpu_time_total", "self_cpu_time_total", "cpu_time", "count")


class EventList(list):  # type: ignore[type-arg]
    """A list of events (or of their averages) that prints as a table."""

    def __init__(self, events: Iterable[Any] = ()) -> None:
        super().__init__(events)

    @property
    def self_cpu_time_total(self) -> float:
        return sum(e.self_cpu_time_total for e in self)

    def key_averages(self, group_by_input_shape: bool = False) -> EventList:
        """The events grouped by name (and input shapes), in order of first appearance."""
        groups: dict[Any, FunctionEventAvg] = {}
        for e in self:
            shapes = str(e.input_shapes) if group_by_input_shape else None
            avg = groups.get((e.key, shapes))
            if avg is None:
                avg = groups[(e.key, shapes)] = FunctionEventAvg(
                    e.key, e.input_shapes if group_by_input_shape else None
                )
            avg.add(e)
        return EventList(groups.values())

    def table(
        self,
        sort_by: str | None = None,
        row_limit: int = 100,
        max_name_column_width: int = 30,
        header: str | None = None,
        top_level_events_only: bool = False,
    ) -> str:
        """The rows sorted (descending) by ``sort_by`` (``cpu_time_total``,
        ``self_cpu_time_total``, ``cpu_time``, ``count``; None keeps their order), at most
        ``row_limit`` of them, with totals below, in 80 columns."""
        rows = list(self)
        if top_level_events_only:
            rows = [e for e in rows if getattr(e, "parent", None) is None]
        if sort_by is not None:
            name = sort_by.replace("self_cpu_time", "self_cpu_time_total").replace(
                "_total_total", "_total"
            )
            if name not in _SORT_KEYS:
                raise ValueError(
                    f"table: sort_by should be one of {', '.join(_SORT_KEYS)} (CPU activity "
                    f"only), got {sort_by!r}"
                )
            rows.sort(key=lambda e: getattr(e, name), reverse=True)
        if row_limit is not None and row_limit >= 0:
            rows = rows[:row_limit]
        total = self.self_cpu_time_total or 1.0
        width = max(4, min(max_name_column_width, 80 - 50))
        head = ("Name", "Self CPU %", "Self CPU", "CPU total", "CPU avg", "Calls")
        line = "-" * (width + 50)
        out = [header] if header else []
        out += [line, f"{head[0]:<{width}}{head[1]:>11}{head[2]:>11}{head[3]:>11}"
                f"{head[4]:>11}{head[5]:>6}", line]  # fmt: skip
        for e in rows:
            key = e.key if len(e.key) <= width - 1 else e.key[: width - 4] + "..."
            out.append(
                f"{key:<{width}}{100 * e.self_cpu_time_total / total:>10.2f}%"
                f"{_fmt(e.self_cpu_time_total):>11}{_fmt(e.cpu_time_total):>11}"
                f"{_fmt(e.cpu_time):>11}{e.count:>6}"
            )
        out += [line, f"Self CPU time total: {_fmt(self.self_cpu_time_total)}"]
        return "\n".join(out)

    def export_chrome_trace(self, path: str) -> None:
        """The events as complete ("X") events of the Chrome trace format."""
        trace = {
            "traceEvents": [
                {"name": e.name, "ph": "X", "ts": e.start_us, "dur": e.cpu_time_total,
                 "pid": 0, "tid": 0, "cat": "cpu_op", "args": {"Input Dims": e.input_shapes}}
                for e in self
                if isinstance(e, FunctionEvent)
            ]
        }  # fmt: skip
        with open(path, "w") as f:
            json.dump(trace, f)

    def __str__(self) -> str:
        return self.table()
