"""``Bernoulli(probs=|logits=)``: one binary event, 1 with probability ``probs``."""

from __future__ import annotations

from typing import Any

import ember
from ember._tensor import Size, Tensor
from ember.distributions import constraints
from ember.distributions.exp_family import ExponentialFamily
from ember.distributions.utils import (
    EMPTY,
    BinaryOdds,
    broadcast_all,
    set_probs_or_logits,
)

__all__ = ["Bernoulli"]

_bce = ember.nn.functional.binary_cross_entropy_with_logits


class Bernoulli(BinaryOdds, ExponentialFamily):
    """A binary event given by ``probs`` or by ``logits`` (log-odds), not both.

    >>> ember.distributions.Bernoulli(probs=0.25).log_prob(ember.tensor(1.0))
    tensor(-1.3863)
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True

    def __init__(
        self, probs: Any = None, logits: Any = None, validate_args: bool | None = None
    ) -> None:
        batch_shape = set_probs_or_logits(self, probs, logits)
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Bernoulli:
        return self._expanded_probs_or_logits(Bernoulli, batch_shape, _instance)  # type: ignore[no-any-return]

    def _new(self, *args: Any, **kwargs: Any) -> Tensor:
        return self._param.new_full(*args, **kwargs)

    @property
    def param_shape(self) -> Size:
        return self._param.size()

    @property
    def mean(self) -> Tensor:
        return self.probs

    @property
    def mode(self) -> Tensor:
        mode = (self.probs >= 0.5).to(self.probs.dtype)
        return mode.masked_fill(self.probs == 0.5, float("nan"))

    @property
    def variance(self) -> Tensor:
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape: Any = EMPTY) -> Tensor:
        """1 where a uniform draw falls below ``probs``, else 0 (in ``probs``' dtype)."""
        shape = self._extended_shape(sample_shape)
        with ember.no_grad():
            probs = self.probs.expand(shape)
            u = ember.rand(shape, dtype=probs.dtype, device=probs.device)
            return (u < probs).to(probs.dtype)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -_bce(logits, value, reduction="none")

    def entropy(self) -> Tensor:
        return _bce(self.logits, self.probs, reduction="none")

    # NOTE [Bregman entropy]: the natural parameters and log normaliser
    @property
    def _natural_params(self) -> tuple[Tensor, ...]:
        return (ember.logit(self.probs),)

    def _log_normalizer(self, x: Tensor) -> Tensor:
        return ember.log1p(ember.exp(x))

    _mean_carrier_measure = 0

    def enumerate_support(self, expand: bool = True) -> Tensor:
        values = ember.arange(2, dtype=self._param.dtype, device=self._param.device)
        values = values.view(-1, *(1,) * len(self._batch_shape))
        return values.expand(-1, *self._batch_shape) if expand else values
