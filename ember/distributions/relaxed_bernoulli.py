"""``RelaxedBernoulli(temperature, probs=|logits=)``: the binary Concrete distribution on
``(0, 1)``, ``sigmoid`` of a ``LogitRelaxedBernoulli`` draw; reparametrisable."""

from __future__ import annotations

from typing import Any

import ember
from ember._tensor import Size, Tensor
from ember.distributions import constraints
from ember.distributions.distribution import Distribution
from ember.distributions.transformed_distribution import TransformedDistribution
from ember.distributions.transforms import SigmoidTransform
from ember.distributions.utils import (
    EMPTY,
    BinaryOdds,
    broadcast_all,
    clamp_probs,
    set_probs_or_logits,
)

__all__ = ["LogitRelaxedBernoulli", "RelaxedBernoulli"]


class LogitRelaxedBernoulli(BinaryOdds, Distribution):
    """The logit of a ``RelaxedBernoulli`` draw: ``(logit(u) + logits) / temperature`` for
    ``u`` uniform (``ember.rand``, clamped as PyTorch clamps it: same seed, same samples).

    >>> d = ember.distributions.relaxed_bernoulli.LogitRelaxedBernoulli(0.5, probs=0.5)
    >>> d.log_prob(ember.tensor(0.0))
    tensor(-2.0794)
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.real
    has_rsample = True

    def __init__(
        self,
        temperature: Any,
        probs: Any = None,
        logits: Any = None,
        validate_args: bool | None = None,
    ) -> None:
        self.temperature = ember.as_tensor(temperature)
        batch_shape = set_probs_or_logits(self, probs, logits)
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> LogitRelaxedBernoulli:
        new = self._expanded_probs_or_logits(LogitRelaxedBernoulli, batch_shape, _instance)
        new.temperature = self.temperature
        return new  # type: ignore[no-any-return]

    @property
    def param_shape(self) -> Size:
        return self._param.size()

    def rsample(self, sample_shape: Any = EMPTY) -> Tensor:
        shape = self._extended_shape(sample_shape)
        probs = clamp_probs(self.probs.expand(shape))
        u = clamp_probs(ember.rand(shape, dtype=probs.dtype))
        return (u.log() - (-u).log1p() + probs.log() - (-probs).log1p()) / self.temperature

    def log_prob(self, value: Any) -> Tensor:
        value = ember.as_tensor(value, dtype=self._param.dtype)
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        diff = logits - value * self.temperature
        return self.temperature.log() + diff - 2 * diff.exp().log1p()


class _Relaxed(TransformedDistribution):
    """What the relaxations share (``RelaxedBernoulli``, ``RelaxedOneHotCategorical``): a
    transformed base whose ``temperature``, ``logits`` and ``probs`` they read."""

    @property
    def temperature(self) -> Tensor:
        return self.base_dist.temperature  # type: ignore[attr-defined, no-any-return]

    @property
    def logits(self) -> Tensor:
        return self.base_dist.logits  # type: ignore[attr-defined, no-any-return]

    @property
    def probs(self) -> Tensor:
        return self.base_dist.probs  # type: ignore[attr-defined, no-any-return]


class RelaxedBernoulli(_Relaxed):
    """The binary Concrete (Gumbel-softmax) relaxation of ``Bernoulli`` at ``temperature``:
    ``sigmoid`` of a ``LogitRelaxedBernoulli`` draw (PyTorch's draws from the same seed).

    >>> ember.distributions.RelaxedBernoulli(0.5, probs=0.5).log_prob(ember.tensor(0.5))
    tensor(-0.6931)
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval  # type: ignore[assignment]
    has_rsample = True  # type: ignore[assignment]

    def __init__(
        self,
        temperature: Any,
        probs: Any = None,
        logits: Any = None,
        validate_args: bool | None = None,
    ) -> None:
        base = LogitRelaxedBernoulli(temperature, probs, logits)
        super().__init__(base, SigmoidTransform(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> RelaxedBernoulli:
        new = self._get_checked_instance(RelaxedBernoulli, _instance)
        return super().expand(batch_shape, new)  # type: ignore[return-value]
