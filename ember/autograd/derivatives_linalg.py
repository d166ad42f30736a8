"""Derivatives of the linear algebra ops (``ember.linalg``): one line per op, the formulas of
PyTorch's derivatives.yaml worked out in ember ops, so they dispatch and differentiate again
under ``create_graph`` like any op. Complex inputs follow NOTE [complex gradients] in
``derivatives.py``: the gradient is the conjugate Wirtinger derivative.

# NOTE [linalg derivatives]
With ``X`` the result and ``G`` its gradient (``A^H``: the conjugate transpose):
- ``inv``: ``-A^{-H} G A^{-H}``; ``solve`` (``AX = B``): ``gB = A^{-H} G``, ``gA = -gB X^H``
  (``XA = B``: ``gB = G A^{-H}``, ``gA = -X^H gB``); ``solve_triangular`` the same, kept to
  the triangle that was read (without the diagonal when ``unitriangular``).
- ``cholesky`` (``A = L L^H``): ``Φ = tril(L^H G)`` made Hermitian with its diagonal halved,
  then ``gA = L^{-H} Φ L^{-1}``.
- ``det``: ``G conj(det) A^{-H}``. At a singular matrix PyTorch's two backward paths differ
  and ember follows both: without ``create_graph`` the LU factors' zero pivots are nudged by
  eps, which for ``det == 0`` gives a zero gradient; with ``create_graph`` (where the
  gradient must be differentiable) it is the adjugate from an SVD, ``U diag(c) V^H`` with
  ``c_i = conj(det U det V^H) G prod_{j≠i} s_j`` (products of the others computed with
  cumulative products, so exact zeros are fine). A 1x1 matrix's gradient is ``G``.
- ``slogdet``: ``(G_logabsdet - i Im(conj(G_sign) sign)) A^{-H}`` (the sign of a real
  matrix carries no gradient).
- ``svd`` (``A = U S V^H``), with ``E_ij = s_j² - s_i²`` (1 on the diagonal) and
  ``skew(X) = X - X^H``: ``J = (skew(U^H gU) S + S skew(V^H gV)) / E + diag(gS)`` (plus the
  imaginary diagonal of ``U^H gU / S`` for complex inputs), ``gA = U J V^H``, plus the
  projections of ``gU`` (tall) or ``gV^H`` (wide) off the span of ``U`` or ``V``.
  ``svdvals``: ``U diag(gS) V^H``.
- ``eigh`` (``A = V diag(λ) V^H``): ``gA = V (diag(gλ) + (V^H gV) / E) V^H`` with
  ``E_ij = λ_j - λ_i``, after projecting ``V^H gV`` onto the skew-Hermitian matrices.
- ``qr`` (``A = QR``, reduced, ``m >= n``): ``M = R gR^H - gQ^H Q``, ``gA = (gQ + Q
  copyltu(M)) R^{-H}`` where ``copyltu`` mirrors the strict lower triangle onto the upper
  (the diagonal's real part kept); wide inputs split ``A = Q [X | Y]`` and treat ``Q X`` as
  square.
- ``pinv`` (``X = A⁺``): ``-X^H G X^H + (I - A X) G^H X X^H + X^H X G^H (I - X A)``;
  ``lstsq``'s solution ``A⁺ B`` through it, its residuals ``|AX - B|²`` directly.
- ``cross``: ``gself = other* × G``, ``gother = G × self*``.
"""

from __future__ import annotations

from typing import Any

from ember import functional as E  # NOTE [formulas on the public functions]
from ember.autograd.derivatives import conj
from ember.autograd.derivatives_tensorops import _UNNAMED, not_differentiated
from ember.autograd.function_table import defvjp
from ember.dispatch import state
from ember.ops.registry import ops

aten = ops.aten


def _first(g: Any) -> Any:
    """The gradient of an op's first output (``g`` is a tuple for ops with several)."""
    return g[0] if isinstance(g, tuple) else g


def mH(t: Any) -> Any:
    """The conjugate transpose of each matrix of ``t``."""
    return conj(t.transpose(-2, -1))


def _diag_embed(v: Any) -> Any:
    """Diagonal matrices with ``v`` (``(..., n)``) on their diagonals."""
    n = v.shape[-1]
    return v.unsqueeze(-1) * E.eye(n, dtype=v.dtype.to_real(), device=v.device)


