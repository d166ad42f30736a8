"""Meta rules of the LDL factorisation: the CPU kernels' checks and result layouts (NOTE [LDL
factors] in ``ember/ops/native/ldl.py``)."""

from __future__ import annotations

import numpy as np

from ember._shape_only import ShapeOnlyArray
from ember._tensor import Tensor, wrap_shape_only
from ember.dispatch.keys import DispatchKey
from ember.library import impl
from ember.ops.native.ldl import check_ldl_factor, ldl_solve_shape
from ember.ops.registry import ops
from ember.return_types import linalg_ldl_factor_ex as ldl_factor_ex_t

aten = ops.aten
Meta = DispatchKey.Meta


def _column_major(shape: tuple[int, ...], dt: object) -> Tensor:
    """A result of ``shape`` whose matrices are column-major."""
    m, n = shape[-2:]
    strides = [0] * len(shape)
    strides[-2], strides[-1] = 1, max(m, 1)
    step = m * n
    for i in range(len(shape) - 3, -1, -1):
        strides[i] = step
        step *= shape[i]
    return wrap_shape_only(ShapeOnlyArray(shape, dt, tuple(strides), 0))


@impl(aten.linalg_ldl_factor_ex.default, Meta)
def linalg_ldl_factor_ex(
    self: Tensor, *, hermitian: bool = False, check_errors: bool = False
) -> ldl_factor_ex_t:
    check_ldl_factor(self)
    shape = tuple(self.shape)
    return ldl_factor_ex_t(
        _column_major(shape, self._edata.dtype),
        wrap_shape_only(ShapeOnlyArray(shape[:-1], np.dtype(np.int32))),
        wrap_shape_only(ShapeOnlyArray(shape[:-2], np.dtype(np.int32))),
    )


@impl(aten.linalg_ldl_solve.default, Meta)
def linalg_ldl_solve(LD: Tensor, pivots: Tensor, B: Tensor, *, hermitian: bool = False) -> Tensor:
    shape = ldl_solve_shape(LD, pivots, B)
    return _column_major(shape, B._edata.dtype)
