"""``Laplace(loc, scale)``: the double exponential distribution, reparametrisable."""

from __future__ import annotations

import math
from typing import Any

import ember
from ember._tensor import Tensor
from ember.distributions.distribution import Distribution, LocScale
from ember.distributions.utils import EMPTY

__all__ = ["Laplace"]


class Laplace(LocScale, Distribution):
    """The Laplace distribution with location ``loc`` and scale ``scale``.

    >>> ember.distributions.Laplace(0.0, 1.0).log_prob(ember.tensor(0.0))
    tensor(-0.6931)
    """

    def expand(self, batch_shape: Any, _instance: Any = None) -> Laplace:
        return self._expanded(Laplace, batch_shape, _instance, ("loc", "scale"))  # type: ignore[no-any-return]

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        return 2 * self.scale.pow(2)

    @property
    def stddev(self) -> Tensor:
        return math.sqrt(2) * self.scale

    def rsample(self, sample_shape: Any = EMPTY) -> Tensor:
        """``loc - scale * sign(u) * log(1 - |u|)`` for ``u`` uniform in (-1, 1)."""
        shape = self._extended_shape(sample_shape)
        eps = float(ember.finfo(self.loc.dtype).eps)
        u = ember.empty(shape, dtype=self.loc.dtype).uniform_(eps - 1, 1)
        return self.loc - self.scale * u.sign() * ember.log1p(-u.abs())

    def log_prob(self, value: Any) -> Tensor:
        value = ember.as_tensor(value, dtype=self.loc.dtype)
        if self._validate_args:
            self._validate_sample(value)
        return -ember.log(2 * self.scale) - ember.abs(value - self.loc) / self.scale

    def cdf(self, value: Tensor) -> Tensor:
        z = (value - self.loc) / self.scale
        return 0.5 - 0.5 * z.sign() * ember.expm1(-z.abs())

    def icdf(self, value: Tensor) -> Tensor:
        term = value - 0.5
        return self.loc - self.scale * term.sign() * ember.log1p(-2 * term.abs())

    def entropy(self) -> Tensor:
        return 1 + ember.log(2 * self.scale)
