"""Parametrizations built on ``ember.nn.utils.parametrize``: ``weight_norm``,
``spectral_norm`` and ``orthogonal``."""

from __future__ import annotations

import math

import ember
from ember._tensor import Tensor
from ember.nn import functional as F
from ember.nn.modules.module import Module
from ember.nn.utils import parametrize
from ember.nn.utils.spectral_norm import check_power_iterations
from ember.ops.registry import ops

aten = ops.aten

__all__ = ["orthogonal", "spectral_norm", "weight_norm"]


class _WeightNorm(Module):
    """``weight = g * v / ||v||`` over every dim but ``dim``; ``right_inverse`` splits a
    weight into ``(g, v)``."""

    def __init__(self, dim: int | None = 0) -> None:
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g: Tensor, weight_v: Tensor) -> Tensor:
        return aten._weight_norm.default(weight_v, weight_g, self.dim)  # type: ignore[no-any-return]

    def right_inverse(self, weight: Tensor) -> tuple[Tensor, Tensor]:
        return aten.norm_except_dim.default(weight, 2, self.dim), weight


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    """Reparametrize ``module.<name>`` as a magnitude (``parametrizations.<name>.original0``)
    times a direction (``original1``), as PyTorch's.

    >>> m = ember.nn.utils.parametrizations.weight_norm(ember.nn.Linear(3, 2))
    >>> list(m.state_dict())
    ['bias', 'parametrizations.weight.original0', 'parametrizations.weight.original1']
    """
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)
    return module


