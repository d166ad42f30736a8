"""``spectral_norm`` by a forward pre-hook (PyTorch's older API, beside
``ember.nn.utils.parametrizations.spectral_norm``): the parameter ``name`` becomes
``name_orig``, with buffers ``name_u`` and ``name_v`` for the power iteration, and ``name``
is recomputed as ``name_orig / sigma`` before every forward, ``sigma`` the estimate of the
largest singular value of ``name_orig`` (as a matrix with ``dim`` first).

NOTE [spectral norm by hook]: in training mode each forward first takes
``n_power_iterations`` steps (``v = normalize(W^T u)``, then ``u = normalize(W v)``, written
into the buffers), then ``sigma = u . (W v)`` with copies of ``u`` and ``v`` (so backward
sees the values this forward used); eval mode takes no step. The buffers start as
normalized standard normal draws, in PyTorch's order (``u`` then ``v``), so a seeded run
gives PyTorch's values. The newer parametrization takes 15 steps at registration; this one
takes none, as PyTorch's.
"""

from __future__ import annotations

from typing import Any

import ember
from ember._tensor import Tensor
from ember.nn import functional as F
from ember.nn.modules.module import Module
from ember.nn.parameter import Parameter
from ember.nn.utils._weight_hooks import check_not_registered, remove_hook

__all__ = ["SpectralNorm", "remove_spectral_norm", "spectral_norm"]


def check_power_iterations(n_power_iterations: int) -> None:
    """Both spectral norms (this hook and the parametrization) take at least one power
    iteration a step."""
    if n_power_iterations <= 0:
        raise ValueError(
            "Expected n_power_iterations to be positive, but got "
            f"n_power_iterations={n_power_iterations}"
        )


class SpectralNorm:
    """The forward pre-hook that recomputes ``name`` from ``name_orig`` (NOTE [spectral norm
    by hook])."""

    def __init__(self, name: str, n_power_iterations: int, dim: int, eps: float) -> None:
        check_power_iterations(n_power_iterations)
        self.name, self.n_power_iterations, self.dim, self.eps = name, n_power_iterations, dim, eps

    def reshape_weight_to_matrix(self, weight: Tensor) -> Tensor:
        """``weight`` as a matrix with ``dim`` as its rows."""
        if self.dim != 0:
            weight = weight.movedim(self.dim, 0)
        return weight.reshape(weight.shape[0], -1)

    def compute_weight(self, module: Module, do_power_iteration: bool) -> Tensor:
        weight = getattr(module, self.name + "_orig")
        u = getattr(module, self.name + "_u")
        v = getattr(module, self.name + "_v")
        weight_mat = self.reshape_weight_to_matrix(weight)
        if do_power_iteration:
            with ember.no_grad():
                for _ in range(self.n_power_iterations):
                    v.copy_(F.normalize(weight_mat.t().mv(u), dim=0, eps=self.eps))
                    u.copy_(F.normalize(weight_mat.mv(v), dim=0, eps=self.eps))
            u, v = u.clone(), v.clone()
        sigma = ember.dot(u, weight_mat.mv(v))
        return weight / sigma

    @staticmethod
    def apply(
        module: Module, name: str, n_power_iterations: int, dim: int, eps: float
    ) -> SpectralNorm:
        check_not_registered(module, SpectralNorm, name, "spectral_norm")
        weight = module._parameters.get(name)
        if weight is None:
            raise ValueError(f"Module '{module}' has no parameter with name '{name}'")
        if not -weight.ndim <= dim < max(weight.ndim, 1):
            raise IndexError(
                f"spectral_norm: dim {dim} is out of range for a {weight.ndim}-d '{name}'"
            )
        fn = SpectralNorm(name, n_power_iterations, dim % max(weight.ndim, 1), eps)
        with ember.no_grad():
            h, w = fn.reshape_weight_to_matrix(weight).shape
            u = F.normalize(weight.new_empty(h).normal_(0, 1), dim=0, eps=eps)
            v = F.normalize(weight.new_empty(w).normal_(0, 1), dim=0, eps=eps)
        del module._parameters[name]
        module.register_parameter(name + "_orig", weight)
        setattr(module, name, weight.data)
        module.register_buffer(name + "_u", u)
        module.register_buffer(name + "_v", v)
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module: Module) -> None:
        with ember.no_grad():
            weight = self.compute_weight(module, do_power_iteration=False)
        delattr(module, self.name)
        del module._parameters[self.name + "_orig"]
        del module._buffers[self.name + "_u"]
        del module._buffers[self.name + "_v"]
        module.register_parameter(self.name, Parameter(weight.detach()))

    def __call__(self, module: Module, inputs: Any) -> None:
        setattr(module, self.name, self.compute_weight(module, module.training))


def spectral_norm(
    module: Module,
    name: str = "weight",
    n_power_iterations: int = 1,
    eps: float = 1e-12,
    dim: int | None = None,
) -> Module:
    """Divide ``module.<name>`` by its spectral norm before every forward, estimated by
    power iteration (NOTE [spectral norm by hook]); ``dim`` defaults to 1 for transposed
    convolutions and 0 otherwise.

    >>> m = ember.nn.utils.spectral_norm(ember.nn.Linear(3, 2))
    >>> sorted(m.state_dict())
    ['bias', 'weight_orig', 'weight_u', 'weight_v']
    """
    if dim is None:
        dim = 1 if type(module).__name__.startswith("ConvTranspose") else 0
    SpectralNorm.apply(module, name, n_power_iterations, dim, eps)
    return module


def remove_spectral_norm(module: Module, name: str = "weight") -> Module:
    """Undo ``spectral_norm``: ``name`` becomes one parameter again, with its current value.

    >>> m = ember.nn.utils.remove_spectral_norm(ember.nn.utils.spectral_norm(ember.nn.Linear(3, 2)))
    >>> sorted(n for n, _ in m.named_parameters())
    ['bias', 'weight']
    """
    return remove_hook(module, SpectralNorm, name, "spectral_norm")
