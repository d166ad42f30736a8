"""``Cauchy(loc, scale)``: the Lorentz distribution (no mean, no variance), reparametrisable."""

from __future__ import annotations

import math
from typing import Any

import ember
from ember._tensor import Tensor
from ember.distributions.distribution import Distribution, LocScale
from ember.distributions.utils import EMPTY

__all__ = ["Cauchy"]


class Cauchy(LocScale, Distribution):
    """The Cauchy distribution with location ``loc`` (its median) and half-width ``scale``.

    ``rsample`` is ``loc + scale * e`` with ``e`` from ``Tensor.cauchy_``, as PyTorch draws it:
    with the same seed the samples are PyTorch's.

    >>> ember.distributions.Cauchy(0.0, 1.0).log_prob(ember.tensor(0.0))
    tensor(-1.1447)
    """

    def expand(self, batch_shape: Any, _instance: Any = None) -> Cauchy:
        return self._expanded(Cauchy, batch_shape, _instance, ("loc", "scale"))  # type: ignore[no-any-return]

    @property
    def mean(self) -> Tensor:
        return ember.full(self._extended_shape(), math.nan, dtype=self.loc.dtype)

    @property
    def variance(self) -> Tensor:
        return ember.full(self._extended_shape(), math.inf, dtype=self.loc.dtype)

    def rsample(self, sample_shape: Any = EMPTY) -> Tensor:
        shape = self._extended_shape(sample_shape)
        eps = ember.empty(shape, dtype=self.loc.dtype).cauchy_()
        return self.loc + eps * self.scale

    def log_prob(self, value: Any) -> Tensor:
        value = ember.as_tensor(value, dtype=self.loc.dtype)
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        return -math.log(math.pi) - self.scale.log() - ember.log1p(z.pow(2))

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return ember.atan((value - self.loc) / self.scale) / math.pi + 0.5

    def icdf(self, value: Tensor) -> Tensor:
        return ember.tan(math.pi * (value - 0.5)) * self.scale + self.loc

    def entropy(self) -> Tensor:
        return math.log(4 * math.pi) + self.scale.log()