def _solve(A: Any, B: Any, left: bool = True) -> Any:
    return aten.linalg_solve.default(A, B, left=left)


def _solve_unchecked(A: Any, B: Any) -> Any:
    """``A^{-1} B`` without raising for singular matrices (their values are inf or NaN)."""
    return aten._linalg_solve_ex.default(A, B)[0]


def _plus(a: Any, b: Any) -> Any:
    return b if a is None else a if b is None else a + b


# --------------------------------------------------------------------------- cholesky


def _cholesky_grad(gL: Any, L: Any, upper: bool) -> Any:
    if gL is None:
        return None
    if upper:
        L, gL = mH(L), mH(gL)
    phi = (mH(L) @ gL).tril()
    phi = 0.5 * (phi + mH(phi.tril(-1)))
    gA = aten.linalg_solve_triangular.default(mH(L), phi, upper=True, left=True)
    return aten.linalg_solve_triangular.default(L, gA, upper=False, left=False)


defvjp(aten.linalg_cholesky_ex.default, lambda g, self, *, upper=False, check_errors=False, result: (
    _cholesky_grad(_first(g), result[0], upper),), outputs=(True, False))  # fmt: skip
defvjp(aten.cholesky.default, lambda g, self, upper=False, *, result: (
    _cholesky_grad(g, result, upper),))  # fmt: skip


# --------------------------------------------------------------------------- triangular solve


def _solve_triangular(
    g: Any, A: Any, X: Any, upper: bool, left: bool, unitriangular: bool, needs: Any
) -> tuple[Any, Any]:
    gB = aten.linalg_solve_triangular.default(
        mH(A), g, upper=not upper, left=left, unitriangular=unitriangular
    )
    gA = None
    if needs[0]:
        gA = -(gB @ mH(X)) if left else -(mH(X) @ gB)
        k = 1 if unitriangular else 0
        gA = gA.triu(k) if upper else gA.tril(-k)
    return gA, gB if needs[1] else None


defvjp(aten.linalg_solve_triangular.default,
       lambda g, self, B, *, upper, left=True, unitriangular=False, result, needs: (
           _solve_triangular(g, self, result, upper, left, unitriangular, needs)))  # fmt: skip


# --------------------------------------------------------------------------- inv, solve


def _inv_grad(g: Any, inverse: Any) -> Any:
    if g is None:
        return None
    ih = mH(inverse)
    return -(ih @ g @ ih)


defvjp(aten.linalg_inv_ex.default, lambda g, A, *, check_errors=False, result: (
    _inv_grad(_first(g), result[0]),), outputs=(True, False))  # fmt: skip


def _solve_grad(g: Any, A: Any, B: Any, X: Any, left: bool, needs: Any) -> tuple[Any, Any]:
    g = _first(g)
    if g is None:
        return None, None
    vector = X.ndim == A.ndim - 1 or (X.ndim == 1)
    gm, xm = (g.unsqueeze(-1), X.unsqueeze(-1)) if vector else (g, X)
    # A^H gB = G (left) or gB A^H = G, solved with A's own LU factors as PyTorch solves it
    # (a singular A gives the same inf and NaN): gB^H = G^H A^{-1}, or A^{-1} G^H
    gB = mH(aten._linalg_solve_ex.default(A, mH(gm), left=not left)[0])
    gA = None
    if needs[0]:
        gA = -(gB @ mH(xm)) if left else -(mH(xm) @ gB)
    if vector:
        gB = gB.squeeze(-1)
    return gA, gB if needs[1] else None


defvjp(aten._linalg_solve_ex.default, lambda g, A, B, *, left=True, check_errors=False, result, needs: (
    _solve_grad(g, A, B, result[0], left, needs)), outputs=(True, False, False, False),
    name="LinalgSolveExBackward0")  # fmt: skip


# --------------------------------------------------------------------------- det, slogdet


def _others_product(s: Any) -> Any:
    """``prod_{j != i} s_j`` for each ``i`` along the last dim (exact with zeros)."""
    n = s.shape[-1]
    ones = E.ones_like(s.narrow(-1, 0, 1))
    before = E.cat([ones, s.narrow(-1, 0, n - 1)], -1).cumprod(-1)
    after = E.cat([s.narrow(-1, 1, n - 1), ones], -1).flip(-1).cumprod(-1).flip(-1)
    return before * after


