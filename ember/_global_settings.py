"""Process-wide switches PyTorch keeps at the top of ``torch``: deterministic algorithms,
the number of threads, and float32 matmul precision.

# NOTE [deterministic algorithms]
ember's kernels are NumPy calls on one device, so every op is already deterministic: no op
raises or warns under ``use_deterministic_algorithms(True)``. What the mode does change is
PyTorch's ``fill_uninitialized_memory``: ``empty`` and its relatives fill floating and
complex values with NaN and integers with their largest value (``True`` for bool), so code
that reads memory it never wrote shows it. The CPU ``empty`` kernels read ``FLAGS`` for that.
Unlike grad mode, these switches are global, not per thread, as in PyTorch.
"""

from __future__ import annotations

import os
import sys
import warnings
from typing import Any

__all__ = [
    "are_deterministic_algorithms_enabled", "get_float32_matmul_precision", "get_num_threads",
    "is_deterministic_algorithms_warn_only_enabled", "set_float32_matmul_precision",
    "set_num_threads", "use_deterministic_algorithms",
]  # fmt: skip


class _Flags:
    __slots__ = ("deterministic", "warn_only", "num_threads", "matmul_precision")

    def __init__(self) -> None:
        self.deterministic = False
        self.warn_only = False
        self.num_threads: int | None = None  # None: as many as the process may use
        self.matmul_precision = "highest"


FLAGS = _Flags()

#: which scaled-dot-product-attention kernels may run (``torch.backends.cuda``'s switches,
#: which PyTorch's CPU choice reads too: ``flash`` and ``math`` are the two on the cpu)
SDP_ENABLED = {"flash": True, "mem_efficient": True, "math": True, "cudnn": True,
               "overrideable": True}  # fmt: skip
_PRECISIONS = ("highest", "high", "medium")


def _check_bool(value: Any, what: str, name: str) -> None:
    if type(value) is not bool:
        raise TypeError(f"{what}(): argument {name} must be bool, not {type(value).__name__}")


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """Switch deterministic algorithms on or off (NOTE [deterministic algorithms]).

    >>> ember.use_deterministic_algorithms(True); ember.are_deterministic_algorithms_enabled()
    True
    >>> ember.use_deterministic_algorithms(False)
    """
    _check_bool(mode, "_set_deterministic_algorithms", "'mode' (position 1)")
    _check_bool(warn_only, "_set_deterministic_algorithms", "'warn_only'")
    FLAGS.deterministic = mode
    FLAGS.warn_only = warn_only


def are_deterministic_algorithms_enabled() -> bool:
    """Whether ``use_deterministic_algorithms(True)`` is in force.

    >>> ember.are_deterministic_algorithms_enabled()
    False
    """
    return FLAGS.deterministic


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    """Whether deterministic mode was switched on with ``warn_only=True``.

    >>> ember.is_deterministic_algorithms_warn_only_enabled()
    False
    """
    return FLAGS.warn_only


def _available_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not on Linux
        return os.cpu_count() or 1


def get_num_threads() -> int:
    """How many threads ember's kernels may use (BLAS and the numba tier).

    >>> ember.get_num_threads() >= 1
    True
    """
    return FLAGS.num_threads if FLAGS.num_threads is not None else _available_cpus()


def set_num_threads(n: int) -> None:
    """Limit the threads of BLAS (through threadpoolctl, when installed) and of the numba
    tier's parallel loops (when numba is loaded) to ``n``.

    >>> n = ember.get_num_threads()
    >>> ember.set_num_threads(1); ember.get_num_threads()
    1
    >>> ember.set_num_threads(n)
    """
    if type(n) is not int:
        raise RuntimeError(f"set_num_threads expects an int, but got {type(n).__name__}")
    if n <= 0:
        raise RuntimeError("set_num_threads expects a positive integer")
    FLAGS.num_threads = n
    numba = sys.modules.get("numba")
    if numba is not None:
        numba.set_num_threads(min(n, numba.config.NUMBA_NUM_THREADS))
    try:  # optional dependency, loaded when first needed
        from threadpoolctl import threadpool_limits
    except ImportError:
        return
    threadpool_limits(limits=n)


def set_float32_matmul_precision(precision: str) -> None:
    """Record the float32 matmul precision PyTorch uses to allow TF32 on GPUs; ember's
    matmuls are NumPy's float32 ones whatever it says. An unknown name warns and does nothing.

    >>> ember.set_float32_matmul_precision("highest"); ember.get_float32_matmul_precision()
    'highest'
    """
    if precision not in _PRECISIONS:
        warnings.warn(
            f"{precision} is not one of 'highest', 'high', or 'medium'; the current "
            "setFloat32MatmulPrecision call has no effect.",
            UserWarning,
            stacklevel=2,
        )
        return
    FLAGS.matmul_precision = precision


def get_float32_matmul_precision() -> str:
    """The float32 matmul precision last set (``"highest"`` by default).

    >>> ember.get_float32_matmul_precision()
    'highest'
    """
    return FLAGS.matmul_precision
