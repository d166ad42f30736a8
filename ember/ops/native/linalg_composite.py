"""The CompositeImplicitAutograd ops of ``ember.linalg``: each is the ops PyTorch decomposes
it into (read off a ``TorchDispatchMode`` on PyTorch), so ``__torch_dispatch__`` code and
the lazy device see the same parts, and autograd differentiates the parts.

# NOTE [linalg decompositions]
``linalg.inv``, ``linalg.cholesky`` and ``linalg.solve`` run their ``_ex`` op and then
``_linalg_check_errors`` on its ``info`` (NOTE [linalg errors] in
``ember/backends/cpu/lapack.py``); ``det``/``slogdet``/``svd``/``eigh`` and friends keep
the first outputs of ``_linalg_det``/``_linalg_slogdet``/``_linalg_svd``/``_linalg_eigh``,
whose other outputs (LU factors, pivots) feed the derivatives. ``svdvals`` and ``eigvalsh``
ask for the singular or eigen vectors only when a gradient may be needed (the backward needs
them), as PyTorch does. ``matrix_norm`` with ord ±1/±inf is a ``vector_norm`` of 1 along one
dim then ``amax``/``amin`` along the other; ord ±2 and 'nuc' reduce ``svdvals``.
"""

from __future__ import annotations

import functools
import math
import warnings
from collections.abc import Sequence
from types import SimpleNamespace
from typing import Any

import numpy as np

from ember._tensor import Tensor
from ember._warn import warn_user
from ember.dispatch import state
from ember.dispatch.keys import DispatchKey
from ember.dtypes import FLOATING, bool_, float64
from ember.ops.native._define import by_name
from ember.ops.native.linalg import (
    check_floating_input,
    check_linalg_dtype,
    matrix_check,
    matrix_shape_check,
)
from ember.ops.registry import impl, ops
from ember.ops.shapes import wrap_dim
from ember.return_types import linalg_eigh as eigh_t
from ember.return_types import linalg_slogdet as linalg_slogdet_t
from ember.return_types import linalg_solve_ex as solve_ex_t
from ember.return_types import linalg_svd as linalg_svd_t
from ember.return_types import qr as qr_t
from ember.return_types import slogdet as slogdet_t
from ember.return_types import svd as svd_t

aten = ops.aten
_CIA = DispatchKey.CompositeImplicitAutograd
_INF = math.inf


def _may_need_grad(A: Tensor) -> bool:
    """Whether a backward may need the vectors of a decomposition of ``A``: ``A`` requires
    grad, or a ``__torch_dispatch__`` handler sees the call (PyTorch's
    ``_may_require_fw_or_bw_grad``, true for tensor subclasses)."""
    return bool(A.requires_grad and state.local.grad_enabled) or state.python_key_sees(A)


def _check(info: Tensor, api: str, A: Tensor) -> None:
    aten._linalg_check_errors.default(info, api, is_matrix=A.ndim == 2)


# --------------------------------------------------------------------------- cholesky, inv, solve


@impl(aten.linalg_cholesky.default, _CIA)
def linalg_cholesky(self: Tensor, *, upper: bool = False) -> Tensor:
    factor, info = aten.linalg_cholesky_ex.default(self, upper=upper)
    _check(info, "linalg.cholesky", self)
    return factor  # type: ignore[no-any-return]


@impl(aten.linalg_inv.default, _CIA)
def linalg_inv(A: Tensor) -> Tensor:
    inverse, info = aten.linalg_inv_ex.default(A)
    _check(info, "linalg.inv", A)
    return inverse  # type: ignore[no-any-return]


@impl(aten.inverse.default, _CIA)
def inverse(self: Tensor) -> Tensor:
    return linalg_inv(self)


@impl(aten.linalg_solve_ex.default, _CIA)
def linalg_solve_ex(
    A: Tensor, B: Tensor, *, left: bool = True, check_errors: bool = False
) -> tuple[Tensor, ...]:
    result, _, _, info = aten._linalg_solve_ex.default(A, B, left=left, check_errors=check_errors)
    return solve_ex_t(result, info)


