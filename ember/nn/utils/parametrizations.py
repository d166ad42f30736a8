"""Parametrizations built on ``ember.nn.utils.parametrize``: ``weight_norm`` and
``spectral_norm``."""

from __future__ import annotations

import ember
from ember._tensor import Tensor
from ember.nn import functional as F
from ember.nn.modules.module import Module
from ember.nn.utils import parametrize
from ember.ops.registry import ops

aten = ops.aten

__all__ = ["spectral_norm", "weight_norm"]


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
        if n_power_iterations <= 0:
            raise ValueError(
                "Expected n_power_iterations to be positive, but got "
                f"n_power_iterations={n_power_iterations}"
            )
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
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        transposed = type(module).__name__.startswith("ConvTranspose")
        dim = 1 if transposed else 0
    parametrize.register_parametrization(
        module, name, _SpectralNorm(weight, n_power_iterations, dim, eps)
    )
    return module