def _det_grad(g: Any, A: Any, det: Any) -> Any:
    g = _first(g)
    if g is None:
        return None
    if A.shape[-1] == 1:  # d det / dA = 1 for a 1x1 matrix, zero or not
        return g.unsqueeze(-1).unsqueeze(-1).expand(A.shape)
    d = g * conj(det)
    if not state.local.grad_enabled:  # NOTE [linalg derivatives]: zero pivots nudged
        inv_h = _solve_unchecked(
            mH(A), E.eye(A.shape[-1], dtype=A.dtype, device=A.device).expand(A.shape)
        )
        grad = d.unsqueeze(-1).unsqueeze(-1) * inv_h
        return E.where((det == 0).unsqueeze(-1).unsqueeze(-1), 0.0, grad)
    if bool((det != 0).all()):
        return d.unsqueeze(-1).unsqueeze(-1) * _solve(
            mH(A), E.eye(A.shape[-1], dtype=A.dtype, device=A.device)
        )
    U, S, Vh = aten.linalg_svd.default(A)
    alpha = conj(aten.linalg_det.default(U) * aten.linalg_det.default(Vh))
    c = (g * alpha).unsqueeze(-1) * _others_product(S)
    return (U * c.unsqueeze(-2)) @ Vh


defvjp(aten._linalg_det.default, lambda g, A, *, result: (_det_grad(g, A, result[0]),),
       outputs=(True, False, False))  # fmt: skip


def _slogdet_grad(g: Any, A: Any, sign: Any) -> Any:
    g_sign, g_log = g[0], g[1]
    if g_log is None and (g_sign is None or not A.dtype.is_complex):
        return None
    if A.dtype.is_complex:
        k = E.zeros_like(sign) if g_log is None else g_log.to(A.dtype)
        if g_sign is not None:
            k = k - 1j * (conj(g_sign) * sign).imag
    else:
        k = g_log
    inv_h = _solve_unchecked(
        mH(A), E.eye(A.shape[-1], dtype=A.dtype, device=A.device).expand(A.shape)
    )
    return k.unsqueeze(-1).unsqueeze(-1) * inv_h


defvjp(aten._linalg_slogdet.default, lambda g, A, *, result: (_slogdet_grad(g, A, result[0]),),
       outputs=(True, True, False, False))  # fmt: skip


# --------------------------------------------------------------------------- svd


def _svd_grad(g: Any, A: Any, full_matrices: bool, compute_uv: bool, result: Any) -> Any:
    gU, gS, gVh = g
    U, S, Vh = result
    if gU is None and gS is None and gVh is None:
        return None
    if not compute_uv:
        raise RuntimeError(
            "linalg.svd: the singular vectors are needed to differentiate, but were not "
            "computed (compute_uv=False); use linalg.svdvals or compute_uv=True"
        )
    k = S.shape[-1]
    if full_matrices:
        U, Vh = U.narrow(-1, 0, k), Vh.narrow(-2, 0, k)
        gU = None if gU is None else gU.narrow(-1, 0, k)
        gVh = None if gVh is None else gVh.narrow(-2, 0, k)
    m, n = A.shape[-2], A.shape[-1]
    if gU is None and gVh is None:
        return (U * gS.unsqueeze(-2)) @ Vh
    Sc = S.to(A.dtype) if A.dtype.is_complex else S
    UhgU = None if gU is None else mH(U) @ gU
    VhgV = None if gVh is None else Vh @ mH(gVh)
    s2 = S * S
    e = s2.unsqueeze(-2) - s2.unsqueeze(-1)
    e = e + E.eye(
        k, dtype=e.dtype, device=e.device
    )  # 1 on the diagonal (where the skew parts are 0)
    j = None
    if UhgU is not None:
        j = (UhgU - mH(UhgU)) * Sc.unsqueeze(-2)
    if VhgV is not None:
        j = _plus(j, Sc.unsqueeze(-1) * (VhgV - mH(VhgV)))
    j = j / e
    if gS is not None:
        j = j + _diag_embed(gS)
    if A.dtype.is_complex and UhgU is not None:
        j = j + _diag_embed(1j * UhgU.diagonal(0, -2, -1).imag / S)
    if m > n and gU is not None:
        gUS = gU / Sc.unsqueeze(-2)
        out = U @ j + (gUS - U @ (mH(U) @ gUS))
        return out @ Vh
    if m < n and gVh is not None:
        SgVh = gVh / Sc.unsqueeze(-1)
        out = j @ Vh + (SgVh - (SgVh @ mH(Vh)) @ Vh)
        return U @ out
    return U @ (j @ Vh)


