"""Parametrizations built on ``ember.nn.utils.parametrize``: ``weight_norm``."""

from __future__ import annotations

from ember._tensor import Tensor
from ember.nn.modules.module import Module
from ember.nn.utils import parametrize
from ember.ops.registry import ops

aten = ops.aten

__all__ = ["weight_norm"]


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
