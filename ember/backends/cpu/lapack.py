"""CPU kernels of the factorizations and solves behind ``ember.linalg``: NumPy's batched
``numpy.linalg`` where it returns what PyTorch returns, SciPy's LAPACK and BLAS wrappers (one
call per matrix of the batch) where PyTorch returns what NumPy keeps to itself (LU factors
and pivots, LAPACK's ``info`` codes, the partial factor of a failed Cholesky) or runs a
routine NumPy lacks (``trsm``). The checks are shared with the Meta rules
(``ember/ops/native/linalg.py``).

# NOTE [linalg errors]
PyTorch's ``*_ex`` ops return LAPACK's ``info`` per matrix instead of raising; the public
functions (``linalg.inv``, ``linalg.cholesky``, ``linalg.solve``) are the ``_ex`` op
followed by ``_linalg_check_errors``, which reads ``info`` and raises ``LinAlgError`` (a
``RuntimeError``) with PyTorch's message: the singular pivot, the leading minor that is not
positive-definite, and the batch element. A NumPy call that raises ``LinAlgError`` for the
whole batch is redone one matrix at a time with SciPy's LAPACK wrappers, which give each
matrix's ``info`` and the values PyTorch's kernels leave (inf and NaN from a zero pivot).
"""

from __future__ import annotations

import functools
import math
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ember.backends.cpu._util import Tensor, quiet_block, wrap
from ember.dispatch.keys import DispatchKey
from ember.dtypes import promote_types
from ember.library import impl
from ember.ops.native.linalg import (
    LinAlgError,
    batch_of,
    cholesky_plan,
    cross_plan,
    det_plan,
    eigh_plan,
    inv_plan,
    lstsq_plan,
    pinv_check,
    qr_plan,
    solve_plan,
    solve_triangular_plan,
    svd_plan,
)
from ember.ops.native.linalg_composite import matrix_exp_check
from ember.ops.registry import ops
from ember.ops.shapes import broadcast_shapes
from ember.return_types import linalg_cholesky_ex as cholesky_ex_t
from ember.return_types import linalg_inv_ex as inv_ex_t
from ember.return_types import linalg_lstsq as lstsq_t
from ember.return_types import linalg_qr as qr_t

aten = ops.aten
CPU = DispatchKey.CPU
_I32 = np.dtype(np.int32)
_LinAlgErrorNP = np.linalg.LinAlgError


@functools.cache
def _lapack_fn(name: str, dt: np.dtype[Any]) -> Callable[..., Any]:
    # deferred: importing scipy.linalg costs about as much as the rest of ember's import,
    # and most programs never factor a matrix
    from scipy.linalg import lapack

    return lapack.get_lapack_funcs(name, dtype=dt)  # type: ignore[no-any-return]


def _expm(a: np.ndarray) -> np.ndarray:
    from scipy.linalg import expm  # deferred: see _lapack_fn

    return expm(a)  # type: ignore[no-any-return]


@functools.cache
def _blas_fn(name: str, dt: np.dtype[Any]) -> Callable[..., Any]:
    from scipy.linalg import blas  # deferred: see _lapack_fn

    return blas.get_blas_funcs(name, dtype=dt)  # type: ignore[no-any-return]


def _mH(a: np.ndarray) -> np.ndarray:
    """The conjugate transpose of each matrix (a view for real arrays)."""
    t = np.swapaxes(a, -1, -2)
    return t.conj() if a.dtype.kind == "c" else t


def _matrices(a: np.ndarray) -> np.ndarray:
    """``a`` as a stack of matrices, ``(batch, m, n)``."""
    return a.reshape((math.prod(a.shape[:-2]), *a.shape[-2:]))


# --------------------------------------------------------------------------- errors

_NAN_CHECKED = ("svd",)


