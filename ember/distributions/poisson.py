"""``Poisson(rate)`` and ``Binomial(total_count, probs=|logits=)``: counts."""

from __future__ import annotations

from typing import Any

import numpy as np

import ember
from ember._tensor import Tensor
from ember.distributions import constraints
from ember.distributions.distribution import Distribution
from ember.distributions.exp_family import ExponentialFamily
from ember.distributions.gamma import _batch
from ember.distributions.utils import (
    EMPTY,
    CountedOdds,
    broadcast_all,
)
from ember.random import _generator

__all__ = ["Binomial", "Poisson"]


class Poisson(ExponentialFamily):
    """The Poisson distribution with mean ``rate``.

    >>> ember.distributions.Poisson(2.0).log_prob(ember.tensor(1.0))
    tensor(-1.3069)
    """

    arg_constraints = {"rate": constraints.nonnegative}
    support = constraints.nonnegative_integer

    def __init__(self, rate: Any, validate_args: bool | None = None) -> None:
        (self.rate,) = broadcast_all(rate)
        super().__init__(_batch(rate), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Poisson:
        return self._expanded(Poisson, batch_shape, _instance, ("rate",))  # type: ignore[no-any-return]

    @property
    def mean(self) -> Tensor:
        return self.rate

    @property
    def mode(self) -> Tensor:
        return self.rate.floor()

    @property
    def variance(self) -> Tensor:
        return self.rate

    def sample(self, sample_shape: Any = EMPTY) -> Tensor:
        shape = self._extended_shape(sample_shape)
        with ember.no_grad():  # PyTorch's draws: poisson of the expanded rate
            return ember.poisson(self.rate.expand(shape))

    def log_prob(self, value: Any) -> Tensor:
        value = ember.as_tensor(value, dtype=self.rate.dtype)
        if self._validate_args:
            self._validate_sample(value)
        rate, value = broadcast_all(self.rate, value)
        return value.xlogy(rate) - rate - ember.lgamma(value + 1)

    # NOTE [Bregman entropy]: the natural parameter and log normaliser (PyTorch gives no
    # carrier measure, so the inherited entropy raises NotImplementedError as PyTorch's)
    @property
    def _natural_params(self) -> tuple[Tensor, ...]:
        return (ember.log(self.rate),)

    def _log_normalizer(self, x: Tensor) -> Tensor:
        return ember.exp(x)


class Binomial(CountedOdds, Distribution):
    """The number of successes in ``total_count`` trials of probability ``probs``.

    >>> ember.distributions.Binomial(4, probs=ember.tensor(0.5)).mean
    tensor(2.)
    """

    arg_constraints = {
        "total_count": constraints.nonnegative_integer,
        "probs": constraints.unit_interval,
        "logits": constraints.real,
    }
    has_enumerate_support = True

    def __init__(
        self,
        total_count: Any = 1,
        probs: Any = None,
        logits: Any = None,
        validate_args: bool | None = None,
    ) -> None:
        super().__init__(total_count, probs, logits, validate_args)

    @property
    def support(self) -> constraints.Constraint:
        return constraints.integer_interval(0, self.total_count)

    @property
    def mean(self) -> Tensor:
        return self.total_count * self.probs

    @property
    def mode(self) -> Tensor:
        return ((self.total_count + 1) * self.probs).floor().clamp(max=self.total_count)

    @property
    def variance(self) -> Tensor:
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape: Any = EMPTY) -> Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        n = np.broadcast_to(self.total_count.detach().numpy(), shape).astype(np.int64)
        p = np.broadcast_to(self.probs.detach().numpy(), shape).astype(np.float64)
        return ember.from_numpy(_generator(None).binomial(n, p).astype(self._param.dtype.np))

    def log_prob(self, value: Any) -> Tensor:
        value = ember.as_tensor(value, dtype=self._param.dtype)
        if self._validate_args:
            self._validate_sample(value)
        n, logits = self.total_count, self.logits
        log_factorial_n = ember.lgamma(n + 1)
        log_factorial_k = ember.lgamma(value + 1)
        log_factorial_nmk = ember.lgamma(n - value + 1)
        # n * log(1 + exp(logit)), stable for either sign; the clamp's gradient at 0 is 1/2
        clamped = (logits.clamp(min=0) + logits - logits.clamp(max=0)) / 2
        normalize = n * clamped + n * ember.log1p(ember.exp(-ember.abs(logits))) - log_factorial_n
        return value * logits - normalize - log_factorial_k - log_factorial_nmk

    def entropy(self) -> Tensor:
        n = int(self.total_count.max().item())
        if not bool((self.total_count == n).all()):
            raise NotImplementedError("Inhomogeneous total count not supported by `entropy`.")
        support = self.enumerate_support(expand=False)
        log_prob = self.log_prob(support)
        return -(ember.exp(log_prob) * log_prob).sum(0)

    def enumerate_support(self, expand: bool = True) -> Tensor:
        n = int(self.total_count.max().item())
        if not bool((self.total_count == n).all()):
            raise NotImplementedError(
                "Inhomogeneous total count not supported by `enumerate_support`."
            )
        values = ember.arange(1 + n, dtype=self._param.dtype)
        values = values.view((-1,) + (1,) * len(self.batch_shape))
        if expand:
            values = values.expand((-1, *self.batch_shape))
        return values
