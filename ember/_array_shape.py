"""``ArrayShape``: the NumPy-array properties that follow from an array stand-in's ``shape``
and ``dtype`` (``ndim``, ``size``, ``itemsize``), shared by the arrays without data:
``ShapeOnlyArray`` (meta tensors) and ``SparseCOO`` (sparse tensors)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np


class ArrayShape:
    """``ndim``, ``size`` and ``itemsize`` from ``self.shape`` and ``self.dtype``, as a NumPy
    array has them.

    >>> from ember._shape_only import ShapeOnlyArray
    >>> a = ShapeOnlyArray((2, 3), np.dtype(np.float32))
    >>> a.ndim, a.size, a.itemsize
    (2, 6, 4)
    """

    __slots__ = ()
    shape: tuple[int, ...]
    dtype: np.dtype[Any]

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def itemsize(self) -> int:
        return int(self.dtype.itemsize)
