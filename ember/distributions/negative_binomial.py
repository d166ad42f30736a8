"""``NegativeBinomial(total_count, probs=|logits=)``: in PyTorch's convention, the number of
successes (probability ``probs``) before ``total_count`` failures."""

from __future__ import annotations

from typing import Any

import ember
from ember._tensor import Size, Tensor
from ember.distributions import constraints
from ember.distributions.distribution import Distribution
from ember.distributions.gamma import Gamma
from ember.distributions.utils import (
    EMPTY,
    CountedOdds,
    lazy_property,
)

__all__ = ["NegativeBinomial"]

_logsigmoid = ember.nn.functional.logsigmoid


class NegativeBinomial(CountedOdds, Distribution):
    """The number of successes (each with probability ``probs``, or log-odds ``logits``)
    before ``total_count`` failures. ``sample`` is ``poisson(Gamma(total_count,
    exp(-logits)).sample())`` as in PyTorch; ember's gamma draws are its own, so the samples
    are not PyTorch's (their moments are tested).

    >>> ember.distributions.NegativeBinomial(2.0, probs=0.5).log_prob(ember.tensor(1.0))
    tensor(-1.3863)
    """

    arg_constraints = {
        "total_count": constraints.greater_than_eq(0),
        "probs": constraints.half_open_interval(0.0, 1.0),
        "logits": constraints.real,
    }
    support = constraints.nonnegative_integer

    @property
    def param_shape(self) -> Size:
        return self._param.size()

    @property
    def mean(self) -> Tensor:
        return self.total_count * self.logits.exp()

    @property
    def mode(self) -> Tensor:
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    @property
    def variance(self) -> Tensor:
        return self.mean / ember.sigmoid(-self.logits)

    @lazy_property
    def _gamma(self) -> Gamma:
        return Gamma(self.total_count, ember.exp(-self.logits), validate_args=False)

    def sample(self, sample_shape: Any = EMPTY) -> Tensor:
        with ember.no_grad():
            return ember.poisson(self._gamma.sample(sample_shape))

    def log_prob(self, value: Any) -> Tensor:
        value = ember.as_tensor(value, dtype=self._param.dtype)
        if self._validate_args:
            self._validate_sample(value)
        n = self.total_count
        unnormalised = n * _logsigmoid(-self.logits) + value * _logsigmoid(self.logits)
        normalisation = -ember.lgamma(n + value) + ember.lgamma(1.0 + value) + ember.lgamma(n)
        normalisation = normalisation.masked_fill(n + value == 0.0, 0.0)
        return unnormalised - normalisation