@impl(aten.linalg_solve.default, _CIA)
def linalg_solve(A: Tensor, B: Tensor, *, left: bool = True) -> Tensor:
    result, _, _, info = aten._linalg_solve_ex.default(A, B, left=left)
    _check(info, "torch.linalg.solve", A)
    return result  # type: ignore[no-any-return]


# --------------------------------------------------------------------------- det, slogdet


@impl(aten.linalg_det.default, _CIA)
def linalg_det(A: Tensor) -> Tensor:
    return aten._linalg_det.default(A)[0]  # type: ignore[no-any-return]


@impl(aten.det.default, _CIA)
def det(self: Tensor) -> Tensor:
    return linalg_det(self)


@impl(aten.linalg_slogdet.default, _CIA)
def linalg_slogdet(A: Tensor) -> tuple[Tensor, ...]:
    sign, logabsdet, _, _ = aten._linalg_slogdet.default(A)
    return linalg_slogdet_t(sign, logabsdet)


@impl(aten.slogdet.default, _CIA)
def slogdet(self: Tensor) -> tuple[Tensor, ...]:
    sign, logabsdet, _, _ = aten._linalg_slogdet.default(self)
    return slogdet_t(sign, logabsdet)


@impl(aten.logdet.default, _CIA)
def logdet(self: Tensor) -> Tensor:
    """``log(det)``: NaN for a negative determinant of a real matrix, ``log(sign) +
    logabsdet`` for a complex one."""
    sign, logabsdet, _, _ = aten._linalg_slogdet.default(self)
    if self.dtype.is_complex:
        return aten.add.Tensor(aten.log.default(sign), logabsdet)  # type: ignore[no-any-return]
    negative = aten.eq.Scalar(sign, -1)
    nan = aten.scalar_tensor.default(math.nan, dtype=logabsdet.dtype, device=self.device)
    return aten.where.self(negative, nan, logabsdet)  # type: ignore[no-any-return]


# --------------------------------------------------------------------------- svd, eigh


@impl(aten.linalg_svd.default, _CIA)
def linalg_svd(
    A: Tensor, full_matrices: bool = True, *, driver: str | None = None
) -> tuple[Tensor, ...]:
    U, S, Vh = aten._linalg_svd.default(A, full_matrices, driver=driver)
    return linalg_svd_t(U, S, Vh)


@impl(aten.linalg_svdvals.default, _CIA)
def linalg_svdvals(A: Tensor, *, driver: str | None = None) -> Tensor:
    out = aten._linalg_svd.default(A, False, _may_need_grad(A), driver=driver)
    return out[1]  # type: ignore[no-any-return]


@impl(aten.svd.default, _CIA)
def svd(self: Tensor, some: bool = True, compute_uv: bool = True) -> tuple[Tensor, ...]:
    """The old ``svd``: ``V`` where ``linalg.svd`` gives ``Vh``; without ``compute_uv``,
    zero-filled square ``U`` and ``V``."""
    if not compute_uv:
        S = linalg_svdvals(self)
        *batch, m, n = self.shape
        kw = {"dtype": self.dtype, "device": self.device}
        U = aten.zeros.default([*batch, m, m], **kw)
        V = aten.zeros.default([*batch, n, n], **kw)
        return svd_t(U, S, V)
    U, S, Vh = aten._linalg_svd.default(self, not some)
    return svd_t(U, S, _mH(Vh))


def _mH(t: Tensor) -> Tensor:
    v = aten.transpose.int(t, -2, -1)
    return aten._conj_physical.default(v) if t.dtype.is_complex else v  # type: ignore[no-any-return]


@impl(aten.linalg_eigh.default, _CIA)
def linalg_eigh(self: Tensor, UPLO: str = "L") -> tuple[Tensor, ...]:
    w, v = aten._linalg_eigh.default(self, UPLO)
    return eigh_t(w, v)


@impl(aten.linalg_eigvalsh.default, _CIA)
def linalg_eigvalsh(self: Tensor, UPLO: str = "L") -> Tensor:
    return aten._linalg_eigh.default(self, UPLO, _may_need_grad(self))[0]  # type: ignore[no-any-return]


