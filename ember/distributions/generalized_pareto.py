"""``GeneralizedPareto(loc, scale, concentration)``: the generalised Pareto distribution of
peaks over a threshold, reparametrisable through its closed-form inverse cdf.

For ``concentration`` (``xi``) 0 it is the exponential distribution shifted to ``loc``; the
closed forms divide by ``xi``, so where ``xi`` is close to 0 (``isclose``) the exponential's
formulas are used and ``xi`` is replaced by 1 in the others (no NaN gradient).
"""

from __future__ import annotations

import math
from typing import Any

import ember
from ember._tensor import Tensor
from ember.distributions import constraints
from ember.distributions.distribution import Distribution
from ember.distributions.fishersnedecor import _nan_unless
from ember.distributions.gamma import _batch
from ember.distributions.utils import EMPTY, broadcast_all

__all__ = ["GeneralizedPareto"]


class GeneralizedPareto(Distribution):
    """The generalised Pareto distribution: support ``[loc, inf)`` for ``concentration >= 0``,
    ``[loc, loc - scale / concentration]`` for negative ``concentration``.

    >>> ember.distributions.GeneralizedPareto(0.0, 1.0, 0.5).log_prob(ember.tensor(1.0))
    tensor(-1.2164)
    """

    arg_constraints = {
        "loc": constraints.real,
        "scale": constraints.positive,
        "concentration": constraints.real,
    }
    has_rsample = True

    def __init__(
        self, loc: Any, scale: Any, concentration: Any, validate_args: bool | None = None
    ) -> None:
        self.loc, self.scale, self.concentration = broadcast_all(loc, scale, concentration)
        super().__init__(_batch(loc, scale, concentration), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> GeneralizedPareto:
        params = ("loc", "scale", "concentration")
        return self._expanded(GeneralizedPareto, batch_shape, _instance, params)  # type: ignore[no-any-return]

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self) -> Any:
        upper = ember.where(
            self.concentration < 0,
            self.loc - self.scale / self.concentration,
            ember.full_like(self.loc, math.inf),
        )
        return constraints.interval(self.loc, upper)

    def _zero_and_safe(self) -> tuple[Tensor, Tensor]:
        """Where ``concentration`` is about 0, and ``concentration`` with 1 there."""
        xi = self.concentration
        zero = ember.isclose(xi, ember.zeros_like(xi))
        return zero, ember.where(zero, ember.ones_like(xi), xi)

    def _z(self, value: Tensor) -> Tensor:
        return (value - self.loc) / self.scale

    def rsample(self, sample_shape: Any = EMPTY) -> Tensor:
        """``icdf(u)`` for uniform ``u`` (PyTorch's draws: same seed, same samples)."""
        shape = self._extended_shape(sample_shape)
        u = ember.rand(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.icdf(u)

    def log_prob(self, value: Tensor) -> Tensor:
        """``-log(scale) - (1 / xi + 1) log1p(xi z)`` (``-log(scale) - z`` for ``xi`` 0)."""
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        zero, xi = self._zero_and_safe()
        power = 1 / xi + ember.ones_like(z)
        nonzero = ember.where(power == 0, power, power * ember.log1p(xi * z))
        return -self.scale.log() - ember.where(zero, z, nonzero)

    def log_survival_function(self, value: Tensor) -> Tensor:
        """``log(1 - cdf(value))``: ``-log1p(xi z) / xi`` (``-z`` for ``xi`` 0)."""
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        zero, xi = self._zero_and_safe()
        return ember.where(zero, -z, -ember.log1p(xi * z) / xi)

    def log_cdf(self, value: Tensor) -> Tensor:
        return ember.log1p(-ember.exp(self.log_survival_function(value)))

    def cdf(self, value: Tensor) -> Tensor:
        return ember.exp(self.log_cdf(value))

    def icdf(self, value: Tensor) -> Tensor:
        zero, xi = self._zero_and_safe()
        log_q = ember.log1p(-value)
        nonzero = self.loc + self.scale / xi * ember.expm1(-xi * log_q)
        return ember.where(zero, self.loc - self.scale * log_q, nonzero)

    @property
    def mean(self) -> Tensor:
        """``loc + scale / (1 - xi)`` for ``xi < 1``, NaN elsewhere."""
        ok = self.concentration < 1
        xi = ember.where(ok, self.concentration, ember.full_like(self.concentration, 0.5))
        return _nan_unless(ok, self.loc + self.scale / (1 - xi))

    @property
    def variance(self) -> Tensor:
        """``scale^2 / ((1 - xi)^2 (1 - 2 xi))`` for ``xi < 1/2``, NaN elsewhere."""
        ok = self.concentration < 0.5
        xi = ember.where(ok, self.concentration, ember.full_like(self.concentration, 0.25))
        return _nan_unless(ok, self.scale.pow(2) / ((1 - xi).pow(2) * (1 - 2 * xi)))

    @property
    def mode(self) -> Tensor:
        return self.loc

    def entropy(self) -> Tensor:
        value = self.scale.log() + self.concentration + 1
        return value.expand(self._batch_shape)