def check_info(info: np.ndarray, api_name: str, is_matrix: bool) -> None:
    """Raise PyTorch's error for the first failed matrix in ``info`` (NOTE [linalg errors]).

    >>> from ember.backends.cpu.lapack import check_info
    >>> check_info(np.zeros(3, np.int32), "linalg.inv", False)
    >>> check_info(np.array([0, 2], np.int32), "linalg.inv", False)
    Traceback (most recent call last):
      ...
    ember.linalg.LinAlgError: linalg.inv: (Batch element 1): The diagonal element 2 is zero, \
the inversion could not be completed because the input matrix is singular.
    """
    flat = info.reshape(-1)
    if not flat.any():
        return
    neg = np.flatnonzero(flat < 0)
    if neg.size:
        raise RuntimeError(
            f"{api_name}: Argument {-int(flat[neg[0]])} has illegal value. Most certainly there "
            "is a bug in the implementation calling the backend library."
        )
    i = int(np.flatnonzero(flat > 0)[0])
    code = int(flat[i])
    where = "" if is_matrix else f"(Batch element {i}): "
    if "lu_factor" in api_name:  # (the factors exist; a solve with them would divide by 0)
        what = (
            f"U[{code},{code}] is zero and using it on lu_solve would result in a division by "
            "zero. If you still want to perform the factorization, consider calling "
            "linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)"
        )
    elif "inv" in api_name:
        what = (
            f"The diagonal element {code} is zero, the inversion could not be completed "
            "because the input matrix is singular."
        )
    elif "solve" in api_name:
        what = "The solver failed because the input matrix is singular."
    elif "cholesky" in api_name:
        what = (
            "The factorization could not be completed because the input is not "
            f"positive-definite (the leading minor of order {code} is not positive-definite)."
        )
    elif "svd" in api_name:
        what = (
            "The algorithm failed to converge because the input matrix is ill-conditioned "
            f"or has too many repeated singular values (error code: {code})."
        )
    elif "eig" in api_name:
        what = (
            "The algorithm failed to converge because the input matrix is ill-conditioned "
            f"or has too many repeated eigenvalues (error code: {code})."
        )
    elif "lstsq" in api_name:
        what = (
            "The least squares solution could not be computed because the input matrix does "
            f"not have full rank (error code: {code})."
        )
    else:
        what = f"LAPACK reported error code {code}."
    raise LinAlgError(f"{api_name}: {where}{what}")


@impl(aten._linalg_check_errors.default, CPU)
def _linalg_check_errors(info: Tensor, api_name: str, *, is_matrix: bool) -> None:
    check_info(info._edata, api_name, is_matrix)


# --------------------------------------------------------------------------- cholesky


def _cholesky(a: np.ndarray, upper: bool) -> tuple[np.ndarray, np.ndarray]:
    """The Cholesky factor of each matrix (reading only its lower triangle, or its upper one
    when ``upper``) and LAPACK's info per matrix."""
    batch = batch_of(a.shape)
    if a.size == 0:
        return np.zeros(a.shape, a.dtype), np.zeros(batch, _I32)
    x = _mH(a) if upper else a  # the upper triangle of A is the lower one of A^H
    try:
        with quiet_block():
            factor = np.linalg.cholesky(x)
        info = np.zeros(batch, _I32)
    except _LinAlgErrorNP:
        factor, info = _potrf_each(x)
    else:
        info = _nan_pivots(factor, info)
    if upper:
        factor = np.ascontiguousarray(_mH(factor))
    return factor, info


def _nan_pivots(factor: np.ndarray, info: np.ndarray) -> np.ndarray:
    """OpenBLAS's potrf passes a NaN pivot on where MKL's (PyTorch's) stops: report the first
    NaN on the factor's diagonal as the leading minor that is not positive-definite."""
    nan = np.isnan(np.diagonal(factor, axis1=-2, axis2=-1))
    if not nan.any():
        return info
    first = np.argmax(nan, axis=-1).astype(_I32) + 1
    return np.where(nan.any(-1), first, info).astype(_I32)


