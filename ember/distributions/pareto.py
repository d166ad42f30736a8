"""``Pareto(scale, alpha)``: ``scale * exp(E)`` for ``E ~ Exponential(alpha)``."""

from __future__ import annotations

from typing import Any

from ember._tensor import Size, Tensor
from ember.distributions import constraints
from ember.distributions.gamma import Exponential
from ember.distributions.transformed_distribution import TransformedDistribution
from ember.distributions.transforms import AffineTransform, ExpTransform
from ember.distributions.utils import broadcast_all

__all__ = ["Pareto"]


class Pareto(TransformedDistribution):
    """The Pareto type-I distribution on ``[scale, inf)`` with tail index ``alpha``, drawn from
    exponential draws as PyTorch draws it (same seed, same samples).

    >>> ember.distributions.Pareto(1.0, 2.0).log_prob(ember.tensor(2.0))
    tensor(-1.3863)
    """

    arg_constraints = {"alpha": constraints.positive, "scale": constraints.positive}
    has_rsample = True  # type: ignore[assignment]

    def __init__(self, scale: Any, alpha: Any, validate_args: bool | None = None) -> None:
        self.scale, self.alpha = broadcast_all(scale, alpha)
        base = Exponential(self.alpha, validate_args=validate_args)
        transforms = [ExpTransform(), AffineTransform(loc=0, scale=self.scale)]
        super().__init__(base, transforms, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Pareto:
        new = self._get_checked_instance(Pareto, _instance)
        batch_shape = Size(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        new.alpha = self.alpha.expand(batch_shape)
        new.base_dist = Exponential(new.alpha, validate_args=False)
        new.transforms = [ExpTransform(), AffineTransform(loc=0, scale=new.scale)]
        return self._finish_expand(new, batch_shape)  # type: ignore[no-any-return]

    @property
    def support(self) -> Any:
        return constraints.greater_than_eq(self.scale)

    @property
    def mean(self) -> Tensor:
        a = self.alpha.clamp(min=1)  # infinite for alpha <= 1
        return a * self.scale / (a - 1)

    @property
    def mode(self) -> Tensor:
        return self.scale

    @property
    def variance(self) -> Tensor:
        a = self.alpha.clamp(min=2)  # infinite for alpha <= 2
        return self.scale.pow(2) * a / ((a - 1).pow(2) * (a - 2))

    def entropy(self) -> Tensor:
        return (self.scale / self.alpha).log() + (1 + self.alpha.reciprocal())