# --------------------------------------------------------------------------- pinv, matrix_rank


def _scalar(value: float, like: Tensor) -> Tensor:
    """A 0-dim float64 tensor (PyTorch makes its tolerances in double, whatever the input)."""
    return aten.full.default([], value, dtype=float64, device=like.device)  # type: ignore[no-any-return]


def _default_rtol(A: Tensor) -> float:
    eps = float(np.finfo(A.dtype.to_real().np).eps) if A.dtype.category >= FLOATING else 0.0
    return eps * max(A.shape[-2], A.shape[-1]) if A.ndim >= 2 else 0.0


def _float_tols(A: Tensor, atol: float | None, rtol: float | None) -> tuple[Tensor, Tensor]:
    """The tolerance tensors of the float overloads, as PyTorch makes them: an unset
    ``atol`` is 0; an unset ``rtol`` is 0 when ``atol`` is positive, else eps * max(m, n)."""
    a = _scalar(0.0 if atol is None else atol, A)
    if rtol is None:
        rtol = 0.0 if atol is not None and atol > 0 else _default_rtol(A)
    return a, _scalar(rtol, A)


@impl(aten.linalg_pinv.atol_rtol_float, _CIA)
def linalg_pinv_float(
    self: Tensor, *, atol: float | None = None, rtol: float | None = None, hermitian: bool = False
) -> Tensor:
    a, r = _float_tols(self, atol, rtol)
    return aten.linalg_pinv.atol_rtol_tensor(self, atol=a, rtol=r, hermitian=hermitian)  # type: ignore[no-any-return]


@impl(aten.linalg_pinv.default, _CIA)
def linalg_pinv_rcond(self: Tensor, rcond: float, hermitian: bool = False) -> Tensor:
    a, r = _scalar(0.0, self), _scalar(rcond, self)
    return aten.linalg_pinv.atol_rtol_tensor(self, atol=a, rtol=r, hermitian=hermitian)  # type: ignore[no-any-return]


@impl(aten.linalg_pinv.rcond_tensor, _CIA)
def linalg_pinv_rcond_tensor(self: Tensor, rcond: Tensor, hermitian: bool = False) -> Tensor:
    a = aten.zeros.default([], dtype=float64, device=self.device)
    return aten.linalg_pinv.atol_rtol_tensor(self, atol=a, rtol=rcond, hermitian=hermitian)  # type: ignore[no-any-return]


@impl(aten.pinverse.default, _CIA)
def pinverse(self: Tensor, rcond: float = 1e-15) -> Tensor:
    return linalg_pinv_rcond(self, rcond)


@impl(aten.linalg_matrix_rank.atol_rtol_tensor, _CIA)
def linalg_matrix_rank(
    input: Tensor,
    *,
    atol: Tensor | None = None,
    rtol: Tensor | None = None,
    hermitian: bool = False,
) -> Tensor:
    """The number of singular values (absolute eigenvalues for ``hermitian``) above
    ``max(atol, rtol * largest)``."""
    api = "torch.linalg.matrix_rank"
    if input.ndim < 2:
        raise RuntimeError(f"{api}: The input tensor input must have at least 2 dimensions.")
    if input.dtype.category < FLOATING or input.dtype.itemsize < 4:
        raise RuntimeError("This function doesn't handle types other than float and double")
    if atol is None:
        atol = aten.zeros.default([], dtype=float64, device=input.device)
    if rtol is None:
        rtol = _scalar(_default_rtol(input), input)
    if hermitian:
        S = aten.abs.default(aten._linalg_eigh.default(input, "L", _may_need_grad(input))[0])
        s_max = aten.amax.default(S, [-1], True)
    else:
        S = aten._linalg_svd.default(input, False, _may_need_grad(input))[1]
        s_max = aten.slice.Tensor(S, -1, 0, 1)
    relative = aten.mul.Tensor(aten.unsqueeze.default(rtol, -1), s_max)
    tol = aten.maximum.default(aten.unsqueeze.default(atol, -1), relative)
    return aten.sum.dim_IntList(aten.gt.Tensor(S, tol), [-1])  # type: ignore[no-any-return]