defvjp(aten._linalg_svd.default,
       lambda g, A, full_matrices=False, compute_uv=True, *, driver=None, result: (
           _svd_grad(g, A, full_matrices, compute_uv, result),))  # fmt: skip


# --------------------------------------------------------------------------- eigh


def _eigh_grad(g: Any, A: Any, compute_v: bool, result: Any) -> Any:
    gL, gV = g
    L, V = result
    if gL is None and gV is None:
        return None
    if gV is None:
        return (V * gL.to(V.dtype).unsqueeze(-2)) @ mH(V)
    if not compute_v:
        raise RuntimeError(
            "linalg.eigh: the eigenvectors are needed to differentiate, but were not computed "
            "(compute_v=False); use linalg.eigh"
        )
    x = mH(V) @ gV
    x = 0.5 * (x - mH(x))
    e = L.unsqueeze(-2) - L.unsqueeze(-1)
    e = e + E.eye(L.shape[-1], dtype=e.dtype, device=e.device)
    inner = x / e
    inner = inner - _diag_embed(inner.diagonal(0, -2, -1))
    if gL is not None:
        inner = inner + _diag_embed(gL)
    return V @ inner @ mH(V)


defvjp(aten._linalg_eigh.default, lambda g, A, UPLO="L", compute_v=True, *, result: (
    _eigh_grad(g, A, compute_v, result),))  # fmt: skip


# --------------------------------------------------------------------------- qr


def _copyltu(M: Any) -> Any:
    """The strict lower triangle mirrored (conjugated) onto the upper, the diagonal's real
    part kept."""
    low = M.tril(-1)
    d = M.diagonal(0, -2, -1)
    d = d.real if M.dtype.is_complex else d
    return low + mH(low) + _diag_embed(d)


def _qr_square(gQ: Any, gR: Any, Q: Any, R: Any) -> Any:
    """The gradient of the reduced QR of a tall (or square) matrix."""
    M = None
    if gR is not None:
        M = R @ mH(gR)
    if gQ is not None:
        M = _plus(M, -(mH(gQ) @ Q))
    b = Q @ _copyltu(M)
    if gQ is not None:
        b = b + gQ
    return aten.linalg_solve_triangular.default(mH(R), b, upper=False, left=False)


def _qr_grad(g: Any, A: Any, mode: str, result: Any) -> Any:
    gQ, gR = g
    Q, R = result
    if gQ is None and gR is None:
        return None
    m, n = A.shape[-2], A.shape[-1]
    if mode == "r":
        raise RuntimeError(
            "The derivative of linalg.qr depends on Q, which is not computed when mode='r'. "
            "Please use linalg.qr(A, mode='reduced') if you are going to differentiate through "
            "linalg.qr."
        )
    if mode == "complete" and m > n:
        raise RuntimeError(
            "The QR decomposition is not differentiable when mode='complete' and nrows > ncols."
        )
    if m >= n:
        return _qr_square(gQ, gR, Q, R)
    X = R.narrow(-1, 0, m)
    gX = None if gR is None else gR.narrow(-1, 0, m)
    gY = None if gR is None else gR.narrow(-1, m, n - m)
    V = A.narrow(-1, m, n - m)
    gQx = gQ if gY is None else _plus(gQ, V @ mH(gY))
    gU = _qr_square(gQx, gX, Q, X)
    gV = Q @ gY if gY is not None else E.zeros_like(V)
    return E.cat([gU, gV], -1)


defvjp(aten.linalg_qr.default, lambda g, A, mode="reduced", *, result: (
    _qr_grad(g, A, mode, result),))  # fmt: skip


