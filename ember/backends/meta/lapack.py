"""Meta rules of the factorizations and solves behind ``ember.linalg``: shapes and dtypes
from the checks the CPU kernels share (``ember/ops/native/linalg.py``). ``info`` and
``pivots`` are int32, ``rank`` int64, singular values and eigenvalues real."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np

from ember._shape_only import ShapeOnlyArray
from ember._tensor import Tensor, wrap_shape_only
from ember.dispatch.keys import DispatchKey
from ember.dtypes import promote_types
from ember.library import impl
from ember.ops.native import linalg as plans
from ember.ops.native._define import by_name
from ember.ops.native.linalg_composite import matrix_exp_check
from ember.ops.registry import ops
from ember.return_types import linalg_cholesky_ex as cholesky_ex_t
from ember.return_types import linalg_inv_ex as inv_ex_t
from ember.return_types import linalg_lstsq as lstsq_t
from ember.return_types import linalg_qr as qr_t

aten = ops.aten
Meta = DispatchKey.Meta
_I32, _I64 = np.dtype(np.int32), np.dtype(np.int64)


def _t(shape: Any, dt: Any) -> Tensor:
    return wrap_shape_only(ShapeOnlyArray(tuple(shape), np.dtype(dt)))


@impl(aten._linalg_check_errors.default, Meta)
def _linalg_check_errors(info: Tensor, api_name: str, *, is_matrix: bool) -> None:
    """Nothing to check without values (PyTorch's fake tensors skip it too; the lazy device
    computes ``info`` and runs the cpu kernel: ``ember/lazy/kernels.py``)."""


@impl(aten.linalg_cholesky_ex.default, Meta)
def linalg_cholesky_ex(
    self: Tensor, *, upper: bool = False, check_errors: bool = False
) -> cholesky_ex_t:
    shape, d = plans.cholesky_plan(self.shape, self.dtype, "linalg.cholesky")
    return cholesky_ex_t(_t(shape, d.np), _t(plans.batch_of(shape), _I32))


@impl(aten.cholesky.default, Meta)
def cholesky(self: Tensor, upper: bool = False) -> Tensor:
    shape, d = plans.cholesky_plan(self.shape, self.dtype, "cholesky")
    return _t(shape, d.np)


@impl(aten.linalg_solve_triangular.default, Meta)
def linalg_solve_triangular(
    self: Tensor, B: Tensor, *, upper: bool, left: bool = True, unitriangular: bool = False
) -> Tensor:
    shape = plans.solve_triangular_plan(self.shape, B.shape, self.dtype, B.dtype, left)
    return _t(shape, self.dtype.np)


@impl(aten.linalg_inv_ex.default, Meta)
def linalg_inv_ex(A: Tensor, *, check_errors: bool = False) -> inv_ex_t:
    shape = plans.inv_plan(A.shape, A.dtype)
    return inv_ex_t(_t(shape, A.dtype.np), _t(plans.batch_of(shape), _I32))


@impl(aten._linalg_solve_ex.default, Meta)
def _linalg_solve_ex(
    A: Tensor, B: Tensor, *, left: bool = True, check_errors: bool = False
) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    shape, _ = plans.solve_plan(A.shape, B.shape, A.dtype, B.dtype, left)
    a = tuple(A.shape)
    return (
        _t(shape, A.dtype.np), _t(a, A.dtype.np), _t(a[:-1], _I32), _t(plans.batch_of(a), _I32),
    )  # fmt: skip


@impl(aten._linalg_det.default, Meta)
def _linalg_det(A: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    batch = plans.det_plan(A.shape, A.dtype, "linalg.det")
    a = tuple(A.shape)
    return _t(batch, A.dtype.np), _t(a, A.dtype.np), _t(a[:-1], _I32)


@impl(aten._linalg_slogdet.default, Meta)
def _linalg_slogdet(A: Tensor) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    batch = plans.det_plan(A.shape, A.dtype, "linalg.slogdet")
    a, d = tuple(A.shape), A.dtype
    return (
        _t(batch, d.np), _t(batch, d.to_real().np), _t(a, d.np), _t(a[:-1], _I32),
    )  # fmt: skip


@impl(aten._linalg_svd.default, Meta)
def _linalg_svd(
    A: Tensor, full_matrices: bool = False, compute_uv: bool = True, *, driver: str | None = None
) -> tuple[Tensor, Tensor, Tensor]:
    u, s, v = plans.svd_plan(A.shape, A.dtype, full_matrices, compute_uv, driver)
    d = A.dtype
    return _t(u, d.np), _t(s, d.to_real().np), _t(v, d.np)


@impl(aten.linalg_qr.default, Meta)
def linalg_qr(A: Tensor, mode: str = "reduced") -> qr_t:
    q, r = plans.qr_plan(A.shape, A.dtype, mode)
    return qr_t(_t(q, A.dtype.np), _t(r, A.dtype.np))


@impl(aten._linalg_eigh.default, Meta)
def _linalg_eigh(A: Tensor, UPLO: str = "L", compute_v: bool = True) -> tuple[Tensor, Tensor]:
    w = plans.eigh_plan(A.shape, A.dtype, UPLO)
    v = tuple(A.shape) if compute_v else (0,)
    return _t(w, A.dtype.to_real().np), _t(v, A.dtype.np)


def linalg_pinv(a: SimpleNamespace) -> Tensor:
    plans.pinv_check(a.self.shape, a.self.dtype)
    *batch, m, n = a.self.shape
    return _t((*batch, n, m), a.self.dtype.np)


# the arguments by name (NOTE [geometry functions]): the signature stands in the CPU kernel
_PINV = aten.linalg_pinv.atol_rtol_tensor
impl(_PINV, Meta)(by_name(_PINV, linalg_pinv))


@impl(aten.linalg_lstsq.default, Meta)
def linalg_lstsq(
    self: Tensor, b: Tensor, rcond: float | None = None, *, driver: str | None = None
) -> lstsq_t:
    """The shapes of ``residuals`` and ``rank`` depend on values (full rank or not): as
    PyTorch's meta function, assume the common full-rank case."""
    shape, vector, drv = plans.lstsq_plan(self.shape, b.shape, self.dtype, b.dtype, driver)
    d = self.dtype
    real = d.to_real().np
    *_, m, n = self.shape
    k = 1 if vector else b.shape[-1]
    batch = shape[:-1] if vector else shape[:-2]
    resid = (*batch, k) if m > n and drv != "gelsy" else (0,)
    a_batch = tuple(self.shape[:-2])  # the rank and singular values are A's
    rank = a_batch if drv != "gels" else (0,)
    sv = (*a_batch, min(m, n)) if drv in ("gelsd", "gelss") else (0,)
    return lstsq_t(_t(shape, d.np), _t(resid, real), _t(rank, _I64), _t(sv, real))


@impl(aten.linalg_cross.default, Meta)
def linalg_cross(self: Tensor, other: Tensor, *, dim: int = -1) -> Tensor:
    shape, _ = plans.cross_plan(self.shape, other.shape, self.dtype, other.dtype, dim)
    return _t(shape, promote_types(self.dtype, other.dtype).np)


@impl(aten.linalg_matrix_exp.default, Meta)
def linalg_matrix_exp(self: Tensor) -> Tensor:
    matrix_exp_check(self)
    return wrap_shape_only(ShapeOnlyArray(tuple(self.shape), self._edata.dtype))
