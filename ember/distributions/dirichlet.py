"""``Dirichlet(concentration)`` and ``Beta(concentration1, concentration0)``: distributions on
the simplex, reparametrisable through normalised gamma draws."""

from __future__ import annotations

import numbers
from typing import Any

import ember
from ember._tensor import Size, Tensor
from ember.distributions import constraints
from ember.distributions._gamma_sampler import standard_gamma
from ember.distributions.exp_family import ExponentialFamily
from ember.distributions.gamma import _batch
from ember.distributions.utils import EMPTY, broadcast_all

__all__ = ["Beta", "Dirichlet"]


class Dirichlet(ExponentialFamily):
    """The Dirichlet distribution over the last dim of ``concentration``.

    >>> ember.distributions.Dirichlet(ember.tensor([1.0, 3.0])).mean
    tensor([0.2500, 0.7500])
    """

    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration: Tensor, validate_args: bool | None = None) -> None:
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        shape = concentration.shape
        super().__init__(shape[:-1], shape[-1:], validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Dirichlet:
        new = self._get_checked_instance(Dirichlet, _instance)
        batch_shape = Size(batch_shape)
        new.concentration = self.concentration.expand((*batch_shape, *self.event_shape))
        return self._finish_expand(new, batch_shape, self.event_shape)  # type: ignore[no-any-return]

    def rsample(self, sample_shape: Any = EMPTY) -> Tensor:
        """Independent gamma draws divided by their sum (NOTE [implicit gamma gradient])."""
        shape = self._extended_shape(sample_shape)
        g = standard_gamma(self.concentration.expand(shape))
        tiny = float(ember.finfo(g.dtype).tiny)
        return (g / g.sum(-1, keepdim=True)).clamp(
            min=tiny, max=1 - float(ember.finfo(g.dtype).eps)
        )

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        c = self.concentration
        return (
            ember.xlogy(c - 1.0, value).sum(-1) + ember.lgamma(c.sum(-1)) - ember.lgamma(c).sum(-1)
        )

    @property
    def mean(self) -> Tensor:
        return self.concentration / self.concentration.sum(-1, keepdim=True)

    @property
    def mode(self) -> Tensor:
        c = (self.concentration - 1).clamp(min=0.0)
        return c / c.sum(-1, keepdim=True)

    @property
    def variance(self) -> Tensor:
        c0 = self.concentration.sum(-1, keepdim=True)
        return self.concentration * (c0 - self.concentration) / (c0.pow(2) * (c0 + 1))

    def entropy(self) -> Tensor:
        k = self.concentration.size(-1)
        c = self.concentration
        c0 = c.sum(-1)
        return (
            ember.lgamma(c).sum(-1)
            - ember.lgamma(c0)
            - (k - c0) * ember.digamma(c0)
            - ((c - 1.0) * ember.digamma(c)).sum(-1)
        )

    # NOTE [Bregman entropy]: the natural parameters and log normaliser
    @property
    def _natural_params(self) -> tuple[Tensor, ...]:
        return (self.concentration,)

    def _log_normalizer(self, x: Tensor) -> Tensor:
        return x.lgamma().sum(-1) - ember.lgamma(x.sum(-1))


class Beta(ExponentialFamily):
    """The beta distribution on (0, 1) with ``concentration1`` (alpha) and
    ``concentration0`` (beta).

    >>> ember.distributions.Beta(2.0, 2.0).mean
    tensor(0.5000)
    """

    arg_constraints = {
        "concentration1": constraints.positive,
        "concentration0": constraints.positive,
    }
    support = constraints.unit_interval
    has_rsample = True

    def __init__(
        self, concentration1: Any, concentration0: Any, validate_args: bool | None = None
    ) -> None:
        c1, c0 = broadcast_all(concentration1, concentration0)
        self._dirichlet = Dirichlet(ember.stack([c1, c0], -1), validate_args=validate_args)
        batch = _batch(concentration1, concentration0)
        if isinstance(concentration1, numbers.Number) and isinstance(
            concentration0, numbers.Number
        ):
            batch = ember.Size()
        super().__init__(batch, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Beta:
        new = self._get_checked_instance(Beta, _instance)
        batch_shape = Size(batch_shape)
        new._dirichlet = self._dirichlet.expand(batch_shape)
        return self._finish_expand(new, batch_shape)  # type: ignore[no-any-return]

    @property
    def concentration1(self) -> Tensor:
        return self._dirichlet.concentration[..., 0]

    @property
    def concentration0(self) -> Tensor:
        return self._dirichlet.concentration[..., 1]

    @property
    def mean(self) -> Tensor:
        return self.concentration1 / (self.concentration1 + self.concentration0)

    @property
    def mode(self) -> Tensor:
        return self._dirichlet.mode[..., 0]

    @property
    def variance(self) -> Tensor:
        total = self.concentration1 + self.concentration0
        return self.concentration1 * self.concentration0 / (total.pow(2) * (total + 1))

    def rsample(self, sample_shape: Any = EMPTY) -> Tensor:
        """The first coordinate of a two-category Dirichlet draw."""
        return self._dirichlet.rsample(sample_shape).select(-1, 0)

    def log_prob(self, value: Any) -> Tensor:
        value = ember.as_tensor(value, dtype=self.concentration1.dtype)
        if self._validate_args:
            self._validate_sample(value)
        heads_tails = ember.stack([value, 1.0 - value], -1)
        return self._dirichlet.log_prob(heads_tails)

    def entropy(self) -> Tensor:
        return self._dirichlet.entropy()

    # NOTE [Bregman entropy]: the natural parameters and log normaliser
    @property
    def _natural_params(self) -> tuple[Tensor, ...]:
        return (self.concentration1, self.concentration0)

    def _log_normalizer(self, x: Tensor, y: Tensor) -> Tensor:
        return ember.lgamma(x) + ember.lgamma(y) - ember.lgamma(x + y)
