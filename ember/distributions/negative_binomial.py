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
    broadcast_all,
    lazy_property,
    logits_to_probs,
    probs_to_logits,
)

__all__ = ["NegativeBinomial"]

_logsigmoid = ember.nn.functional.logsigmoid


class NegativeBinomial(Distribution):
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

    def __init__(
        self,
        total_count: Any,
        probs: Any = None,
        logits: Any = None,
        validate_args: bool | None = None,
    ) -> None:
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            self.total_count, self.probs = broadcast_all(total_count, probs)
            self.total_count = self.total_count.type_as(self.probs)
        else:
            self.total_count, self.logits = broadcast_all(total_count, logits)
            self.total_count = self.total_count.type_as(self.logits)
        self._param = self.probs if probs is not None else self.logits
        super().__init__(self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> NegativeBinomial:
        new = self._get_checked_instance(NegativeBinomial, _instance)
        batch_shape = Size(batch_shape)
        new.total_count = self.total_count.expand(batch_shape)
        self._expand_probs_or_logits(new, batch_shape)
        return self._finish_expand(new, batch_shape)  # type: ignore[no-any-return]

    @lazy_property
    def logits(self) -> Tensor:
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self) -> Tensor:
        return logits_to_probs(self.logits, is_binary=True)

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