def _potrf_each(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """LAPACK's potrf matrix by matrix: the factor as far as it got (PyTorch's values) and
    the order of the first leading minor that is not positive-definite."""
    mats = _matrices(x)
    potrf = _lapack_fn("potrf", x.dtype)
    out = np.empty(mats.shape, x.dtype)
    info = np.empty(len(mats), _I32)
    with quiet_block():
        for i, m in enumerate(mats):
            out[i], info[i] = potrf(m, lower=1, clean=1)
    return out.reshape(x.shape), info.reshape(batch_of(x.shape))


@impl(aten.linalg_cholesky_ex.default, CPU)
def linalg_cholesky_ex(
    self: Tensor, *, upper: bool = False, check_errors: bool = False
) -> cholesky_ex_t:
    cholesky_plan(self.shape, self.dtype, "linalg.cholesky")
    factor, info = _cholesky(self._edata, upper)
    if check_errors:
        check_info(info, "linalg.cholesky_ex", self.ndim == 2)
    return cholesky_ex_t(wrap(factor), wrap(info))


_warned_cholesky = [False]


@impl(aten.cholesky.default, CPU)
def cholesky(self: Tensor, upper: bool = False) -> Tensor:
    if not _warned_cholesky[0]:
        _warned_cholesky[0] = True
        warnings.warn(
            "torch.cholesky is deprecated in favor of torch.linalg.cholesky and will be "
            "removed in a future PyTorch release: use ember.linalg.cholesky(A), or "
            "ember.linalg.cholesky(A).mH for upper=True",
            UserWarning,
            stacklevel=2,
        )
    cholesky_plan(self.shape, self.dtype, "cholesky")
    factor, info = _cholesky(self._edata, upper)
    check_info(info, "cholesky", self.ndim == 2)
    return wrap(factor)


# --------------------------------------------------------------------------- triangular solve


@impl(aten.linalg_solve_triangular.default, CPU)
def linalg_solve_triangular(
    self: Tensor, B: Tensor, *, upper: bool, left: bool = True, unitriangular: bool = False
) -> Tensor:
    """BLAS's trsm per matrix, as PyTorch: no singularity check, so a zero on the diagonal
    gives inf and NaN, and only the named triangle of ``self`` is read."""
    shape = solve_triangular_plan(self.shape, B.shape, self.dtype, B.dtype, left)
    a, b = self._edata, B._edata
    dt = a.dtype
    if b.dtype != dt:  # B is cast to A's dtype, as PyTorch does (a complex B loses its imag)
        b = (b.real if b.dtype.kind == "c" and dt.kind != "c" else b).astype(dt)
    if math.prod(shape) == 0:
        return wrap(np.zeros(shape, dt))
    batch = shape[:-2]
    n = a.shape[-1]
    mats = _matrices(np.broadcast_to(a, (*batch, n, n)))
    rhs = _matrices(np.broadcast_to(b, shape))
    out = np.empty(rhs.shape, dt)
    trsm = _blas_fn("trsm", dt)
    side, lower, diag = (0 if left else 1), (0 if upper else 1), (1 if unitriangular else 0)
    with quiet_block():
        for i in range(len(rhs)):
            out[i] = trsm(1.0, mats[i], rhs[i], side=side, lower=lower, diag=diag)
    return wrap(out.reshape(shape))


# --------------------------------------------------------------------------- LU: inv, solve, det


def _lu_each(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """LAPACK's getrf per matrix: the packed LU factors (each matrix column-major, as
    PyTorch lays them out and LAPACK takes them back without a copy), PyTorch's 1-based
    int32 pivots and the info codes (the first zero pivot, 1-based)."""
    batch, n = batch_of(x.shape), x.shape[-1]
    mats = _matrices(x)
    count = len(mats)
    piv = np.empty((count, n), _I32)
    info = np.zeros(count, _I32)
    getrf = _lapack_fn("getrf", x.dtype)
    if count == 1 and n:  # the common case: getrf's own column-major result, no copy
        with quiet_block():
            lu, p, info[0] = getrf(mats[0])
        piv[0] = p + 1
        return lu.reshape(x.shape), piv.reshape((*batch, n)), info.reshape(batch)
    lu_t = np.empty(mats.shape, x.dtype)  # row i holds matrix i's factors transposed
    if n:
        with quiet_block():
            for i, m in enumerate(mats):
                f, p, info[i] = getrf(m)
                lu_t[i] = f.T
                piv[i] = p + 1
    lu = np.swapaxes(lu_t, -1, -2).reshape(x.shape)
    return lu, piv.reshape((*batch, n)), info.reshape(batch)


def _lu_solve(lu: np.ndarray, piv: np.ndarray, b: np.ndarray, trans: int) -> np.ndarray:
    """Solve with packed LU factors (getrs per matrix; broadcast batch dims): ``trans`` 0
    solves ``A X = B``, 1 ``A^T X = B``."""
    batch = broadcast_shapes(batch_of(lu.shape), batch_of(b.shape), op="linalg.solve")
    n, k = lu.shape[-1], b.shape[-1]
    out = np.empty((*batch, n, k), lu.dtype)
    if out.size == 0:
        return np.zeros(out.shape, lu.dtype)
    lus = _matrices(np.broadcast_to(lu, (*batch, n, n)))
    pivs = np.broadcast_to(piv, (*batch, n)).reshape(-1, n) - 1
    rhs = _matrices(np.broadcast_to(b, (*batch, n, k)))
    flat = _matrices(out)
    getrs = _lapack_fn("getrs", lu.dtype)
    with quiet_block():
        for i in range(len(rhs)):
            flat[i] = getrs(lus[i], pivs[i], rhs[i], trans=trans)[0]
    return out


@impl(aten.linalg_inv_ex.default, CPU)
def linalg_inv_ex(A: Tensor, *, check_errors: bool = False) -> inv_ex_t:
    inv_plan(A.shape, A.dtype)
    a = A._edata
    batch = batch_of(a.shape)
    if a.size == 0:
        inverse, info = np.zeros(a.shape, a.dtype), np.zeros(batch, _I32)
    else:
        try:
            with quiet_block():
                inverse = np.linalg.inv(a)
            info = np.zeros(batch, _I32)
        except _LinAlgErrorNP:  # a singular matrix: per matrix, PyTorch's info and values
            lu, piv, info = _lu_each(a)
            eye = np.broadcast_to(np.eye(a.shape[-1], dtype=a.dtype), a.shape)
            inverse = _lu_solve(lu, piv, eye, 0)
    if check_errors:
        check_info(info, "linalg.inv_ex", a.ndim == 2)
    return inv_ex_t(wrap(np.ascontiguousarray(inverse)), wrap(info))


@impl(aten._linalg_solve_ex.default, CPU)
def _linalg_solve_ex(
    A: Tensor, B: Tensor, *, left: bool = True, check_errors: bool = False
) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """getrf of ``A`` then getrs; ``X A = B`` is solved as ``A^T X^T = B^T`` with the same
    factors, as PyTorch does (so ``LU`` is always ``A``'s)."""
    shape, vector = solve_plan(A.shape, B.shape, A.dtype, B.dtype, left)
    a, b = A._edata, B._edata
    lu, piv, info = _lu_each(a)
    rhs = b[..., None] if vector else b
    if not left:
        rhs = np.swapaxes(rhs, -1, -2)
    x = _lu_solve(lu, piv, rhs, 0 if left else 1)
    if not left:
        x = np.swapaxes(x, -1, -2)
    x = np.ascontiguousarray(x[..., 0] if vector else x)
    if check_errors:
        check_info(info, "torch.linalg.solve_ex", a.ndim == 2)
    return wrap(x.reshape(shape)), wrap(lu), wrap(piv), wrap(info)


def _det_lu(A: Tensor, api: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The LU factors ``_linalg_det`` and ``_linalg_slogdet`` return: of ``A^T`` for a real
    contiguous ``A`` (no copy; the same determinant), else of ``A``, as PyTorch."""
    det_plan(A.shape, A.dtype, api)
    a = A._edata
    x = np.swapaxes(a, -1, -2) if a.dtype.kind == "f" and A.is_contiguous() else a
    return _lu_each(x)


def _permutation_sign(piv: np.ndarray, dt: np.dtype[Any]) -> np.ndarray:
    """(-1) to the number of row swaps the pivots record."""
    n = piv.shape[-1]
    swaps = np.count_nonzero(piv != np.arange(1, n + 1, dtype=piv.dtype), axis=-1)
    return np.where(swaps % 2 == 1, -1, 1).astype(dt)


@impl(aten._linalg_det.default, CPU)
def _linalg_det(A: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    lu, piv, _ = _det_lu(A, "linalg.det")
    diag = np.diagonal(lu, axis1=-2, axis2=-1)
    with quiet_block():
        det = np.asarray(np.prod(diag, axis=-1) * _permutation_sign(piv, lu.dtype), lu.dtype)
    return wrap(det), wrap(lu), wrap(piv)


@impl(aten._linalg_slogdet.default, CPU)
def _linalg_slogdet(A: Tensor) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    lu, piv, _ = _det_lu(A, "linalg.slogdet")
    diag = np.diagonal(lu, axis1=-2, axis2=-1)
    with quiet_block():
        mag = np.abs(diag)
        unit = np.where(mag == 0, 0, diag / np.where(mag == 0, 1, mag))
        sign = np.asarray(np.prod(unit, axis=-1) * _permutation_sign(piv, lu.dtype), lu.dtype)
        logabs = np.asarray(np.sum(np.log(mag), axis=-1), mag.dtype)
    return wrap(sign), wrap(logabs), wrap(lu), wrap(piv)


# --------------------------------------------------------------------------- svd, qr, eigh


def svd(a: np.ndarray, full_matrices: bool, compute_uv: bool = True) -> Any:
    """``np.linalg.svd`` (gesdd), failing as PyTorch does: ``LinAlgError`` naming non-finite
    values, or the failed convergence."""
    try:
        with quiet_block():
            return np.linalg.svd(a, full_matrices=full_matrices, compute_uv=compute_uv)
    except _LinAlgErrorNP:
        if not np.isfinite(a).all():
            raise LinAlgError(
                "linalg.svd: The algorithm failed to converge because the input matrix "
                "contained non-finite values."
            ) from None
        raise LinAlgError(
            "linalg.svd: The algorithm failed to converge because the input matrix is "
            "ill-conditioned or has too many repeated singular values"
        ) from None


def eigh(a: np.ndarray, uplo: str, compute_v: bool = True) -> Any:
    """``np.linalg.eigh`` (syevd/heevd), failing as PyTorch does: ``LinAlgError`` with the
    error code of the first matrix that did not converge."""
    try:
        with quiet_block():
            if compute_v:
                return np.linalg.eigh(a, UPLO=uplo)
            return np.linalg.eigvalsh(a, UPLO=uplo)
    except _LinAlgErrorNP:
        _, info = _syevd_each(a, uplo)
        check_info(info, "linalg.eigh", a.ndim == 2)
        raise LinAlgError(
            "linalg.eigh: The algorithm failed to converge because the input matrix is "
            "ill-conditioned or has too many repeated eigenvalues"
        ) from None


@impl(aten._linalg_svd.default, CPU)
def _linalg_svd(
    A: Tensor, full_matrices: bool = False, compute_uv: bool = True, *, driver: str | None = None
) -> tuple[Tensor, Tensor, Tensor]:
    ushape, sshape, vshape = svd_plan(A.shape, A.dtype, full_matrices, compute_uv, driver)
    a = A._edata
    real = A.dtype.to_real().np
    if a.size == 0:
        u = _eye_like(ushape, a.dtype) if compute_uv else np.zeros((0,), a.dtype)
        v = _eye_like(vshape, a.dtype) if compute_uv else np.zeros((0,), a.dtype)
        return wrap(u), wrap(np.zeros(sshape, real)), wrap(v)
    if compute_uv:
        u, s, vh = svd(a, full_matrices)
    else:
        s = svd(a, False, compute_uv=False)
    s = np.ascontiguousarray(s, real)
    if not compute_uv:
        return wrap(np.zeros((0,), a.dtype)), wrap(s), wrap(np.zeros((0,), a.dtype))
    return wrap(np.ascontiguousarray(u)), wrap(s), wrap(np.ascontiguousarray(vh))


def _eye_like(shape: tuple[int, ...], dt: np.dtype[Any]) -> np.ndarray:
    """Identity matrices of ``shape`` (what PyTorch gives for the square factors of an empty
    matrix)."""
    out = np.zeros(shape, dt)
    if len(shape) >= 2 and shape[-1] == shape[-2] and out.size:
        idx = np.arange(shape[-1])
        out[..., idx, idx] = 1
    return out


@impl(aten.linalg_qr.default, CPU)
def linalg_qr(A: Tensor, mode: str = "reduced") -> qr_t:
    qshape, rshape = qr_plan(A.shape, A.dtype, mode)
    a = A._edata
    if a.size == 0:
        q = _eye_like(qshape, a.dtype) if mode != "r" else np.zeros((0,), a.dtype)
        return qr_t(wrap(q), wrap(np.zeros(rshape, a.dtype)))
    with quiet_block():
        if mode == "r":
            r = np.linalg.qr(a, mode="r")
            return qr_t(wrap(np.zeros((0,), a.dtype)), wrap(np.ascontiguousarray(r)))
        q, r = np.linalg.qr(a, mode=mode)
    return qr_t(wrap(np.ascontiguousarray(q)), wrap(np.ascontiguousarray(r)))


@impl(aten._linalg_eigh.default, CPU)
def _linalg_eigh(A: Tensor, UPLO: str = "L", compute_v: bool = True) -> tuple[Tensor, Tensor]:
    wshape = eigh_plan(A.shape, A.dtype, UPLO)
    a = A._edata
    real = A.dtype.to_real().np
    if a.size == 0:
        v = np.zeros(a.shape if compute_v else (0,), a.dtype)
        return wrap(np.zeros(wshape, real)), wrap(v)
    uplo = UPLO.upper()
    if compute_v:
        w, v = eigh(a, uplo)
    else:
        w, v = eigh(a, uplo, compute_v=False), np.zeros((0,), a.dtype)
    return wrap(np.ascontiguousarray(w, real)), wrap(np.ascontiguousarray(v))


def _syevd_each(a: np.ndarray, uplo: str) -> tuple[np.ndarray, np.ndarray]:
    """LAPACK's syevd/heevd per matrix, for its info codes."""
    mats = _matrices(a)
    name = "heevd" if a.dtype.kind == "c" else "syevd"
    fn = _lapack_fn(name, a.dtype)
    info = np.empty(len(mats), _I32)
    w = np.empty((len(mats), a.shape[-1]), a.real.dtype)
    with quiet_block():
        for i, m in enumerate(mats):
            w[i], _, info[i] = fn(m, lower=1 if uplo == "L" else 0)
    return w, info.reshape(batch_of(a.shape))


# --------------------------------------------------------------------------- pinv, lstsq


def pinv_tolerances(
    s_max: np.ndarray, atol: Any, rtol: Any, shape: tuple[int, ...], dt: np.dtype[Any]
) -> np.ndarray:
    """``max(atol, rtol * s_max)`` per matrix, with PyTorch's defaults: ``rtol`` is
    ``eps * max(m, n)`` when neither is given, else 0 when only ``atol`` is."""
    real = np.finfo(dt).dtype
    a = np.zeros((), real) if atol is None else np.asarray(atol, real)
    if rtol is None:
        r = np.asarray(
            0.0 if atol is not None else np.finfo(dt).eps * max(shape[-2], shape[-1]), real
        )
    else:
        r = np.asarray(rtol, real)
    return np.maximum(a[..., None] if a.ndim else a, (r[..., None] if r.ndim else r) * s_max)


@impl(aten.linalg_pinv.atol_rtol_tensor, CPU)
def linalg_pinv(
    self: Tensor,
    *,
    atol: Tensor | None = None,
    rtol: Tensor | None = None,
    hermitian: bool = False,
) -> Tensor:
    """``V diag(1/s) U^H`` over the singular values above the tolerance (an
    eigendecomposition for ``hermitian``), as PyTorch computes it."""
    pinv_check(self.shape, self.dtype)
    a = self._edata
    dt = a.dtype
    *batch, m, n = a.shape
    if a.size == 0:
        return wrap(np.zeros((*batch, n, m), dt))
    at = None if atol is None else atol._edata
    rt = None if rtol is None else rtol._edata
    with quiet_block():
        if hermitian:
            w, v = eigh(a, "L")
            mag = np.abs(w)
            tol = pinv_tolerances(mag.max(-1, keepdims=True), at, rt, a.shape, dt)
            inv = np.where(mag > tol, 1 / np.where(mag > tol, w, 1), 0).astype(dt)
            out = (v * inv[..., None, :]) @ _mH(v)
        else:
            u, s, vh = svd(a, False)
            tol = pinv_tolerances(s[..., :1], at, rt, a.shape, dt)
            inv = np.where(s > tol, 1 / np.where(s > tol, s, 1), 0).astype(dt)
            out = (_mH(vh) * inv[..., None, :]) @ _mH(u)
    return wrap(np.ascontiguousarray(out, dt))


@impl(aten.linalg_lstsq.default, CPU)
def linalg_lstsq(
    self: Tensor, b: Tensor, rcond: float | None = None, *, driver: str | None = None
) -> lstsq_t:
    """LAPACK's least-squares drivers per matrix (``gelsy`` by default, as PyTorch on the
    cpu device): the solution, the squared residuals (for tall full-rank problems and
    drivers other than ``gelsy``), the rank and the singular values (``gelsd``/``gelss``)."""
    shape, vector, drv = lstsq_plan(self.shape, b.shape, self.dtype, b.dtype, driver)
    a = self._edata
    dt = a.dtype
    rhs = b._edata[..., None] if vector else b._edata
    *_, m, n = a.shape
    k = rhs.shape[-1]
    batch = broadcast_shapes(batch_of(a.shape), batch_of(rhs.shape), op="torch.linalg.lstsq")
    count = math.prod(batch)
    real = np.finfo(dt).dtype
    cond = float(np.finfo(dt).eps * max(m, n)) if rcond is None or rcond < 0 else rcond
    sol = np.zeros((count, n, k), dt)
    ranks = np.zeros(count, np.int64)
    svals = np.zeros((count, min(m, n)), real)
    resid = np.zeros((count, k), real)
    mats = _matrices(np.broadcast_to(a, (*batch, m, n)))
    rhss = _matrices(np.broadcast_to(rhs, (*batch, m, k)))
    if m and n and count:
        with quiet_block():
            for i in range(count):
                sol[i], ranks[i], sv, resid[i] = _lstsq_one(mats[i], rhss[i], drv, cond)
                if sv is not None:
                    svals[i] = sv
    full_rank = drv == "gels" or bool((ranks == min(m, n)).all())
    has_resid = m > n and drv != "gelsy" and full_rank and count
    solution = sol.reshape((*batch, n, k))
    if vector:
        solution = solution[..., 0]
    residuals = resid.reshape((*batch, k)) if has_resid else np.zeros((0,), real)
    # the rank and singular values are A's: of A's batch shape, as PyTorch's
    of_a = _of_a(batch, batch_of(a.shape))
    rank = ranks.reshape(batch)[of_a] if drv != "gels" else np.zeros((0,), np.int64)
    sv_out = (
        np.ascontiguousarray(svals.reshape((*batch, min(m, n)))[of_a])
        if drv in ("gelsd", "gelss")
        else np.zeros((0,), real)
    )
    return lstsq_t(
        wrap(np.ascontiguousarray(solution.reshape(shape))), wrap(residuals), wrap(rank),
        wrap(sv_out),
    )  # fmt: skip


def _of_a(batch: Sequence[int], a_batch: Sequence[int]) -> tuple[Any, ...]:
    """The index that takes, from an array of the broadcast ``batch`` shape, one entry per
    matrix of ``A`` (whose batch shape is ``a_batch``)."""
    lead = (0,) * (len(batch) - len(a_batch))
    return lead + tuple(slice(0, 1) if s == 1 else slice(None) for s in a_batch)


def _lstsq_one(
    a: np.ndarray, b: np.ndarray, driver: str, cond: float
) -> tuple[np.ndarray, int, np.ndarray | None, np.ndarray]:
    """One matrix: (solution, rank, singular values or None, squared residuals)."""
    m, n = a.shape
    k = b.shape[1]
    big = np.zeros((max(m, n), k), a.dtype)
    big[:m] = b
    if driver == "gelsy":
        fn = _lapack_fn("gelsy", a.dtype)
        lwork = _lapack_fn("gelsy_lwork", a.dtype)(m, n, k, cond)[0]
        jptv = np.zeros(n, np.int32)
        x = fn(a, big, jptv, cond, int(np.real(lwork)))
        sol, rank, sv = x[1], int(x[3]), None
    elif driver == "gels":
        fn = _lapack_fn("gels", a.dtype)
        lwork = _lapack_fn("gels_lwork", a.dtype)(m, n, k)[0]
        x = fn(a, big, lwork=int(np.real(lwork)))
        sol, rank, sv = x[1], min(m, n), None
    elif driver == "gelss":
        fn = _lapack_fn("gelss", a.dtype)
        lwork = _lapack_fn("gelss_lwork", a.dtype)(m, n, k, cond)[0]
        x = fn(a, big, cond=cond, lwork=int(np.real(lwork)))
        sol, sv, rank = x[1], x[2], int(x[3])
    else:
        fn = _lapack_fn("gelsd", a.dtype)
        work = _lapack_fn("gelsd_lwork", a.dtype)(m, n, k, cond)
        if a.dtype.kind == "c":
            x = fn(a, big, int(np.real(work[0])), int(work[1]), int(work[2]), cond)
        else:
            x = fn(a, big, int(np.real(work[0])), int(work[1]), cond)
        sol, sv, rank = x[0], x[1], int(x[2])
    resid = (np.abs(sol[n:]) ** 2).sum(0) if m > n else np.zeros(k, np.finfo(a.dtype).dtype)
    return sol[:n], rank, sv, resid


# --------------------------------------------------------------------------- cross


@impl(aten.linalg_cross.default, CPU)
def linalg_cross(self: Tensor, other: Tensor, *, dim: int = -1) -> Tensor:
    shape, d = cross_plan(self.shape, other.shape, self.dtype, other.dtype, dim)
    rdt = promote_types(self.dtype, other.dtype).np
    a, b = self._edata.astype(rdt, copy=False), other._edata.astype(rdt, copy=False)
    with quiet_block():
        r = np.cross(a, b, axisa=d, axisb=d, axisc=d) if a.size or b.size else np.zeros(shape, rdt)
    if r.shape != tuple(shape):
        r = np.broadcast_to(r, shape)
    return wrap(np.array(r, rdt, order="C"))  # writable and its own (broadcast_to's is neither)


@impl(aten.linalg_matrix_exp.default, CPU)
def linalg_matrix_exp(self: Tensor) -> Tensor:
    """``exp(A)`` of each square matrix (SciPy's scaling and squaring with Padé
    approximants); half precision computes in float32, as PyTorch's."""
    matrix_exp_check(self)
    a = self._edata
    if a.size == 0:
        return wrap(np.zeros(a.shape, a.dtype))
    wide = a.astype(np.float32) if a.dtype.itemsize < 4 and a.dtype.kind != "c" else a
    with quiet_block():
        out = _expm(np.ascontiguousarray(wide))
    return wrap(np.asarray(out, dtype=a.dtype))
