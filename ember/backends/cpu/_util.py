"""Small pieces every CPU kernel uses: unwrap arguments, wrap results, quiet floating point.

# NOTE [quiet floating point]
PyTorch gives inf and nan silently; NumPy warns. Ops that can produce them run under an
"ignore" error state, set by swapping NumPy's error-state context variable (~0.25 µs; a fresh
``np.errstate`` costs ~1 µs, and one shared ``np.errstate`` object cannot be entered twice).
Ops that cannot warn (comparisons, bitwise, selection) skip it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from ember._tensor import Tensor, wrap, wrap_view

__all__ = [
    "data",
    "wrap",
    "wrap_view",
    "as_array",
    "quiet",
    "quiet_block",
    "quietly",
    "ERRSTATE",
    "IGNORE",
    "Tensor",
]

_ndarray = np.ndarray


def data(x: Any) -> Any:
    """The ndarray of a tensor, or a Python number unchanged."""
    if isinstance(x, Tensor):
        d = x._edata
        if type(d) is not _ndarray:
            raise RuntimeError(
                f"expected a cpu tensor with data, got one on '{x.device}'; move it with .to('cpu')"
            )
        return d
    return x


def as_array(r: Any) -> np.ndarray:
    """NumPy returns scalars for 0-d results; make them 0-d arrays again."""
    return r if type(r) is _ndarray else np.asarray(r)


try:
    from numpy._core._ufunc_config import _extobj_contextvar as ERRSTATE
    from numpy._core._ufunc_config import _make_extobj

    IGNORE = _make_extobj(all="ignore")

    def quiet(fn: Callable[..., Any], *args: Any) -> Any:
        """``fn(*args)`` with NumPy's floating-point warnings off."""
        token = ERRSTATE.set(IGNORE)
        try:
            return fn(*args)
        finally:
            ERRSTATE.reset(token)

except (
    ImportError
):  # NumPy < 2: the public, slower way (code swapping ERRSTATE directly then warns)
    import contextvars

    ERRSTATE = contextvars.ContextVar("ember_unused_errstate")
    IGNORE = None

    def quiet(fn: Callable[..., Any], *args: Any) -> Any:
        """``fn(*args)`` with NumPy's floating-point warnings off."""
        with np.errstate(all="ignore"):
            return fn(*args)


class quiet_block:
    """``with quiet_block():`` NumPy's floating-point warnings off for the block; the cheap
    form of ``np.errstate(all="ignore")`` (NOTE [quiet floating point])."""

    __slots__ = ("token",)

    def __enter__(self) -> None:
        self.token = ERRSTATE.set(IGNORE)

    def __exit__(self, *exc: Any) -> None:
        ERRSTATE.reset(self.token)


def quietly(fn: Callable[..., Any]) -> Callable[..., Any]:
    """A kernel that runs with NumPy's floating-point warnings off (NOTE [quiet floating
    point]): for kernels whose inf and NaN flow through matmuls and reductions."""

    @functools.wraps(fn)
    def kernel(*args: Any, **kwargs: Any) -> Any:
        token = ERRSTATE.set(IGNORE)
        try:
            return fn(*args, **kwargs)
        finally:
            ERRSTATE.reset(token)

    return kernel
