"""What the compiler knows of the values of an fx graph over ndarrays: their
``TensorMetadata`` (from a shape, strides and dtype, or from an array) and whether an op's
lowered value is one array. Lowering (``ember/lazy/lowering.py``) writes them; the tiers
read them.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ember.dtypes import FROM_NUMPY
from ember.fx.passes.shape_prop import TensorMetadata


def tensor_meta(
    shape: tuple[int, ...], strides: tuple[int, ...], dt: np.dtype[Any]
) -> TensorMetadata:
    return TensorMetadata(
        tuple(shape), FROM_NUMPY[np.dtype(dt)], False, tuple(strides), None, False, {}
    )


def array_meta(a: Any) -> TensorMetadata | None:
    if not isinstance(a, np.ndarray):
        return None
    item = a.itemsize
    return tensor_meta(a.shape, tuple(s // item for s in a.strides), a.dtype)


def single_output(op: Any) -> bool:
    """The op's schema returns exactly one tensor (its lowered value is that array)."""
    returns = op._schema.returns
    return (
        len(returns) == 1
        and returns[0].type.base == "Tensor"
        and not returns[0].type.is_list
        and not returns[0].type.optional
    )
