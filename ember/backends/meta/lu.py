"""Meta rules of the LU factorisation: the CPU kernels' checks and result shapes."""

from __future__ import annotations

from ember._shape_only import ShapeOnlyArray
from ember._tensor import Tensor, wrap_shape_only
from ember.dispatch.keys import DispatchKey
from ember.library import impl
from ember.ops import strides as S
from ember.ops.native.lu import lu_factor_plan, lu_solve_plan, lu_unpack_plan
from ember.ops.registry import ops
from ember.return_types import linalg_lu_factor_ex as lu_factor_ex_t
from ember.return_types import lu_unpack as lu_unpack_t

aten = ops.aten
Meta = DispatchKey.Meta
_I32 = ShapeOnlyArray((), "int32").dtype


def _t(shape: tuple[int, ...], dt: object) -> Tensor:
    return wrap_shape_only(ShapeOnlyArray(shape, dt))


@impl(aten.linalg_lu_factor_ex.default, Meta)
def linalg_lu_factor_ex(
    A: Tensor, *, pivot: bool = True, check_errors: bool = False
) -> lu_factor_ex_t:
    piv_shape, _ = lu_factor_plan(A, pivot, "linalg.lu_factor_ex")
    d = A._edata.dtype
    m, n = A.shape[-2], A.shape[-1]
    size = max(m, 1) * max(n, 1)
    batch = tuple(b * size for b in S.contiguous(tuple(A.shape[:-2])))
    strides = (*batch, 1, max(m, 1))  # column-major matrices, as PyTorch's
    LU = wrap_shape_only(ShapeOnlyArray(tuple(A.shape), d, strides))
    return lu_factor_ex_t(LU, _t(piv_shape, _I32), _t(tuple(A.shape[:-2]), _I32))


@impl(aten.lu_unpack.default, Meta)
def lu_unpack(
    LU_data: Tensor, LU_pivots: Tensor, unpack_data: bool = True, unpack_pivots: bool = True
) -> lu_unpack_t:
    m, n, k = lu_unpack_plan(LU_data, LU_pivots)
    d, batch = LU_data._edata.dtype, tuple(LU_data.shape[:-2])
    P = _t((*batch, m, m), d) if unpack_pivots else _t((0,), d)
    L = _t((*batch, m, k), d) if unpack_data else _t((0,), d)
    U = _t((*batch, k, n), d) if unpack_data else _t((0,), d)
    return lu_unpack_t(P, L, U)


@impl(aten.linalg_lu_solve.default, Meta)
def linalg_lu_solve(
    LU: Tensor, pivots: Tensor, B: Tensor, *, left: bool = True, adjoint: bool = False
) -> Tensor:
    return _t(lu_solve_plan(LU, pivots, B, left), LU._edata.dtype)
