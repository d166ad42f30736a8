"""``Categorical(probs=|logits=)``: one of ``K`` categories, by (unnormalised) probabilities
or log-probabilities over the last dimension."""

from __future__ import annotations

from typing import Any

import numpy as np

import ember
from ember._tensor import Size, Tensor
from ember.distributions import constraints
from ember.distributions.distribution import Distribution
from ember.distributions.utils import (
    EMPTY,
    check_probs_or_logits,
    lazy_property,
    logits_to_probs,
    probs_to_logits,
)

__all__ = ["Categorical"]


class Categorical(Distribution):
    """Draws an index in ``[0, K)`` with the probabilities of the last dimension (normalised
    to sum to 1); leading dimensions are the batch.

    >>> ember.distributions.Categorical(probs=ember.tensor([1.0, 3.0])).probs
    tensor([0.2500, 0.7500])
    """

    arg_constraints = {
        "probs": constraints.simplex,
        "logits": constraints.independent(constraints.real, 1),
    }
    has_enumerate_support = True

    def __init__(
        self,
        probs: Tensor | None = None,
        logits: Tensor | None = None,
        validate_args: bool | None = None,
    ) -> None:
        check_probs_or_logits(probs, logits)
        if probs is not None:
            if probs.dim() < 1:
                raise ValueError("`probs` parameter must be at least one-dimensional.")
            self.probs = probs / probs.sum(-1, keepdim=True)
        else:
            assert logits is not None
            if logits.dim() < 1:
                raise ValueError("`logits` parameter must be at least one-dimensional.")
            self.logits = logits - logits.logsumexp(-1, keepdim=True)
        self._param = self.probs if probs is not None else self.logits
        self._num_events = self._param.size()[-1]
        batch_shape = self._param.size()[:-1] if self._param.dim() > 1 else Size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Categorical:
        event = (self._num_events,)
        new = self._expanded_probs_or_logits(Categorical, batch_shape, _instance, event)
        new._num_events = self._num_events
        return new  # type: ignore[no-any-return]

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self) -> constraints.Constraint:
        return constraints.integer_interval(0, self._num_events - 1)

    @lazy_property
    def logits(self) -> Tensor:
        return probs_to_logits(self.probs)

    @lazy_property
    def probs(self) -> Tensor:
        return logits_to_probs(self.logits)

    @property
    def param_shape(self) -> Size:
        return self._param.size()

    @property
    def mean(self) -> Tensor:
        p = self._param
        return ember.full(self._extended_shape(), float("nan"), dtype=p.dtype, device=p.device)

    @property
    def mode(self) -> Tensor:
        return self.probs.argmax(-1)

    @property
    def variance(self) -> Tensor:
        p = self._param
        return ember.full(self._extended_shape(), float("nan"), dtype=p.dtype, device=p.device)

    def sample(self, sample_shape: Any = EMPTY) -> Tensor:
        """Indices (int64): ``multinomial`` of each batch element's probabilities with
        replacement, one column per sample (PyTorch's draws)."""
        sample_shape = Size(sample_shape)
        with ember.no_grad():
            probs = self.probs.reshape(-1, self._num_events)
            drawn = ember.multinomial(probs, sample_shape.numel(), True).T
            return drawn.reshape(self._extended_shape(sample_shape))

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        value = value.long().unsqueeze(-1)
        shape = tuple(
            max(a, b)
            for a, b in zip(
                _pad(value.shape, self.logits.dim()),
                _pad(self.logits.shape, value.dim()),
                strict=True,
            )
        )
        log_pmf = self.logits.expand(shape)
        value = value.expand(*shape[:-1], 1)
        return log_pmf.gather(-1, value).squeeze(-1)

    def entropy(self) -> Tensor:
        min_real = float(np.finfo(self.logits.dtype.np).min)  # -inf logits give 0, not NaN
        logits = ember.clamp(self.logits, min=min_real)
        return -(logits * self.probs).sum(-1)

    def enumerate_support(self, expand: bool = True) -> Tensor:
        values = ember.arange(self._num_events, device=self._param.device)
        values = values.view(-1, *(1,) * len(self._batch_shape))
        return values.expand(-1, *self._batch_shape) if expand else values


def _pad(shape: Size, ndim: int) -> tuple[int, ...]:
    """``shape`` with leading 1s to ``max(len(shape), ndim)`` dimensions."""
    return (1,) * (ndim - len(shape)) + tuple(shape)
