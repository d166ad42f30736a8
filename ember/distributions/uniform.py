"""``Uniform(low, high)``: the uniform distribution on ``[low, high)``, reparametrisable."""

from __future__ import annotations

import numbers
from typing import Any

import ember
from ember._tensor import Size, Tensor
from ember.distributions import constraints
from ember.distributions.distribution import Distribution
from ember.distributions.utils import EMPTY, broadcast_all

__all__ = ["Uniform"]


class Uniform(Distribution):
    """Uniform samples from the half-open interval ``[low, high)``.

    >>> ember.distributions.Uniform(0.0, 4.0).entropy()
    tensor(1.3863)
    """

    has_rsample = True

    @property
    def arg_constraints(self) -> dict[str, constraints.Constraint]:  # type: ignore[override]
        return {
            "low": constraints.less_than(self.high),
            "high": constraints.greater_than(self.low),
        }

    def __init__(self, low: Any, high: Any, validate_args: bool | None = None) -> None:
        self.low, self.high = broadcast_all(low, high)
        if isinstance(low, numbers.Number) and isinstance(high, numbers.Number):
            batch_shape = Size()
        else:
            batch_shape = self.low.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Uniform:
        return self._expanded(Uniform, batch_shape, _instance, ("low", "high"))  # type: ignore[no-any-return]

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self) -> constraints.Constraint:
        return constraints.interval(self.low, self.high)

    @property
    def mean(self) -> Tensor:
        return (self.high + self.low) / 2

    @property
    def mode(self) -> Tensor:
        return float("nan") * self.high

    @property
    def stddev(self) -> Tensor:
        return (self.high - self.low) / 12**0.5

    @property
    def variance(self) -> Tensor:
        return (self.high - self.low).pow(2) / 12

    def rsample(self, sample_shape: Any = EMPTY) -> Tensor:
        """``low + u * (high - low)`` with ``u`` uniform on ``[0, 1)``."""
        shape = self._extended_shape(sample_shape)
        u = ember.rand(shape, dtype=self.low.dtype, device=self.low.device)
        return self.low + u * (self.high - self.low)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        inside_low = self.low.le(value).type_as(self.low)
        inside_high = self.high.gt(value).type_as(self.low)
        return ember.log(inside_low.mul(inside_high)) - ember.log(self.high - self.low)

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return ((value - self.low) / (self.high - self.low)).clamp(min=0, max=1)

    def icdf(self, value: Tensor) -> Tensor:
        return value * (self.high - self.low) + self.low

    def entropy(self) -> Tensor:
        return ember.log(self.high - self.low)