# --------------------------------------------------------------------------- pinv, lstsq


def _pinv_grad(G: Any, X: Any, A: Any) -> Any:
    """The gradient through ``X = pinv(A)`` (NOTE [linalg derivatives])."""
    Gh, Xh = mH(G), mH(X)
    m, n = A.shape[-2], A.shape[-1]
    I_m = E.eye(m, dtype=A.dtype, device=A.device)
    I_n = E.eye(n, dtype=A.dtype, device=A.device)
    return -(Xh @ G @ Xh) + (I_m - A @ X) @ Gh @ (X @ Xh) + (Xh @ X) @ Gh @ (I_n - X @ A)


defvjp(aten.linalg_pinv.atol_rtol_tensor,
       lambda g, self, *, atol=None, rtol=None, hermitian=False, result: (
           _pinv_grad(g, result, self), None, None))  # fmt: skip


def _lstsq_grad(g: Any, A: Any, B: Any, X: Any, needs: Any) -> tuple[Any, Any]:
    gX, gRes = g[0], g[1]
    vector = B.ndim == A.ndim - 1
    Bm = B.unsqueeze(-1) if vector else B
    Xm = X.unsqueeze(-1) if vector else X
    gA = gB = None
    if gX is not None:
        gXm = gX.unsqueeze(-1) if vector else gX
        P = aten.linalg_pinv.atol_rtol_tensor(A)
        if needs[0]:
            gA = _pinv_grad(gXm @ mH(Bm), P, A)
        if needs[1]:
            gB = mH(P) @ gXm
    if gRes is not None and gRes.numel():
        R = Bm - A @ Xm
        w = R * gRes.unsqueeze(-2)
        if needs[0]:
            gA = _plus(gA, -2 * (w @ mH(Xm)))
        if needs[1]:
            gB = _plus(gB, 2 * w)
    if vector and gB is not None:
        gB = gB.squeeze(-1)
    return gA, gB


defvjp(aten.linalg_lstsq.default, lambda g, self, b, rcond=None, *, driver=None, result, needs: (
    _lstsq_grad(g, self, b, result[0], needs)), outputs=(True, True, False, False))  # fmt: skip


# --------------------------------------------------------------------------- cross

defvjp(aten.linalg_cross.default, lambda g, self, other, *, dim=-1: (
    aten.linalg_cross.default(conj(other), g, dim=dim),
    aten.linalg_cross.default(g, conj(self), dim=dim)))  # fmt: skip


def _matrix_exp_grad(g: Any, self: Any) -> tuple[Any]:
    """PyTorch's ``linalg_matrix_exp_differential`` (adjoint): the top-right block of
    ``exp([[A^H, G], [0, A^H]])``."""
    n = self.shape[-1]
    ah = mH(self)
    top = E.cat([ah, g], -1)
    bottom = E.cat([E.zeros_like(g), ah], -1)
    big = aten.linalg_matrix_exp.default(E.cat([top, bottom], -2))
    return (big[..., :n, n:],)


defvjp(aten.linalg_matrix_exp.default, _matrix_exp_grad)


# --------------------------------------------------------------------------- LU
# NOTE [LU factors] in ember/ops/native/lu.py. With ``P^T dA = dL U + L dU``, ``L^{-1} dL``
# strictly lower and ``dU U^{-1}`` upper, the gradient of ``A`` from those of ``L`` and ``U``
# is PyTorch's ``linalg_lu_backward``: for square matrices ``P L^{-H} M U^{-H}`` with
# ``M = tril(L^H gL, -1) + triu(gU U^H)``; a wide matrix's extra columns of ``U`` and a tall
# one's extra rows of ``L`` add their own terms.


def _tril_solve(L: Any, X: Any) -> Any:
    """``L^{-H} X`` for a unit lower triangular ``L``."""
    return aten.linalg_solve_triangular.default(mH(L), X, upper=True, unitriangular=True)


def _triu_solve_right(U: Any, X: Any) -> Any:
    """``X U^{-H}`` for an upper triangular ``U``."""
    return aten.linalg_solve_triangular.default(mH(U), X, upper=False, left=False)