@impl(aten.linalg_matrix_rank.atol_rtol_float, _CIA)
def linalg_matrix_rank_float(
    self: Tensor, *, atol: float | None = None, rtol: float | None = None, hermitian: bool = False
) -> Tensor:
    a, r = _float_tols(self, atol, rtol)
    return linalg_matrix_rank(self, atol=a, rtol=r, hermitian=hermitian)


@impl(aten.linalg_matrix_rank.default, _CIA)
def linalg_matrix_rank_tol(self: Tensor, tol: float, hermitian: bool = False) -> Tensor:
    return linalg_matrix_rank(
        self, atol=_scalar(tol, self), rtol=_scalar(0.0, self), hermitian=hermitian
    )


@impl(aten.linalg_matrix_rank.tol_tensor, _CIA)
def linalg_matrix_rank_tol_tensor(input: Tensor, tol: Tensor, hermitian: bool = False) -> Tensor:
    zero = aten.zeros.default([], dtype=float64, device=input.device)
    return linalg_matrix_rank(input, atol=tol, rtol=zero, hermitian=hermitian)


# --------------------------------------------------------------------------- products


@impl(aten.linalg_matrix_power.default, _CIA)
def linalg_matrix_power(self: Tensor, n: int) -> Tensor:
    """``A^n`` by repeated squaring (``A^-n`` is ``inv(A)^n``; ``A^0`` the identity)."""
    api = "linalg.matrix_power"
    matrix_shape_check(self.shape, api)
    if n == 0:
        out = aten.clone.default(self)
        eye = aten.eye.default(self.shape[-1], dtype=self.dtype, device=self.device)
        return aten.copy_.default(out, aten.expand.default(eye, list(self.shape)))  # type: ignore[no-any-return]
    a = linalg_inv(self) if n < 0 else self
    n = abs(n)
    if n == 1:
        return aten.clone.default(a)  # type: ignore[no-any-return]
    if n == 2:
        return aten.matmul.default(a, a)  # type: ignore[no-any-return]
    if n == 3:
        return aten.matmul.default(aten.matmul.default(a, a), a)  # type: ignore[no-any-return]
    result: Tensor | None = None
    z: Tensor | None = None
    while n:
        z = a if z is None else aten.matmul.default(z, z)
        if n & 1:
            result = z if result is None else aten.matmul.default(result, z)
        n >>= 1
    assert result is not None
    return result


@impl(aten.matrix_power.default, _CIA)
def matrix_power(self: Tensor, n: int) -> Tensor:
    return linalg_matrix_power(self, n)


@impl(aten.cross.default, _CIA)
def cross(self: Tensor, other: Tensor, dim: int | None = None) -> Tensor:
    """``linalg.cross`` along ``dim``; without one, the first dim of size 3 (deprecated)."""
    if dim is None:
        warnings.warn(
            "Using torch.cross without specifying the dim arg is deprecated. Please either "
            "pass the dim explicitly or simply use torch.linalg.cross.",
            UserWarning,
            stacklevel=3,
        )
        found = next((i for i, s in enumerate(self.shape) if s == 3), None)
        if found is None:
            raise RuntimeError(f"no dimension of size 3 in input (shape {list(self.shape)})")
        dim = found
    return aten.linalg_cross.default(self, other, dim=dim)  # type: ignore[no-any-return]


@impl(aten.linalg_vander.default, _CIA)
def linalg_vander(x: Tensor, *, N: int | None = None) -> Tensor:
    """Columns ``x**0, ..., x**(N-1)`` (``N`` the last dim's size by default): ones beside
    the running product of ``N - 1`` copies of ``x``, as PyTorch composes it."""
    if x.dtype is bool_:
        raise RuntimeError(
            "linalg.vander supports floating point, complex, and integer tensors, but got Bool"
        )
    n = N if N is not None else (x.shape[-1] if x.ndim else 1)
    if n <= 1:
        raise RuntimeError(f"linalg.vander: N must be greater than 1, got N={n}")
    shape = [*x.shape, n - 1]
    powers = aten.cumprod.default(aten.expand.default(aten.unsqueeze.default(x, -1), shape), -1)
    ones = aten.new_ones.default(x, [*x.shape, 1])
    return aten.cat.default([ones, powers], -1)  # type: ignore[no-any-return]


