"""CPU kernels of the LU factorisation (NOTE [LU factors] in ``ember/ops/native/lu.py``):
LAPACK's getrf and getrs through SciPy, one matrix at a time over the batch."""

from __future__ import annotations

import math

import numpy as np

from ember.backends.cpu._util import Tensor, quiet_block, wrap
from ember.backends.cpu.lapack import _lapack_fn, _matrices, check_info
from ember.dispatch.keys import DispatchKey
from ember.library import impl
from ember.ops.native.lu import (
    lu_factor_plan,
    lu_solve_plan,
    lu_unpack_plan,
)
from ember.ops.registry import ops
from ember.return_types import linalg_lu_factor_ex as lu_factor_ex_t
from ember.return_types import lu_unpack as lu_unpack_t

aten = ops.aten
CPU = DispatchKey.CPU
_I32 = np.int32


@impl(aten.linalg_lu_factor_ex.default, CPU)
def linalg_lu_factor_ex(
    A: Tensor, *, pivot: bool = True, check_errors: bool = False
) -> lu_factor_ex_t:
    """getrf of each matrix: packed factors, 1-based pivots, info codes."""
    piv_shape, k = lu_factor_plan(A, pivot, "linalg.lu_factor_ex")
    a = A._edata
    mats = _matrices(a)
    lu_t = np.empty((len(mats), a.shape[-1], a.shape[-2]), a.dtype)  # each matrix transposed
    piv = np.empty((len(mats), k), _I32)
    info = np.zeros(len(mats), _I32)
    if a.size:
        getrf = _lapack_fn("getrf", a.dtype)
        with quiet_block():
            for i, m in enumerate(mats):
                f, p, info[i] = getrf(m)
                lu_t[i] = f.T
                piv[i] = p[:k] + 1
    else:
        piv[...] = np.arange(1, k + 1, dtype=_I32)
    lu = np.swapaxes(lu_t, -1, -2)  # column-major matrices, as PyTorch lays LU out
    if check_errors:
        check_info(info, "torch.linalg.lu_factor_ex", a.ndim == 2)
    batch = a.shape[:-2]
    return lu_factor_ex_t(
        wrap(lu.reshape(a.shape)), wrap(piv.reshape(piv_shape)), wrap(info.reshape(batch))
    )


def permutation(piv: np.ndarray, m: int) -> np.ndarray:
    """The row order ``perm`` with ``(P^T A) = A[perm]`` for 1-based LAPACK pivots (...,
    k): the swaps applied in order."""
    batch, k = piv.shape[:-1], piv.shape[-1]
    flat = piv.reshape(math.prod(batch), k).astype(np.int64) - 1
    perm = np.broadcast_to(np.arange(m), (len(flat), m)).copy()
    rows = np.arange(len(flat))
    for i in range(k):
        j = flat[:, i]
        a, b = perm[rows, i].copy(), perm[rows, j].copy()
        perm[rows, i], perm[rows, j] = b, a
    return perm.reshape((*batch, m))


@impl(aten.lu_unpack.default, CPU)
def lu_unpack(
    LU_data: Tensor, LU_pivots: Tensor, unpack_data: bool = True, unpack_pivots: bool = True
) -> lu_unpack_t:
    """``P``, ``L`` and ``U`` of packed factors (empty when not asked for)."""
    m, n, k = lu_unpack_plan(LU_data, LU_pivots)
    lu = LU_data._edata
    empty = np.zeros((0,), lu.dtype)
    if unpack_data:
        L = np.tril(lu[..., :, :k], -1)
        idx = np.arange(k)
        L[..., idx, idx] = 1
        U = np.ascontiguousarray(np.triu(lu[..., :k, :]))
    else:
        L = U = empty
    if unpack_pivots:
        perm = permutation(LU_pivots._edata, m)
        eye = np.eye(m, dtype=lu.dtype)
        P = np.ascontiguousarray(np.swapaxes(eye[perm], -1, -2))
    else:
        P = empty
    return lu_unpack_t(wrap(P), wrap(np.ascontiguousarray(L)), wrap(U))


@impl(aten.linalg_lu_solve.default, CPU)
def linalg_lu_solve(
    LU: Tensor, pivots: Tensor, B: Tensor, *, left: bool = True, adjoint: bool = False
) -> Tensor:
    """getrs with the packed factors: ``A X = B``, ``A^H X = B`` (``adjoint``), and
    ``X A = B`` / ``X A^H = B`` (``left=False``) as the adjoint system of ``B^H``."""
    shape = lu_solve_plan(LU, pivots, B, left)
    lu, piv, b = LU._edata, pivots._edata, B._edata
    complex_ = lu.dtype.kind == "c"
    if not left:  # X A = B  <=>  A^H X^H = B^H
        b = np.swapaxes(b.conj() if complex_ else b, -1, -2)
        adjoint = not adjoint
    n = lu.shape[-1]
    batch = shape[:-2]
    rhs_shape = (*batch, n, b.shape[-1])
    out = np.empty(rhs_shape, lu.dtype)
    if out.size:
        lus = _matrices(np.broadcast_to(lu, (*batch, n, n)))
        pivs = np.broadcast_to(piv, (*batch, n)).reshape(-1, n) - 1
        rhs = _matrices(np.broadcast_to(b, rhs_shape))
        flat = _matrices(out)
        getrs = _lapack_fn("getrs", lu.dtype)
        trans = (2 if complex_ else 1) if adjoint else 0
        with quiet_block():
            for i in range(len(rhs)):
                flat[i] = getrs(lus[i], pivs[i], rhs[i], trans=trans)[0]
    if not left:
        out = np.swapaxes(out.conj() if complex_ else out, -1, -2)
    return wrap(np.ascontiguousarray(out.reshape(shape)))
