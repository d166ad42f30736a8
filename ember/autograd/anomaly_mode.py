"""``detect_anomaly``: remember where each node was created, and fail on NaN gradients."""

from __future__ import annotations

import traceback
import warnings
from typing import Any

import numpy as np

from ember.dispatch import state

#: how many threads have anomaly mode on (zero: skip the thread-local read)
OPEN = [0]


def is_anomaly_enabled() -> bool:
    """Whether anomaly mode is on in this thread.

    >>> ember.autograd.is_anomaly_enabled()
    False
    """
    return bool(OPEN[0]) and bool(getattr(state.local, "anomaly", False))


def is_anomaly_check_nan_enabled() -> bool:
    """Whether anomaly mode, when on, fails on NaN gradients in this thread.

    >>> ember.autograd.is_anomaly_check_nan_enabled()
    False
    """
    return is_anomaly_enabled() and bool(getattr(state.local, "anomaly_check_nan", True))


def _set(mode: bool, check_nan: bool) -> tuple[bool, bool]:
    """Switch anomaly mode in this thread; return the previous (mode, check_nan)."""
    local = state.local
    prev = (bool(getattr(local, "anomaly", False)), bool(getattr(local, "anomaly_check_nan", True)))
    local.anomaly = bool(mode)  # type: ignore[attr-defined]
    local.anomaly_check_nan = bool(check_nan)  # type: ignore[attr-defined]
    OPEN[0] += int(bool(mode)) - int(prev[0])
    return prev


def set_anomaly_enabled(enabled: bool, check_nan: bool = True) -> None:
    """Switch anomaly mode in this thread (``torch.set_anomaly_enabled``: what
    ``set_detect_anomaly`` calls).

    >>> ember.set_anomaly_enabled(True); ember.is_anomaly_enabled()
    True
    >>> ember.set_anomaly_enabled(False); ember.is_anomaly_enabled()
    False
    """
    _set(enabled, check_nan)


class detect_anomaly:
    """In this block, nodes record the forward traceback, and (with ``check_nan``) a backward
    formula that returns NaN raises an error naming the node and showing where it was created.

    >>> import warnings
    >>> x = ember.tensor([0.0], requires_grad=True)
    >>> with warnings.catch_warnings(action="ignore"), ember.autograd.detect_anomaly():
    ...     x.sqrt().mul(0).sum().backward()  # sqrt's backward: 0 / (2 * sqrt(0)) is NaN
    Traceback (most recent call last):
      ...
    RuntimeError: Function 'SqrtBackward0' returned nan values in its 0th output.
    The forward call that created it:
    ...
    """

    def __init__(self, check_nan: bool = True) -> None:
        self.check_nan = check_nan
        self._prev: list[tuple[bool, bool]] = []
        warnings.warn(
            "Anomaly Detection has been enabled. This mode will increase the runtime and should "
            "only be enabled for debugging.",
            UserWarning,
            stacklevel=2,
        )

    def __enter__(self) -> None:
        self._prev.append(_set(True, self.check_nan))

    def __exit__(self, *exc: Any) -> None:
        _set(*self._prev.pop())


class set_detect_anomaly:
    """Switch anomaly mode on or off: from now on when called, or for a ``with`` block.

    >>> with ember.autograd.set_detect_anomaly(True): ember.autograd.is_anomaly_enabled()
    True
    """

    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        self._prev = _set(mode, check_nan)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: Any) -> None:
        _set(*self._prev)


def forward_trace() -> str:
    return "".join(traceback.format_stack()[:-3])


def check_results(node: Any, results: Any) -> None:
    """Raise if any gradient a node returned holds NaN (anomaly mode only)."""
    if not getattr(state.local, "anomaly_check_nan", True):
        return
    for i, r in enumerate(results):
        data = getattr(r, "_edata", None)
        if isinstance(data, np.ndarray) and data.dtype.kind in "fc" and np.isnan(data).any():
            trace = node.metadata.get("trace", "(no forward trace recorded)")
            raise RuntimeError(
                f"Function '{node.name()}' returned nan values in its {i}th output.\n"
                f"The forward call that created it:\n{trace}"
            )
