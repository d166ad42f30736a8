"""``ShapeOnlyArray``: what a tensor holds instead of an ndarray when it has no data.

Meta tensors, and later lazy tensors and wrapper subclasses, keep shape, strides (in bytes,
as NumPy does), storage offset and dtype here. It answers the attributes ``Tensor`` reads
from an ndarray, so tensor properties need no branch on the device; anything that would
read data raises instead.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ember._array_shape import ArrayShape
from ember.device import device


class DataDependentShapeError(RuntimeError):
    """A Meta rule cannot give the result's shape: it depends on values (a boolean mask
    index). Devices that record instead of computing (lazy) run such an op eagerly."""


def contiguous_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    """Row-major strides in elements (PyTorch's: size-1 and empty dims still get a stride)."""
    if len(shape) == 1:
        return (1,)
    strides = []
    acc = 1
    for n in reversed(shape):
        strides.append(acc)
        acc *= n if n > 1 else 1
    return tuple(reversed(strides))


#: (shape, item size) -> contiguous strides in bytes: wrapper subclasses and meta results
#: are made once per op, mostly of a few shapes
_CONTIGUOUS: dict[tuple[tuple[int, ...], int], tuple[int, ...]] = {}


def _contiguous_bytes(shape: tuple[int, ...], size: int) -> tuple[int, ...]:
    """Contiguous strides in bytes of ``shape`` for items of ``size`` bytes, cached."""
    key = (shape, size)
    found = _CONTIGUOUS.get(key)
    if found is None:
        if len(_CONTIGUOUS) > 4096:  # a bound, for programs of many shapes
            _CONTIGUOUS.clear()
        found = _CONTIGUOUS[key] = tuple([s * size for s in contiguous_strides(shape)])
    return found


class ShapeOnlyArray(ArrayShape):
    """Shape, strides and dtype without storage. Strides are in bytes, like ``ndarray``'s."""

    __slots__ = ("shape", "strides", "dtype", "offset", "device", "__weakref__")

    #: which metadata a wrapper subclass's handler is asked for (NOTE [custom metadata] in
    #: ember/_wrapper_metadata.py): none here; sizes_policy 1 is "strides", 2 "sizes"
    sizes_policy = 0
    custom_device = False
    custom_layout = False

    def __init__(
        self,
        shape: tuple[int, ...],
        dtype: np.dtype[Any],
        strides: tuple[int, ...] | None = None,
        offset: int = 0,
        dev: device | None = None,
    ) -> None:
        shape = self.shape = tuple(map(int, shape))
        dt = self.dtype = dtype if isinstance(dtype, np.dtype) else np.dtype(dtype)
        size = dt.itemsize
        if strides is None:
            self.strides = _contiguous_bytes(shape, size)
        else:
            self.strides = tuple([int(s) * size for s in strides])
        self.offset = offset
        self.device = dev if dev is not None else device("meta")

    @classmethod
    def contiguous(cls, shape: tuple[int, ...], dtype: np.dtype[Any], dev: device) -> Any:
        """A contiguous array at offset 0, for callers whose ``shape`` is a tuple of ints
        and ``dtype`` an ``np.dtype`` already (``__init__`` without its conversions).

        >>> from ember._shape_only import ShapeOnlyArray
        >>> meta = ember.device("meta")
        >>> ShapeOnlyArray.contiguous((2, 3), np.dtype(np.float32), meta).strides
        (12, 4)
        """
        arr = object.__new__(cls)
        arr.shape, arr.dtype, arr.offset, arr.device = shape, dtype, 0, dev
        arr.strides = _contiguous_bytes(shape, dtype.itemsize)
        return arr

    @property
    def element_strides(self) -> tuple[int, ...]:
        return tuple(s // self.dtype.itemsize for s in self.strides)

    def __array__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(
            f"Cannot access data of a tensor on '{self.device}' (shape {self.shape}): it has no "
            "data. Run the computation on the cpu device to get values."
        )

    def __repr__(self) -> str:
        return f"ShapeOnlyArray(shape={self.shape}, dtype={self.dtype}, device={self.device})"