def _tensor_named(module: Module, name: str) -> Tensor:
    """``module``'s parameter or buffer ``name``, which a parametrization replaces."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    return weight


class _SpectralNorm(Module):
    """``weight / sigma`` with ``sigma`` the largest singular value of the weight (as a
    matrix with ``dim`` first), estimated by power iteration on the buffers ``_u`` and
    ``_v``: ``n_power_iterations`` steps per forward in training mode, none in eval."""

    def __init__(
        self, weight: Tensor, n_power_iterations: int = 1, dim: int = 0, eps: float = 1e-12
    ) -> None:
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError(
                "Dimension out of range (expected to be in range of "
                f"[-{ndim}, {ndim - 1}] but got {dim})"
            )
        check_power_iterations(n_power_iterations)
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            weight_mat = self._reshape_weight_to_matrix(weight)
            h, w = weight_mat.shape
            u = F.normalize(weight_mat.new_empty(h).normal_(0, 1), dim=0, eps=self.eps)
            v = F.normalize(weight_mat.new_empty(w).normal_(0, 1), dim=0, eps=self.eps)
            self.register_buffer("_u", u)
            self.register_buffer("_v", v)
            self._power_method(weight_mat, 15)

    def _reshape_weight_to_matrix(self, weight: Tensor) -> Tensor:
        if self.dim != 0:
            weight = weight.movedim(self.dim, 0)
        return weight.flatten(1)

    def _power_method(self, weight_mat: Tensor, n_power_iterations: int) -> None:
        with ember.no_grad():
            for _ in range(n_power_iterations):
                self._u.copy_(F.normalize(weight_mat.mv(self._v), dim=0, eps=self.eps))
                adjoint = weight_mat.mT.conj() if weight_mat.is_complex() else weight_mat.mT
                self._v.copy_(F.normalize(adjoint.mv(self._u), dim=0, eps=self.eps))

    def forward(self, weight: Tensor) -> Tensor:
        if weight.ndim == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        weight_mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(weight_mat, self.n_power_iterations)
        u, v = self._u.clone(), self._v.clone()
        sigma = (u.conj() * weight_mat.mv(v)).sum()
        return weight / sigma

    def right_inverse(self, value: Tensor) -> Tensor:
        return value


def spectral_norm(
    module: Module,
    name: str = "weight",
    n_power_iterations: int = 1,
    eps: float = 1e-12,
    dim: int | None = None,
) -> Module:
    """Reparametrize ``module.<name>`` divided by its spectral norm (largest singular
    value), estimated by power iteration, as PyTorch's.

    >>> m = ember.nn.utils.parametrizations.spectral_norm(ember.nn.Linear(3, 2))
    >>> list(m.state_dict())[2:]
    ['parametrizations.weight.0._u', 'parametrizations.weight.0._v']
    """
    weight = _tensor_named(module, name)
    if dim is None:
        transposed = type(module).__name__.startswith("ConvTranspose")
        dim = 1 if transposed else 0
    parametrize.register_parametrization(
        module, name, _SpectralNorm(weight, n_power_iterations, dim, eps)
    )
    return module


# ---- orthogonal ----


def _matrix_exp(a: Tensor) -> Tensor:
    """``exp(a)`` of square matrices by scaling and squaring a degree-18 Taylor sum, made
    of matmuls so autograd differentiates it (ember has no ``matrix_exp`` op yet)."""
    norm = float(a.detach().abs().sum(-2).amax()) if a.numel() else 0.0
    squarings = max(0, int(math.ceil(math.log2(norm))) + 1) if norm > 0.5 else 0
    a = a / (2.0**squarings)
    eye = ember.eye(a.shape[-1], dtype=a.dtype).expand(a.shape)
    term, total = eye, eye
    for k in range(1, 19):
        term = term @ a / k
        total = total + term
    for _ in range(squarings):
        total = total @ total
    return total


def _householder_product(a: Tensor, tau: Tensor) -> Tensor:
    """The first ``k`` columns of ``H_1 ... H_k``, ``H_i = I - tau_i v_i v_i^H`` with ``v_i``
    the i-th column of ``a`` below the diagonal and 1 on it (LAPACK's ``orgqr``), as
    compositions autograd differentiates (ember has no ``householder_product`` op yet)."""
    n, k = a.shape[-2], a.shape[-1]
    rows = ember.arange(n)
    q = ember.eye(n, dtype=a.dtype).expand(*a.shape[:-2], n, n)
    for i in range(k):
        below = (rows > i).to(a.dtype)
        unit = (rows == i).to(a.dtype)
        v = a[..., :, i] * below + unit
        qv = q @ v.unsqueeze(-1)
        q = q - tau[..., i, None, None] * (qv @ v.conj().unsqueeze(-2))
    return q[..., :k]


def _make_orthogonal(a: Tensor) -> Tensor:
    """The Q of ``a``'s QR decomposition whose R has a positive diagonal."""
    q, r = ember.linalg.qr(a)
    return q * r.diagonal(dim1=-2, dim2=-1).sgn().unsqueeze(-2)


def _is_orthogonal(q: Tensor) -> bool:
    n, k = q.shape[-2], q.shape[-1]
    eye = ember.eye(k, dtype=q.dtype)
    eps = 10.0 * n * float(ember.finfo(q.dtype).eps)
    gram = (q.mT.conj() if q.is_complex() else q.mT) @ q
    return bool(ember.allclose(gram, eye.expand(gram.shape), atol=eps))


class _Orthogonal(Module):
    """An orthogonal (unitary) matrix from unconstrained parameters: the exponential or the
    Cayley transform of a skew-symmetric matrix, or a product of Householder reflections,
    times the ``base`` the original weight gave (``use_trivialization``), as PyTorch's."""

    def __init__(
        self, weight: Tensor, orthogonal_map: str, *, use_trivialization: bool = True
    ) -> None:  # noqa: E501
        super().__init__()
        if weight.is_complex() and orthogonal_map == "householder":
            raise ValueError("The householder parametrization does not support complex tensors.")
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, x: Tensor) -> Tensor:
        n, k = x.shape[-2], x.shape[-1]
        transposed = n < k
        if transposed:
            x = x.mT
            n, k = k, n
        if self.orthogonal_map in ("matrix_exp", "cayley"):
            x = x.tril()
            if n != k:
                x = ember.cat([x, x.new_zeros(n, n - k).expand(*x.shape[:-2], -1, -1)], dim=-1)
            a = x - (x.mT.conj() if x.is_complex() else x.mT)
            if self.orthogonal_map == "matrix_exp":
                q = _matrix_exp(a)
            else:
                eye = ember.eye(n, dtype=a.dtype)
                q = ember.linalg.solve(eye - 0.5 * a, eye + 0.5 * a)
            if n != k:
                q = q[..., :k]
        else:
            a = x.tril(diagonal=-1)
            tau = 2.0 / (1.0 + (a * a).sum(dim=-2))
            q = _householder_product(a, tau)
            q = q * x.diagonal(dim1=-2, dim2=-1).int().unsqueeze(-2)
        if "base" in self._buffers:
            q = self.base @ q
        if transposed:
            q = q.mT
        return q

    def right_inverse(self, q: Tensor) -> Tensor:
        with ember.no_grad():
            if tuple(q.shape) != tuple(self.shape):
                raise ValueError(
                    f"Expected a matrix or batch of matrices of shape {tuple(self.shape)}. "
                    f"Got a tensor of shape {tuple(q.shape)}."
                )
            q_init = q
            n, k = q.shape[-2], q.shape[-1]
            if n < k:
                q = q.mT
                n, k = k, n
            if "base" not in self._buffers:
                raise NotImplementedError(
                    "orthogonal(use_trivialization=False): assigning needs geqrf, which ember "
                    "does not have yet; keep use_trivialization=True"
                )
            if n == k:
                q = q.clone() if _is_orthogonal(q) else _make_orthogonal(q)
            else:
                extra = ember.randn(*q.shape[:-2], n, n - k, dtype=q.dtype)
                q = _make_orthogonal(ember.cat([q, extra], dim=-1))
            self.base = q
            neg_id = ember.zeros_like(q_init)
            neg_id.diagonal(dim1=-2, dim2=-1).fill_(-1.0)
            return neg_id


def orthogonal(
    module: Module,
    name: str = "weight",
    orthogonal_map: str | None = None,
    *,
    use_trivialization: bool = True,
) -> Module:
    """Reparametrize ``module.<name>`` as an orthogonal (or unitary) matrix, by
    ``"matrix_exp"``, ``"cayley"`` or ``"householder"`` (PyTorch's defaults: the exponential
    for square or complex weights, Householder otherwise).

    >>> m = ember.nn.utils.parametrizations.orthogonal(ember.nn.Linear(3, 3))
    >>> w = m.weight.detach(); bool(ember.allclose(w @ w.T, ember.eye(3), atol=1e-5))
    True
    """
    weight = _tensor_named(module, name)
    if weight.ndim < 2:
        raise ValueError(
            f"Expected a matrix or batch of matrices. Got a tensor of {weight.ndim} dimensions."
        )
    if orthogonal_map is None:
        square = weight.shape[-2] == weight.shape[-1]
        orthogonal_map = "matrix_exp" if square or weight.is_complex() else "householder"
    if orthogonal_map not in ("matrix_exp", "cayley", "householder"):
        raise ValueError(
            'orthogonal_map has to be one of "matrix_exp", "cayley", "householder". '
            f"Got: {orthogonal_map}"
        )
    orth = _Orthogonal(weight, orthogonal_map, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module
