"""``Normal(loc, scale)``: the Gaussian distribution, reparametrisable."""

from __future__ import annotations

import math
import numbers
from typing import Any

import ember
from ember._tensor import Tensor
from ember.distributions.distribution import LocScale
from ember.distributions.exp_family import ExponentialFamily
from ember.distributions.utils import EMPTY, standard_normal

__all__ = ["Normal"]


class Normal(LocScale, ExponentialFamily):
    """The normal distribution with mean ``loc`` and standard deviation ``scale``.

    >>> ember.distributions.Normal(0.0, 1.0).log_prob(ember.tensor(0.0))
    tensor(-0.9189)
    """

    def expand(self, batch_shape: Any, _instance: Any = None) -> Normal:
        return self._expanded(Normal, batch_shape, _instance, ("loc", "scale"))  # type: ignore[no-any-return]

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def stddev(self) -> Tensor:
        return self.scale

    @property
    def variance(self) -> Tensor:
        return self.stddev.pow(2)

    def rsample(self, sample_shape: Any = EMPTY) -> Tensor:
        """``loc + eps * scale`` with standard normal ``eps``: differentiable in both."""
        shape = self._extended_shape(sample_shape)
        eps = standard_normal(shape, self.loc.dtype, self.loc.device)
        return self.loc + eps * self.scale

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        var = self.scale**2
        log_scale = (
            math.log(self.scale) if isinstance(self.scale, numbers.Real) else self.scale.log()
        )
        return -((value - self.loc) ** 2) / (2 * var) - log_scale - math.log(math.sqrt(2 * math.pi))

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 * (1 + ember.erf((value - self.loc) * self.scale.reciprocal() / math.sqrt(2)))

    def icdf(self, value: Tensor) -> Tensor:
        """The quantile ``loc + scale * sqrt(2) * erfinv(2 * value - 1)``."""
        return self.loc + self.scale * ember.erfinv(2 * value - 1) * math.sqrt(2)

    def entropy(self) -> Tensor:
        return 0.5 + 0.5 * math.log(2 * math.pi) + ember.log(self.scale)

    # NOTE [Bregman entropy]: the natural parameters and log normaliser
    @property
    def _natural_params(self) -> tuple[Tensor, ...]:
        return (self.loc / self.scale.pow(2), -0.5 * self.scale.pow(2).reciprocal())

    def _log_normalizer(self, x: Tensor, y: Tensor) -> Tensor:
        return -0.25 * x.pow(2) / y + 0.5 * ember.log(-math.pi / y)

    _mean_carrier_measure = 0
