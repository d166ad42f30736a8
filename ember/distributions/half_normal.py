"""``HalfNormal(scale)``: ``|X|`` for ``X ~ Normal(0, scale)``."""

from __future__ import annotations

import math
from typing import Any

import ember
from ember._tensor import Size, Tensor
from ember.distributions import constraints
from ember.distributions.normal import Normal
from ember.distributions.transformed_distribution import TransformedDistribution
from ember.distributions.transforms import AbsTransform

__all__ = ["HalfNormal"]


class HalfNormal(TransformedDistribution):
    """The absolute value of a ``Normal(0, scale)`` draw (the same draws as PyTorch's).

    >>> ember.distributions.HalfNormal(1.0).log_prob(ember.tensor(0.0))
    tensor(-0.2258)
    """

    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative  # type: ignore[assignment]
    has_rsample = True  # type: ignore[assignment]

    def __init__(self, scale: Any, validate_args: bool | None = None) -> None:
        base = Normal(0, scale, validate_args=False)
        super().__init__(base, AbsTransform(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> HalfNormal:
        new = self._get_checked_instance(HalfNormal, _instance)
        batch_shape = Size(batch_shape)
        new.base_dist = self.base_dist.expand(batch_shape)
        new.transforms = self.transforms
        return self._finish_expand(new, batch_shape)  # type: ignore[no-any-return]

    @property
    def scale(self) -> Tensor:
        return self.base_dist.scale  # type: ignore[attr-defined, no-any-return]

    @property
    def mean(self) -> Tensor:
        return self.scale * math.sqrt(2 / math.pi)

    @property
    def mode(self) -> Tensor:
        return ember.zeros_like(self.scale)

    @property
    def variance(self) -> Tensor:
        return self.scale.pow(2) * (1 - 2 / math.pi)

    def log_prob(self, value: Any) -> Tensor:
        value = ember.as_tensor(value, dtype=self.scale.dtype)
        if self._validate_args:
            self._validate_sample(value)
        log_prob = self.base_dist.log_prob(value) + math.log(2)
        return ember.where(value >= 0, log_prob, -math.inf)

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob: Tensor) -> Tensor:
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self) -> Tensor:
        return self.base_dist.entropy() - math.log(2)
