"""``Weibull(scale, concentration)``: ``scale * E ** (1 / concentration)`` for a standard
exponential ``E``, reparametrisable."""

from __future__ import annotations

from typing import Any

import ember
from ember._tensor import Size, Tensor
from ember.distributions import constraints
from ember.distributions.gamma import Exponential
from ember.distributions.gumbel import EULER_GAMMA
from ember.distributions.transformed_distribution import TransformedDistribution
from ember.distributions.transforms import AffineTransform, PowerTransform
from ember.distributions.utils import broadcast_all

__all__ = ["Weibull"]


class Weibull(TransformedDistribution):
    """The two-parameter Weibull distribution, drawn from ``Exponential(1)`` draws as PyTorch
    draws it (same seed, same samples).

    >>> ember.distributions.Weibull(1.0, 2.0).log_prob(ember.tensor(1.0))
    tensor(-0.3069)
    """

    arg_constraints = {"scale": constraints.positive, "concentration": constraints.positive}
    support = constraints.positive  # type: ignore[assignment]
    has_rsample = True  # type: ignore[assignment]

    def __init__(self, scale: Any, concentration: Any, validate_args: bool | None = None) -> None:
        self.scale, self.concentration = broadcast_all(scale, concentration)
        self.concentration_reciprocal = self.concentration.reciprocal()
        base = Exponential(ember.ones_like(self.scale), validate_args=validate_args)
        transforms = [
            PowerTransform(exponent=self.concentration_reciprocal),
            AffineTransform(loc=0, scale=self.scale),
        ]
        super().__init__(base, transforms, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Weibull:
        new = self._get_checked_instance(Weibull, _instance)
        batch_shape = Size(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        new.concentration = self.concentration.expand(batch_shape)
        new.concentration_reciprocal = new.concentration.reciprocal()
        new.base_dist = Exponential(ember.ones_like(new.scale), validate_args=False)
        new.transforms = [
            PowerTransform(exponent=new.concentration_reciprocal),
            AffineTransform(loc=0, scale=new.scale),
        ]
        return self._finish_expand(new, batch_shape)  # type: ignore[no-any-return]

    @property
    def mean(self) -> Tensor:
        return self.scale * ember.exp(ember.lgamma(1 + self.concentration_reciprocal))

    @property
    def mode(self) -> Tensor:
        c = self.concentration
        return self.scale * ((c - 1) / c) ** c.reciprocal()

    @property
    def variance(self) -> Tensor:
        r = self.concentration_reciprocal
        return self.scale.pow(2) * (
            ember.exp(ember.lgamma(1 + 2 * r)) - ember.exp(2 * ember.lgamma(1 + r))
        )

    def entropy(self) -> Tensor:
        return (
            EULER_GAMMA * (1 - self.concentration_reciprocal)
            + ember.log(self.scale * self.concentration_reciprocal)
            + 1
        )