def lu_grad(gL: Any, gU: Any, P: Any, L: Any, U: Any) -> Any:
    """The gradient of ``A = P L U`` from those of ``L`` and ``U`` (None: zero)."""
    m, n = L.shape[-2], U.shape[-1]
    gL = E.zeros_like(L) if gL is None else gL
    gU = E.zeros_like(U) if gU is None else gU
    if m <= n:
        U1, gU1 = U[..., :, :m], gU[..., :, :m]
        lower = mH(L).matmul(gL)
        if m < n:
            lower = lower - gU[..., :, m:].matmul(mH(U[..., :, m:]))
        M = lower.tril(-1) + gU1.matmul(mH(U1)).triu()
        G = _triu_solve_right(U1, M)
        if m < n:
            G = E.cat([G, gU[..., :, m:]], -1)
        return P.matmul(_tril_solve(L, G))
    L1, L2, gL1, gL2 = L[..., :n, :], L[..., n:, :], gL[..., :n, :], gL[..., n:, :]
    N = mH(L1).matmul(gL1).tril(-1) + (gU.matmul(mH(U)) - mH(L2).matmul(gL2)).triu()
    G = E.cat([_tril_solve(L1, N), gL2], -2)
    return P.matmul(_triu_solve_right(U, G))


def _lu_factor_grad(g: Any, A: Any, result: Any) -> tuple[Any]:
    gLU = _first(g)
    if gLU is None:
        return (None,)
    LU, pivots = result[0], result[1]
    k = min(LU.shape[-2], LU.shape[-1])
    P, L, U = aten.lu_unpack.default(LU, pivots)
    return (lu_grad(gLU[..., :, :k].tril(-1), gLU[..., :k, :].triu(), P, L, U),)


def _lu_unpack_grad(g: Any, LU: Any, unpack_data: bool) -> tuple[Any, None]:
    """``lu_unpack``'s packed input takes ``L``'s strict lower and ``U``'s upper gradient."""
    _, gL, gU = g
    if not unpack_data or (gL is None and gU is None):
        return None, None
    m, n = LU.shape[-2], LU.shape[-1]
    k = min(m, n)
    out = E.zeros_like(LU)
    if gU is not None:
        out = out + aten.constant_pad_nd.default(gU.triu(), [0, 0, 0, m - k])
    if gL is not None:
        out = out + aten.constant_pad_nd.default(gL.tril(-1), [0, n - k])
    return out, None


def _lu_solve_grad(
    g: Any, LU: Any, pivots: Any, B: Any, left: bool, adjoint: bool, X: Any, needs: Any
) -> tuple[Any, None, Any]:
    """``B``'s gradient solves the adjoint system; ``LU``'s is ``A``'s (``-gB X^H`` and its
    three mirror images) pulled back through ``A = P L U``."""
    gB = aten.linalg_lu_solve.default(LU, pivots, g, left=left, adjoint=not adjoint)
    if not needs[0]:
        return None, None, gB
    if left:
        gA = -(gB.matmul(mH(X)) if not adjoint else X.matmul(mH(gB)))
    else:
        gA = -(mH(X).matmul(gB) if not adjoint else mH(gB).matmul(X))
    P, L, U = aten.lu_unpack.default(LU, pivots)
    pa = mH(P).matmul(gA)
    gLU = pa.matmul(mH(U)).tril(-1) + mH(L).matmul(pa).triu()
    return gLU, None, gB


defvjp(aten.linalg_lu_factor_ex.default, lambda g, A, *, pivot=True, check_errors=False, result: (
    _lu_factor_grad(g, A, result)))  # fmt: skip
defvjp(aten.lu_unpack.default, lambda g, LU_data, LU_pivots, unpack_data=True, unpack_pivots=True: (
    _lu_unpack_grad(g, LU_data, unpack_data)), outputs=(False, True, True))  # fmt: skip
defvjp(aten.linalg_lu_solve.default, lambda g, LU, pivots, B, *, left=True, adjoint=False, result,
       needs: _lu_solve_grad(g, LU, pivots, B, left, adjoint, result, needs))  # fmt: skip


# the LDL factorisation and its solve: no derivatives in PyTorch (backward raises there)
not_differentiated(ops.aten.linalg_ldl_factor_ex.default, _UNNAMED)
not_differentiated(ops.aten.linalg_ldl_solve.default, _UNNAMED)
