"""``make_tensor``: a tensor of random values of any shape and dtype, for tests.

Values are drawn uniformly from ``[low, high)``, with PyTorch's defaults per dtype (bool
``[0, 2)``, unsigned ``[0, 10)``, signed ``[-9, 10)``, floating and complex ``[-9, 9)``) and
its checks. They come from ember's generator, so they are not PyTorch's values.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

import ember
from ember import dtypes

__all__ = ["make_tensor"]


def _limits(
    dtype: dtypes.dtype,
    low: float | None,
    high: float | None,
    lowest: float,
    highest: float,
    default: tuple[float, float],
) -> tuple[float, float]:
    """``[low, high)`` with defaults filled in, checked, and clamped to what ``dtype`` holds."""
    low = default[0] if low is None else low
    high = default[1] if high is None else high
    floating = dtype.is_floating_point or dtype.is_complex
    if any(isinstance(v, float) and math.isnan(v) for v in (low, high)):
        raise ValueError(f"`low` and `high` cannot be NaN, but got low={low} and high={high}")
    if low == high and floating:
        warnings.warn(
            "Passing `low==high` to `ember.testing.make_tensor` for floating or complex types "
            "is deprecated. Use `ember.full(...)` instead.",
            FutureWarning,
            stacklevel=3,
        )
    elif low >= high:
        raise ValueError(f"`low` must be less than `high`, but got {low} >= {high}")
    elif high < lowest or low >= highest:
        raise ValueError(
            f"The value interval specified by `low` and `high` is [{low}, {high}), "
            f"but {dtype} only supports [{lowest}, {highest})"
        )
    low, high = min(max(low, lowest), highest), min(max(high, lowest), highest)
    if not floating:
        return math.ceil(low), math.ceil(high)
    return low, high


def make_tensor(
    *shape: int | Sequence[int],
    dtype: dtypes.dtype,
    device: Any,
    low: float | None = None,
    high: float | None = None,
    requires_grad: bool = False,
    noncontiguous: bool = False,
    exclude_zero: bool = False,
    memory_format: Any = None,
) -> ember.Tensor:
    """A tensor of ``shape`` with values drawn uniformly from ``[low, high)``.

    >>> t = ember.testing.make_tensor(2, 3, dtype=ember.float32, device="cpu", low=-1, high=1)
    >>> t.shape, bool(((t >= -1) & (t < 1)).all())
    (ember.Size([2, 3]), True)
    """
    if len(shape) == 1 and isinstance(shape[0], Sequence):
        shape = tuple(shape[0])
    size: tuple[int, ...] = tuple(shape)  # type: ignore[arg-type]
    if noncontiguous and memory_format is not None:
        raise ValueError(
            "The parameters `noncontiguous` and `memory_format` are mutually exclusive, "
            f"but got noncontiguous={noncontiguous} and memory_format={memory_format}"
        )
    floating = dtype.is_floating_point or dtype.is_complex
    if requires_grad and not floating:
        raise ValueError(
            "`requires_grad=True` is not supported for boolean and integral dtypes, but got "
            f"dtype={dtype}"
        )
    noncontiguous = noncontiguous and math.prod(size) > 1
    if noncontiguous:  # twice as wide, then every other element of the last dim
        size = (*size[:-1], 2 * size[-1])
    if dtype is dtypes.bool_:
        lo, hi = _limits(dtype, low, high, 0, 2, (0, 2))
        result = ember.randint(int(lo), int(hi), size, dtype=dtype, device=device)
    elif not floating:
        info = np.iinfo(dtype.np)
        top = info.max + (1 if dtype is not dtypes.int64 else 0)
        lo, hi = _limits(dtype, low, high, info.min, top, (-9, 10))
        result = ember.randint(int(lo), int(hi), size, dtype=dtype, device=device)
    else:
        finfo = np.finfo(dtype.np)
        lo, hi = _limits(dtype, low, high, float(finfo.min), float(finfo.max), (-9, 9))
        real = dtype.to_real() if dtype.is_complex else dtype
        parts = (*size, 2) if dtype.is_complex else size
        # half the range, doubled, when the width itself would overflow the dtype
        halve = hi - lo >= float(finfo.max)
        scale = 2 if halve else 1
        values = ember.rand(parts, dtype=real, device=device)
        values = (values * ((hi - lo) / scale) + lo / scale) * scale
        result = ember.empty(size, dtype=dtype, device=device)
        target = ember.view_as_real(result) if dtype.is_complex else result
        target.copy_(values)
    if noncontiguous:
        result = result[..., ::2]
    elif memory_format is not None:
        result = result.clone(memory_format=memory_format)
    if exclude_zero:
        if dtype.is_complex:
            tiny = float(np.finfo(dtype.to_real().np).tiny)
            replacement: Any = complex(tiny, tiny)
        elif dtype.is_floating_point:
            replacement = float(np.finfo(dtype.np).tiny)
        else:
            replacement = 1
        result[result == 0] = replacement
    if requires_grad:
        result.requires_grad_(True)
    return result
