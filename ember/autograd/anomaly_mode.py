"""``detect_anomaly``: remember where each node was created, and fail on NaN gradients."""

from __future__ import annotations

import traceback
from typing import Any

from ember.dispatch import state

#: how many detect_anomaly blocks are open in any thread (zero: skip the thread-local read)
OPEN = [0]


def is_anomaly_enabled() -> bool:
    return bool(OPEN[0]) and bool(getattr(state.local, "anomaly", False))


class detect_anomaly:
    """In this block, nodes record the forward traceback, and a backward formula that
    returns NaN raises an error naming the node and showing where it was created.

    >>> with ember.autograd.detect_anomaly(): ...
    """

    def __init__(self, check_nan: bool = True) -> None:
        self.check_nan = check_nan
        self._prev: list[Any] = []

    def __enter__(self) -> None:
        self._prev.append(getattr(state.local, "anomaly", False))
        state.local.anomaly = self.check_nan or True  # type: ignore[attr-defined]
        OPEN[0] += 1

    def __exit__(self, *exc: Any) -> None:
        state.local.anomaly = self._prev.pop()  # type: ignore[attr-defined]
        OPEN[0] -= 1


def forward_trace() -> str:
    return "".join(traceback.format_stack()[:-3])


def check_results(node: Any, results: Any) -> None:
    """Raise if any gradient a node returned holds NaN (anomaly mode only)."""
    import numpy as np

    for i, r in enumerate(results):
        data = getattr(r, "_data", None)
        if isinstance(data, np.ndarray) and data.dtype.kind in "fc" and np.isnan(data).any():
            trace = node.metadata.get("trace", "(no forward trace recorded)")
            raise RuntimeError(
                f"Function '{node.name()}' returned nan values in its {i}th output.\n"
                f"The forward call that created it:\n{trace}"
            )
