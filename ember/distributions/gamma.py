"""``Gamma(concentration, rate)`` and ``Exponential(rate)``: reparametrisable."""

from __future__ import annotations

import numbers
from typing import Any

import ember
from ember._tensor import Size, Tensor
from ember.distributions import constraints
from ember.distributions._gamma_sampler import regularized_gamma_p, standard_gamma
from ember.distributions.exp_family import ExponentialFamily
from ember.distributions.utils import EMPTY, broadcast_all

__all__ = ["Exponential", "Gamma"]


def _batch(*args: Any) -> Size:
    if all(isinstance(a, numbers.Number) for a in args):
        return Size()
    return broadcast_all(*args)[0].size()


class Gamma(ExponentialFamily):
    """The gamma distribution with shape ``concentration`` and inverse scale ``rate``.

    >>> ember.distributions.Gamma(2.0, 1.0).log_prob(ember.tensor(1.0))
    tensor(-1.)
    """

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, concentration: Any, rate: Any, validate_args: bool | None = None) -> None:
        self.concentration, self.rate = broadcast_all(concentration, rate)
        super().__init__(_batch(concentration, rate), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Gamma:
        return self._expanded(Gamma, batch_shape, _instance, ("concentration", "rate"))  # type: ignore[no-any-return]

    @property
    def mean(self) -> Tensor:
        return self.concentration / self.rate

    @property
    def mode(self) -> Tensor:
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self) -> Tensor:
        return self.concentration / self.rate.pow(2)

    @property
    def stddev(self) -> Tensor:
        return self.variance.sqrt()

    def rsample(self, sample_shape: Any = EMPTY) -> Tensor:
        """Draws whose gradient flows to both parameters (NOTE [implicit gamma gradient])."""
        shape = self._extended_shape(sample_shape)
        x = standard_gamma(self.concentration.expand(shape)) / self.rate.expand(shape)
        tiny = float(ember.finfo(x.dtype).tiny)
        return x.clamp(min=tiny)

    def log_prob(self, value: Any) -> Tensor:
        value = ember.as_tensor(value, dtype=self.rate.dtype)
        if self._validate_args:
            self._validate_sample(value)
        c, r = self.concentration, self.rate
        return ember.xlogy(c, r) + ember.xlogy(c - 1, value) - r * value - ember.lgamma(c)

    def cdf(self, value: Any) -> Tensor:
        """``P(concentration, rate * value)``, the regularised lower incomplete gamma function
        (differentiable in all three; PyTorch's has no derivative in ``concentration``, ember's
        is a central difference)."""
        value = ember.as_tensor(value, dtype=self.rate.dtype)
        if self._validate_args:
            self._validate_sample(value)
        return regularized_gamma_p(*broadcast_all(self.concentration, self.rate * value))

    def entropy(self) -> Tensor:
        c = self.concentration
        return c - ember.log(self.rate) + ember.lgamma(c) + (1.0 - c) * ember.digamma(c)

    # NOTE [Bregman entropy]: the natural parameters and log normaliser
    @property
    def _natural_params(self) -> tuple[Tensor, ...]:
        return (self.concentration - 1, -self.rate)

    def _log_normalizer(self, x: Tensor, y: Tensor) -> Tensor:
        return ember.lgamma(x + 1) + (x + 1) * ember.log(-y.reciprocal())

    _mean_carrier_measure = 0


class Exponential(ExponentialFamily):
    """The exponential distribution with ``rate`` (mean ``1 / rate``).

    >>> ember.distributions.Exponential(2.0).mean
    tensor(0.5000)
    """

    arg_constraints = {"rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, rate: Any, validate_args: bool | None = None) -> None:
        (self.rate,) = broadcast_all(rate)
        super().__init__(_batch(rate), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Exponential:
        return self._expanded(Exponential, batch_shape, _instance, ("rate",))  # type: ignore[no-any-return]

    @property
    def mean(self) -> Tensor:
        return self.rate.reciprocal()

    @property
    def mode(self) -> Tensor:
        return ember.zeros_like(self.rate)

    @property
    def stddev(self) -> Tensor:
        return self.rate.reciprocal()

    @property
    def variance(self) -> Tensor:
        return self.rate.pow(-2)

    def rsample(self, sample_shape: Any = EMPTY) -> Tensor:
        """``e / rate`` with a standard exponential ``e``."""
        shape = self._extended_shape(sample_shape)
        e = ember.empty(shape, dtype=self.rate.dtype).exponential_()
        return e / self.rate

    def log_prob(self, value: Any) -> Tensor:
        value = ember.as_tensor(value, dtype=self.rate.dtype)
        if self._validate_args:
            self._validate_sample(value)
        return self.rate.log() - self.rate * value

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return 1 - ember.exp(-self.rate * value)

    def icdf(self, value: Tensor) -> Tensor:
        return -ember.log1p(-value) / self.rate

    def entropy(self) -> Tensor:
        return 1.0 - ember.log(self.rate)

    # NOTE [Bregman entropy]: the natural parameters and log normaliser
    @property
    def _natural_params(self) -> tuple[Tensor, ...]:
        return (-self.rate,)

    def _log_normalizer(self, x: Tensor) -> Tensor:
        return -ember.log(-x)

    _mean_carrier_measure = 0
