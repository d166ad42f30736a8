"""``HalfNormal(scale)``: ``|X|`` for ``X ~ Normal(0, scale)``."""

from __future__ import annotations

import math

from ember._tensor import Tensor
from ember.distributions._folded import _Folded
from ember.distributions.normal import Normal

__all__ = ["HalfNormal"]


class HalfNormal(_Folded):
    """The absolute value of a ``Normal(0, scale)`` draw (the same draws as PyTorch's).

    >>> ember.distributions.HalfNormal(1.0).log_prob(ember.tensor(0.0))
    tensor(-0.2258)
    """

    _base = Normal

    @property
    def mean(self) -> Tensor:
        return self.scale * math.sqrt(2 / math.pi)

    @property
    def variance(self) -> Tensor:
        return self.scale.pow(2) * (1 - 2 / math.pi)
