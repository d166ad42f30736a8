"""Counters and timings of the lazy device, modelled on PyTorch/XLA's metrics report.

Counters (``counter_value(name)``): ``ops_recorded``, ``graphs_executed``,
``nodes_executed``, ``compile_cache_hit``, ``compile_cache_miss``, ``cpu_fallback::<op>``,
``sync::<cause>`` (``item``, ``numpy``, ``repr``, ``to``, ``mark_step``, ``sync``,
``graph_size``, ...). Metrics (``metric_data(name)`` gives count, total, samples):
``compile_time_s``, ``execute_time_s``, ``graph_nodes``.

>>> from ember.compiler.metrics import counter_value, reset
>>> reset(); counter_value("graphs_executed")
0
"""

from __future__ import annotations

import threading
from collections import defaultdict

_lock = threading.Lock()
_counters: defaultdict[str, int] = defaultdict(int)
_metrics: defaultdict[str, list[float]] = defaultdict(list)
_MAX_SAMPLES = 1000
#: counters a hot path bumps itself, without the lock: name -> a one-element list
_tallies: dict[str, list[int]] = {}


def count(name: str, n: int = 1) -> None:
    with _lock:
        _counters[name] += n


def tally(name: str) -> list[int]:
    """The cell of a counter a hot path increments as ``cell[0] += 1`` (a locked ``count``
    costs as much as a fifth of recording an op). No lock: under CPython's GIL no thread
    switch falls inside an increment that calls no Python code."""
    return _tallies.setdefault(name, [0])


def sample(name: str, value: float) -> None:
    with _lock:
        samples = _metrics[name]
        if len(samples) >= _MAX_SAMPLES:
            del samples[: _MAX_SAMPLES // 2]
        samples.append(value)
        _counters[f"{name}::count"] += 1
        _totals[name] = _totals.get(name, 0.0) + value


_totals: dict[str, float] = {}


def reset() -> None:
    """Zero every counter and metric."""
    with _lock:
        _counters.clear()
        _metrics.clear()
        _totals.clear()
        for cell in _tallies.values():
            cell[0] = 0


def counter_names() -> list[str]:
    names = {k for k in _counters if not k.endswith("::count")}
    names.update(k for k, cell in _tallies.items() if cell[0])
    return sorted(names)


def counter_value(name: str) -> int:
    cell = _tallies.get(name)
    return _counters.get(name, 0) + (cell[0] if cell is not None else 0)


def metric_names() -> list[str]:
    return sorted(_metrics)


def metric_data(name: str) -> tuple[int, float, list[float]] | None:
    """(count, total, recent samples) of a metric, or None if it has none."""
    if name not in _metrics:
        return None
    return _counters[f"{name}::count"], _totals[name], list(_metrics[name])


def report() -> str:
    """A readable report of every counter and metric (fits 80 columns)."""
    lines = ["Counters:"]
    for name in counter_names():
        lines.append(f"  {name:<56} {counter_value(name):>12}")
    lines.append("Metrics:")
    for name in metric_names():
        n, total, samples = metric_data(name) or (0, 0.0, [])
        mean = total / n if n else 0.0
        if name.endswith("_s"):
            text = f"n={n} total={total * 1e3:.2f}ms mean={mean * 1e3:.3f}ms"
        else:
            text = f"n={n} total={total:g} mean={mean:.1f} max={max(samples, default=0):g}"
        lines.append(f"  {name:<24} {text}")
    return "\n".join(lines)
