"""``InverseGamma(concentration, rate)``: ``1 / X`` for ``X ~ Gamma(concentration, rate)``."""

from __future__ import annotations

import math
from typing import Any

import ember
from ember._tensor import Size, Tensor
from ember.distributions import constraints
from ember.distributions.gamma import Gamma
from ember.distributions.transformed_distribution import TransformedDistribution
from ember.distributions.transforms import PowerTransform

__all__ = ["InverseGamma"]


class InverseGamma(TransformedDistribution):
    """The inverse gamma distribution (``rate`` is its scale). Its draws invert ``Gamma``'s,
    which come from ember's gamma sampler, not PyTorch's stream.

    >>> ember.distributions.InverseGamma(3.0, 2.0).mean
    tensor(1.)
    """

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.positive  # type: ignore[assignment]
    has_rsample = True  # type: ignore[assignment]

    def __init__(self, concentration: Any, rate: Any, validate_args: bool | None = None) -> None:
        base = Gamma(concentration, rate, validate_args=validate_args)
        neg_one = -ember.ones_like(base.rate)
        super().__init__(base, PowerTransform(neg_one), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> InverseGamma:
        new = self._get_checked_instance(InverseGamma, _instance)
        batch_shape = Size(batch_shape)
        new.base_dist = Gamma(
            self.concentration.expand(batch_shape),
            self.rate.expand(batch_shape),
            validate_args=False,
        )
        new.transforms = [PowerTransform(-ember.ones_like(new.base_dist.rate))]
        return self._finish_expand(new, batch_shape)  # type: ignore[no-any-return]

    @property
    def concentration(self) -> Tensor:
        return self.base_dist.concentration  # type: ignore[attr-defined, no-any-return]

    @property
    def rate(self) -> Tensor:
        return self.base_dist.rate  # type: ignore[attr-defined, no-any-return]

    @property
    def mean(self) -> Tensor:
        c = self.concentration
        return ember.where(c > 1, self.rate / (c - 1), math.inf)

    @property
    def mode(self) -> Tensor:
        return self.rate / (self.concentration + 1)

    @property
    def variance(self) -> Tensor:
        c = self.concentration
        return ember.where(c > 2, self.rate.pow(2) / ((c - 1).pow(2) * (c - 2)), math.inf)

    def entropy(self) -> Tensor:
        c = self.concentration
        return c + self.rate.log() + c.lgamma() - (1 + c) * c.digamma()
