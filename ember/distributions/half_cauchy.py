"""``HalfCauchy(scale)``: ``|X|`` for ``X ~ Cauchy(0, scale)``."""

from __future__ import annotations

import math

import ember
from ember._tensor import Tensor
from ember.distributions._folded import _Folded
from ember.distributions.cauchy import Cauchy

__all__ = ["HalfCauchy"]


class HalfCauchy(_Folded):
    """The absolute value of a ``Cauchy(0, scale)`` draw (the same draws as PyTorch's).

    >>> ember.distributions.HalfCauchy(1.0).log_prob(ember.tensor(0.0))
    tensor(-0.4516)
    """

    _base = Cauchy

    @property
    def mean(self) -> Tensor:
        return ember.full(self._extended_shape(), math.inf, dtype=self.scale.dtype)

    @property
    def variance(self) -> Tensor:
        return self.base_dist.variance
