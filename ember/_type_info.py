"""``ember.finfo`` and ``ember.iinfo``: the numeric limits of a dtype, as PyTorch gives them.

>>> ember.finfo(ember.float32).eps
1.1920928955078125e-07
>>> ember.iinfo(ember.int8).min
-128
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ember import dtypes


def _need_dtype(value: Any, name: str) -> dtypes.dtype:
    if not isinstance(value, dtypes.dtype):
        raise TypeError(
            f"{name}(): argument 'type' (position 1) must be ember.dtype, not "
            f"{type(value).__name__}"
        )
    return value


class finfo:  # noqa: N801 - PyTorch's name
    """Limits of a floating point dtype (of a complex one's parts); the default dtype's
    without an argument.

    >>> ember.finfo(ember.float16).max
    65504.0
    """

    __module__ = "ember"
    __hash__ = None  # type: ignore[assignment] - unhashable, as PyTorch's

    def __init__(self, type: dtypes.dtype | None = None) -> None:  # noqa: A002 - PyTorch's name
        d = dtypes.get_default_dtype() if type is None else _need_dtype(type, "finfo")
        if d.category == dtypes.COMPLEX:
            d = d.to_real()
        if d.category != dtypes.FLOATING:
            raise TypeError(
                "ember.finfo() requires a floating point input type. Use ember.iinfo to handle "
                "'ember.finfo'"
            )
        info = np.finfo(d.np) if d.np.kind == "f" else dtypes.load_ml_dtypes().finfo(d.np)
        self.bits: int = d.itemsize * 8
        self.eps: float = float(info.eps)
        self.max: float = float(info.max)
        self.min: float = float(info.min)
        self.tiny: float = float(info.smallest_normal)
        self.smallest_normal: float = self.tiny
        self.resolution: float = 10.0 ** -math.floor(-math.log10(self.eps))
        self.dtype: str = d.name

    def __eq__(self, other: object) -> bool:
        return isinstance(other, finfo) and other.dtype == self.dtype

    def __repr__(self) -> str:
        return (
            f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, "
            f"eps={self.eps:g}, smallest_normal={self.smallest_normal:g}, tiny={self.tiny:g}, "
            f"dtype={self.dtype})"
        )


class iinfo:  # noqa: N801 - PyTorch's name
    """Limits of an integer dtype.

    >>> ember.iinfo(ember.uint8).max
    255
    """

    __module__ = "ember"
    __hash__ = None  # type: ignore[assignment] - unhashable, as PyTorch's

    def __init__(self, type: dtypes.dtype) -> None:  # noqa: A002 - PyTorch's name
        d = _need_dtype(type, "iinfo")
        if d is dtypes.bool_:
            raise TypeError("ember.bool is not supported by ember.iinfo")
        if d.category != dtypes.INTEGRAL:
            raise TypeError(
                "ember.iinfo() requires an integer input type. Use ember.finfo to handle "
                "'ember.iinfo'"
            )
        info = np.iinfo(d.np)
        self.bits: int = d.itemsize * 8
        self.max: int = int(info.max)
        self.min: int = int(info.min)
        self.dtype: str = d.name

    def __eq__(self, other: object) -> bool:
        return isinstance(other, iinfo) and other.dtype == self.dtype

    def __repr__(self) -> str:
        return f"iinfo(min={self.min:g}, max={self.max:g}, dtype={self.dtype})"