@impl(aten.linalg_vecdot.default, _CIA)
def linalg_vecdot(x: Tensor, y: Tensor, *, dim: int = -1) -> Tensor:
    """``sum(conj(x) * y, dim)``."""
    for t in (x, y):
        check_floating_input(t.dtype, "linalg.vecdot")
    if x.dtype is not y.dtype:
        raise RuntimeError(
            f"linalg.vecdot: Expected x and y to have the same dtype, but found x of type "
            f"{x.dtype._short} and y of type {y.dtype._short} instead"
        )
    xc = aten._conj_physical.default(x) if x.dtype.is_complex else x
    return aten.sum.dim_IntList(aten.mul.Tensor(xc, y), [dim])  # type: ignore[no-any-return]


@impl(aten.linalg_matmul.default, _CIA)
def linalg_matmul(self: Tensor, other: Tensor) -> Tensor:
    return aten.matmul.default(self, other)  # type: ignore[no-any-return]


@impl(aten.linalg_diagonal.default, _CIA)
def linalg_diagonal(A: Tensor, *, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    return aten.diagonal.default(A, offset, dim1, dim2)  # type: ignore[no-any-return]


@impl(aten.linalg_multi_dot.default, _CIA)
def linalg_multi_dot(tensors: Sequence[Tensor]) -> Tensor:
    """The product of a chain of matrices in the cheapest order (dynamic programming over
    the sizes); a 1-D first or last operand is a row or column vector."""
    api = "multi_dot(): "
    n = len(tensors)
    if n < 2:
        raise RuntimeError(f"{api}expected at least 2 tensors but got {n}")
    first, last = tensors[0], tensors[-1]
    for i, t in enumerate(tensors):
        lo = 1 if i in (0, n - 1) else 2
        if not lo <= t.ndim <= 2:
            where = "the first" if i == 0 else "the last" if i == n - 1 else f"tensor {i}"
            want = "1D or 2D" if lo == 1 else "2D"
            raise RuntimeError(f"{api}{where} tensor must be {want} but got {t.ndim}D")
        if t.dtype is not first.dtype:
            raise RuntimeError(
                f"{api}all tensors must have be the same dtype but tensor 0 is "
                f"{first.dtype.name} and tensor {i} {t.dtype.name}"
            )
    mats = list(tensors)
    if first.ndim == 1:
        mats[0] = aten.unsqueeze.default(first, 0)
    if last.ndim == 1:
        mats[-1] = aten.unsqueeze.default(last, -1)
    for i in range(n - 1):
        a, b = mats[i].shape, mats[i + 1].shape
        if a[1] != b[0]:
            raise RuntimeError(
                f"{api}tensors {i} and {i + 1} with shapes {list(a)} and {list(b)} cannot be "
                "multiplied"
            )
    out = _chain(mats)
    shape = [
        *([out.shape[0]] if first.ndim == 2 else []),
        *([out.shape[1]] if last.ndim == 2 else []),
    ]
    return aten.view.default(out, shape)  # type: ignore[no-any-return]


def _chain(mats: list[Tensor]) -> Tensor:
    """``mats[0] @ ... @ mats[-1]`` in the order with the fewest multiplications."""
    n = len(mats)
    if n == 2:
        return aten.mm.default(mats[0], mats[1])  # type: ignore[no-any-return]
    dims = [mats[0].shape[0], *(m.shape[1] for m in mats)]
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = math.inf  # type: ignore[call-overload]
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k

    def build(i: int, j: int) -> Tensor:
        if i == j:
            return mats[i]
        k = split[i][j]
        return aten.mm.default(build(i, k), build(k + 1, j))  # type: ignore[no-any-return]

    return build(0, n - 1)


# --------------------------------------------------------------------------- norms


def _dims(dim: Any, ndim: int, api: str) -> list[int]:
    dims = [dim] if isinstance(dim, int) else list(dim)
    return [wrap_dim(d, ndim, api) for d in dims]


def _matrix_norm_dims(self: Tensor, dim: Sequence[int], api: str) -> tuple[int, int]:
    """The checks every matrix norm makes (a matrix or a batch of them, two distinct
    ``dim``): the two dims, wrapped."""
    matrix_check(self.shape, self.dtype, api, ("low", ""), square=False)
    if len(dim) != 2:
        raise RuntimeError(f"{api}: dim must be a 2-tuple. Got {' '.join(map(str, dim))}")
    d0, d1 = _dims(dim, self.ndim, api)
    if d0 == d1:
        raise RuntimeError(f"{api}: dims must be different. Got ({d0}, {d1})")
    return d0, d1


@impl(aten.linalg_matrix_norm.default, _CIA)
def linalg_matrix_norm(
    self: Tensor,
    ord: Any,
    dim: Sequence[int] = (-2, -1),
    keepdim: bool = False,
    *,
    dtype: Any = None,
) -> Tensor:
    """Matrix norms of order ±1, ±2 and ±inf over the two ``dim``."""
    api = "linalg.matrix_norm"
    d0, d1 = _matrix_norm_dims(self, dim, api)
    abs_ord = abs(ord)
    if abs_ord not in (2, 1, _INF):
        raise RuntimeError(f"{api}: Order {ord} not supported.")
    if abs_ord == 2:
        check_linalg_dtype(self.dtype, api, ("low", ""))
        A = self if dtype is None else aten._to_copy.default(self, dtype=dtype)
        rest = [i for i in range(self.ndim) if i not in (d0, d1)]
        s = linalg_svdvals(aten.permute.default(A, [*rest, d0, d1]))
        r = _largest(s, -1, False) if ord > 0 else aten.amin.default(s, [-1])
        if keepdim:
            for d in sorted((d0, d1)):
                r = aten.unsqueeze.default(r, d)
        return r  # type: ignore[no-any-return]
    if abs_ord == _INF:
        d0, d1 = d1, d0
    if not keepdim and d0 < d1:
        d1 -= 1
    s = aten.linalg_vector_norm.default(self, 1.0, [d0], keepdim, dtype=dtype)
    if ord > 0:
        return _largest(s, d1, keepdim)
    return aten.amin.default(s, [d1], keepdim)  # type: ignore[no-any-return]


def _largest(s: Tensor, d: int, keepdim: bool) -> Tensor:
    """The largest of the nonnegative ``s`` along ``d``; over an empty dim, zeros with no
    autograd history, as PyTorch's matrix norms of positive order give for an empty matrix
    (the smallest, of a negative order, is an error there, as amin's)."""
    if s.shape[d] == 0:
        shape = [n for i, n in enumerate(s.shape) if i != d % s.ndim]
        if keepdim:
            shape.insert(d % s.ndim, 1)
        return aten.new_zeros.default(s, shape)  # type: ignore[no-any-return]
    return aten.amax.default(s, [d], keepdim)  # type: ignore[no-any-return]


# NOTE [condition numbers]
# PyTorch's ``linalg.cond``: for p None, 2 and -2 (any m x n matrices) the ratio of the
# largest to the smallest singular value (-2: its inverse); for "nuc" (square) the sum of
# the singular values times the sum of their inverses, which is
# ``||A||_nuc * ||A^-1||_nuc``; for 1, -1, inf, -inf and "fro" (square) the norm of A times
# the norm of its inverse, inf where ``linalg_inv_ex`` reports A singular (and where the
# product is NaN, as PyTorch's). Empty matrices have condition number 0.


def _cond_check(A: Tensor, p: Any, square: bool) -> None:
    if A.ndim < 2:
        raise RuntimeError("linalg.cond: The input tensor must have at least 2 dimensions.")
    check_linalg_dtype(A.dtype, "linalg.cond", ("low", ""))
    if square and A.shape[-1] != A.shape[-2]:
        raise RuntimeError(
            f"linalg.cond(ord={p}): A must be batches of square matrices, but they are "
            f"{A.shape[-2]} by {A.shape[-1]} matrices; use p=None, 2 or -2 for non-square ones"
        )


def _cond_empty(A: Tensor) -> Tensor:
    real = A.dtype.to_real()
    return aten.new_zeros.default(A, list(A.shape[:-2]), dtype=real)  # type: ignore[no-any-return]


def _cond_by_inverse(A: Tensor, p: Any) -> Tensor:
    inv, info = aten.linalg_inv_ex.default(A)
    singular = aten.gt.Scalar(aten.unsqueeze.default(aten.unsqueeze.default(info, -1), -1), 0)
    inv = aten.masked_fill.Scalar(inv, singular, _INF)
    if isinstance(p, str):
        norm = functools.partial(linalg_matrix_norm_str, ord=p)
    else:
        norm = functools.partial(linalg_matrix_norm, ord=p)
    r = aten.mul.Tensor(norm(A), norm(inv))  # 0 * inf (an overflowing or NaN A): inf
    return aten.nan_to_num.default(r, _INF, _INF)  # type: ignore[no-any-return]


@impl(aten.linalg_cond.default, _CIA)
def linalg_cond(self: Tensor, p: Any = None) -> Tensor:
    """The condition number of (a batch of) matrices in the norm ``p`` (NOTE [condition
    numbers])."""
    if p is not None and p not in (2, -2, 1, -1, _INF, -_INF):
        raise RuntimeError(f"linalg.cond got an invalid norm type: {p}")
    by_svd = p is None or abs(p) == 2
    _cond_check(self, p, square=not by_svd)
    if self.numel() == 0:
        return _cond_empty(self)
    if not by_svd:
        return _cond_by_inverse(self, p)
    s = linalg_svdvals(self)
    hi = aten.select.int(s, -1, 0)
    lo = aten.select.int(s, -1, -1)
    return aten.div.Tensor(lo, hi) if p == -2 else aten.div.Tensor(hi, lo)  # type: ignore[no-any-return]


@impl(aten.linalg_cond.p_str, _CIA)
def linalg_cond_str(self: Tensor, p: str) -> Tensor:
    """``linalg_cond`` for ``p="fro"`` or ``"nuc"`` (NOTE [condition numbers])."""
    if p not in ("fro", "nuc"):
        raise RuntimeError(f"linalg.cond got an invalid norm type: {p}")
    _cond_check(self, p, square=True)
    if self.numel() == 0:
        return _cond_empty(self)
    if p == "fro":
        return _cond_by_inverse(self, p)
    s = linalg_svdvals(self)
    total = aten.sum.dim_IntList(s, [-1])
    return aten.mul.Tensor(total, aten.sum.dim_IntList(aten.reciprocal.default(s), [-1]))  # type: ignore[no-any-return]


@impl(aten.linalg_matrix_norm.str_ord, _CIA)
def linalg_matrix_norm_str(
    self: Tensor,
    ord: str = "fro",
    dim: Sequence[int] = (-2, -1),
    keepdim: bool = False,
    *,
    dtype: Any = None,
) -> Tensor:
    """The Frobenius ('fro') and nuclear ('nuc') norms over the two ``dim``."""
    api = "linalg.matrix_norm"
    if ord not in ("fro", "nuc"):
        raise RuntimeError(f"{api}: Order {ord} not supported.")
    d0, d1 = _matrix_norm_dims(self, dim, api)
    if ord == "fro":
        return aten.linalg_vector_norm.default(self, 2, [d0, d1], keepdim, dtype=dtype)  # type: ignore[no-any-return]
    check_linalg_dtype(self.dtype, api, ("low", ""))
    A = self if dtype is None else aten._to_copy.default(self, dtype=dtype)
    rest = [i for i in range(self.ndim) if i not in (d0, d1)]
    r = aten.sum.dim_IntList(linalg_svdvals(aten.permute.default(A, [*rest, d0, d1])), [-1])
    if keepdim:
        for d in sorted((d0, d1)):
            r = aten.unsqueeze.default(r, d)
    return r  # type: ignore[no-any-return]


def _linalg_norm(by_str: bool, a: SimpleNamespace) -> Tensor:
    """``linalg_norm`` (``by_str``: its ``ord_str`` overload; ``a``: the arguments by name): a
    vector norm over one dim (or all of them, without ``ord``), a matrix norm over two (always,
    for a string ``ord``)."""
    self, ord, dim, keepdim, dtype = a.self, a.ord, a.dim, a.keepdim, a.dtype  # noqa: A001
    if dim is not None:
        dims = [dim] if isinstance(dim, int) else list(dim)
        if len(dims) not in (1, 2):
            raise RuntimeError(
                f"linalg.norm: If dim is specified, it must be of length 1 or 2. Got {dims}"
            )
    elif by_str:
        if self.ndim != 2:
            raise RuntimeError(
                f"linalg.norm: If dim is not specified but ord is, the input must be 2D. Got "
                f"{self.ndim}D."
            )
        dims = [0, 1]
    elif ord is not None and self.ndim not in (1, 2):
        raise RuntimeError(
            "linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. "
            f"Got {self.ndim}D."
        )
    if by_str:
        return linalg_matrix_norm_str(self, ord, dims, keepdim, dtype=dtype)
    if ord is not None and (
        (dim is not None and len(dims) == 2) or (dim is None and self.ndim == 2)
    ):
        mdim = dims if dim is not None else [0, 1]
        return linalg_matrix_norm(self, ord, mdim, keepdim, dtype=dtype)
    return aten.linalg_vector_norm.default(  # type: ignore[no-any-return]
        self, 2.0 if ord is None else ord, dim if dim is None else dims, keepdim, dtype=dtype
    )


for _op, _by_str in ((aten.linalg_norm.default, False), (aten.linalg_norm.ord_str, True)):
    impl(_op, _CIA)(by_name(_op, functools.partial(_linalg_norm, _by_str)))


@impl(aten.frobenius_norm.dim, _CIA)
def frobenius_norm(self: Tensor, dim: Sequence[int], keepdim: bool = False) -> Tensor:
    """Deprecated in PyTorch (kept for TorchScript): ``norm(self, 2, dim, keepdim)``."""
    if len(dim) > 2:
        raise RuntimeError(f"Expected at most 2 dimensions, but got {len(dim)} dimensions instead.")
    return aten.norm.ScalarOpt_dim(self, 2.0, list(dim), keepdim)  # type: ignore[no-any-return]


@impl(aten.nuclear_norm.default, _CIA)
def nuclear_norm(self: Tensor, keepdim: bool = False) -> Tensor:
    return linalg_matrix_norm_str(self, "nuc", [-2, -1], keepdim)


@impl(aten.nuclear_norm.dim, _CIA)
def nuclear_norm_dim(self: Tensor, dim: Sequence[int], keepdim: bool = False) -> Tensor:
    return linalg_matrix_norm_str(self, "nuc", list(dim), keepdim)


_warned_qr: list[bool] = []


@impl(aten.qr.default, _CIA)
def qr(self: Tensor, some: bool = True) -> Any:
    """``torch.qr``: ``linalg.qr`` with ``some`` for the mode (deprecated; warns once)."""
    if not _warned_qr:
        _warned_qr.append(True)
        warn_user(
            "torch.qr is deprecated in favor of torch.linalg.qr and will be removed in a future "
            "PyTorch release.\nThe boolean parameter 'some' has been replaced with a string "
            "parameter 'mode'.\nQ, R = torch.qr(A, some)\nshould be replaced with\nQ, R = "
            "torch.linalg.qr(A, 'reduced' if some else 'complete')"
        )
    q, r = aten.linalg_qr.default(self, "reduced" if some else "complete")
    return qr_t((q, r))


@impl(aten.matrix_exp.default, _CIA)
def matrix_exp(self: Tensor) -> Tensor:
    """``linalg.matrix_exp``'s older name."""
    return aten.linalg_matrix_exp.default(self)  # type: ignore[no-any-return]


def matrix_exp_check(A: Tensor) -> None:
    """``linalg.matrix_exp``'s checks: batches of square floating or complex matrices."""
    api = "linalg.matrix_exp"
    matrix_shape_check(A.shape, api)
    check_floating_input(A.dtype, api)
