"""The half distributions (``HalfNormal``, ``HalfCauchy``): ``|X|`` for ``X`` a symmetric
distribution centred on 0 with a ``scale``, whose density, cdf, icdf and entropy follow from
the base's by folding at 0. Each subclass names its base and gives its moments."""

from __future__ import annotations

import math
from typing import Any

import ember
from ember._tensor import Tensor
from ember.distributions import constraints
from ember.distributions.transformed_distribution import TransformedDistribution
from ember.distributions.transforms import AbsTransform


class _Folded(TransformedDistribution):
    """``|X|`` for ``X ~ base(0, scale)`` (the same draws as PyTorch's)."""

    _base: Any  # the symmetric base distribution's class
    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative  # type: ignore[assignment]
    has_rsample = True  # type: ignore[assignment]

    def __init__(self, scale: Any, validate_args: bool | None = None) -> None:
        base = self._base(0, scale, validate_args=False)
        super().__init__(base, AbsTransform(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Any:
        return super().expand(batch_shape, self._get_checked_instance(type(self), _instance))

    @property
    def scale(self) -> Tensor:
        return self.base_dist.scale  # type: ignore[attr-defined, no-any-return]

    @property
    def mode(self) -> Tensor:
        return ember.zeros_like(self.scale)

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
