"""``ContinuousBernoulli(probs=|logits=)``: the density on ``[0, 1]`` proportional to
``p ** x (1 - p) ** (1 - x)``, reparametrisable through its closed-form inverse cdf.

# NOTE [near one half]
The normaliser ``C(p) = 2 atanh(1 - 2p) / (1 - 2p)`` and the moments are 0/0 at ``p = 1/2``.
As PyTorch does, for ``p`` in ``(lims[0], lims[1]]`` (by default ``(0.499, 0.501]``) they are
taken from their Taylor series about 1/2, and the closed forms are evaluated only at
``p`` moved out of that band (so neither branch makes a NaN gradient through ``where``).
"""

from __future__ import annotations

import math
from typing import Any

import ember
from ember._tensor import Size, Tensor
from ember.distributions import constraints
from ember.distributions.exp_family import ExponentialFamily
from ember.distributions.utils import (
    EMPTY,
    clamp_probs,
    lazy_property,
    logits_to_probs,
    probs_to_logits,
    set_probs_or_logits,
)

__all__ = ["ContinuousBernoulli"]

_bce = ember.nn.functional.binary_cross_entropy_with_logits


class ContinuousBernoulli(ExponentialFamily):
    """The continuous Bernoulli distribution (Loaiza-Ganem and Cunningham, 2019), given by
    ``probs`` or ``logits``; ``lims`` is the band about 1/2 of NOTE [near one half].

    >>> ember.distributions.ContinuousBernoulli(probs=0.2).log_prob(ember.tensor(0.5))
    tensor(-0.0788)
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(
        self,
        probs: Any = None,
        logits: Any = None,
        lims: tuple[float, float] = (0.499, 0.501),
        validate_args: bool | None = None,
    ) -> None:
        batch_shape = set_probs_or_logits(self, probs, logits)
        if probs is not None:
            # as PyTorch: given probs are checked (before they are clamped into (0, 1)) only
            # when validate_args is given
            if validate_args is not None and not bool(
                constraints.unit_interval.check(self.probs).all()
            ):
                raise ValueError(
                    "The parameter probs has invalid values: ContinuousBernoulli expects probs "
                    f"in [0, 1], but got {self.probs}"
                )
            self.probs = self._param = clamp_probs(self.probs)
        self._lims = lims
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> ContinuousBernoulli:
        new = self._expanded_probs_or_logits(ContinuousBernoulli, batch_shape, _instance)
        new._lims = self._lims
        return new  # type: ignore[no-any-return]

    @lazy_property
    def probs(self) -> Tensor:
        return clamp_probs(logits_to_probs(self.logits, is_binary=True))

    @lazy_property
    def logits(self) -> Tensor:
        return probs_to_logits(self.probs, is_binary=True)

    @property
    def param_shape(self) -> Size:
        return self._param.size()

    # ---- NOTE [near one half]
    def _outside(self) -> Tensor:
        """Where ``probs`` is outside the band about 1/2 (the closed forms are used)."""
        return (self.probs <= self._lims[0]) | (self.probs > self._lims[1])

    def _cut_probs(self) -> Tensor:
        """``probs``, moved to ``lims[0]`` inside the band."""
        return ember.where(self._outside(), self.probs, ember.full_like(self.probs, self._lims[0]))

    def _log_odds(self) -> Tensor:
        """``log((1 - p) / p)`` of the cut probabilities."""
        p = self._cut_probs()
        return ember.log1p(-p) - ember.log(p)

    def _cont_bern_log_norm(self) -> Tensor:
        """``log C(p)``: ``log|log((1 - p) / p)| - log|1 - 2p|``, or its Taylor series."""
        p = self._cut_probs()
        below = ember.log1p(-2.0 * ember.where(p <= 0.5, p, ember.zeros_like(p)))
        above = ember.log(2.0 * ember.where(p >= 0.5, p, ember.ones_like(p)) - 1.0)
        closed = ember.log(ember.abs(self._log_odds())) - ember.where(p <= 0.5, below, above)
        x = (self.probs - 0.5).pow(2)
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x
        return ember.where(self._outside(), closed, taylor)

    @property
    def mean(self) -> Tensor:
        p = self._cut_probs()
        closed = p / (2.0 * p - 1.0) + self._log_odds().reciprocal()
        x = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * x.pow(2)) * x
        return ember.where(self._outside(), closed, taylor)

    @property
    def variance(self) -> Tensor:
        p = self._cut_probs()
        closed = p * (p - 1.0) / (1.0 - 2.0 * p).pow(2) + self._log_odds().pow(-2)
        x = (self.probs - 0.5).pow(2)
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x
        return ember.where(self._outside(), closed, taylor)

    @property
    def stddev(self) -> Tensor:
        return self.variance.sqrt()

    def sample(self, sample_shape: Any = EMPTY) -> Tensor:
        with ember.no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape: Any = EMPTY) -> Tensor:
        """``icdf(u)`` for uniform ``u`` (PyTorch's draws: same seed, same samples)."""
        shape = self._extended_shape(sample_shape)
        u = ember.rand(shape, dtype=self.probs.dtype, device=self.probs.device)
        return self.icdf(u)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        logits = self.logits
        shape = ember.broadcast_shapes(logits.shape, value.shape)
        bce = _bce(logits.expand(shape), value.expand(shape).to(logits.dtype), reduction="none")
        return -bce + self._cont_bern_log_norm()

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        p = self._cut_probs()
        closed = (p.pow(value) * (1.0 - p).pow(1.0 - value) + p - 1.0) / (2.0 * p - 1.0)
        inside = ember.where(self._outside(), closed, value)
        return ember.where(
            value <= 0.0,
            ember.zeros_like(inside),
            ember.where(value >= 1.0, ember.ones_like(inside), inside),
        )

    def icdf(self, value: Tensor) -> Tensor:
        p = self._cut_probs()
        closed = (ember.log1p(-p + value * (2.0 * p - 1.0)) - ember.log1p(-p)) / -self._log_odds()
        return ember.where(self._outside(), closed, value)

    def entropy(self) -> Tensor:
        log_q, log_p = ember.log1p(-self.probs), ember.log(self.probs)
        return self.mean * (log_q - log_p) - self._cont_bern_log_norm() - log_q

    # NOTE [Bregman entropy]: the natural parameter and log normaliser
    @property
    def _natural_params(self) -> tuple[Tensor, ...]:
        return (self.logits,)

    def _log_normalizer(self, x: Tensor) -> Tensor:
        """``log((exp(x) - 1) / x)``, by its Taylor series for ``x`` near 0."""
        low, high = self._lims[0] - 0.5, self._lims[1] - 0.5
        outside = (x <= low) | (x > high)
        cut = ember.where(outside, x, ember.full_like(x, low))
        closed = ember.log(ember.abs(ember.expm1(cut))) - ember.log(ember.abs(cut))
        taylor = 0.5 * x + x.pow(2) / 24.0 - x.pow(4) / 2880.0
        return ember.where(outside, closed, taylor)
