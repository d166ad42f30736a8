"""``StudentT(df, loc, scale)``: Student's t distribution, reparametrisable."""

from __future__ import annotations

import math
from typing import Any

import ember
from ember._tensor import Tensor
from ember.distributions import constraints
from ember.distributions._gamma_sampler import standard_gamma
from ember.distributions.distribution import Distribution
from ember.distributions.gamma import _batch
from ember.distributions.utils import EMPTY, broadcast_all

__all__ = ["StudentT"]


class StudentT(Distribution):
    """Student's t with ``df`` degrees of freedom, shifted by ``loc``, scaled by ``scale``.

    >>> ember.distributions.StudentT(3.0).variance
    tensor(3.)
    """

    arg_constraints = {
        "df": constraints.positive,
        "loc": constraints.real,
        "scale": constraints.positive,
    }
    support = constraints.real
    has_rsample = True

    def __init__(
        self, df: Any, loc: Any = 0.0, scale: Any = 1.0, validate_args: bool | None = None
    ) -> None:
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        super().__init__(_batch(df, loc, scale), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> StudentT:
        return self._expanded(StudentT, batch_shape, _instance, ("df", "loc", "scale"))  # type: ignore[no-any-return]

    @property
    def mean(self) -> Tensor:
        m = self.loc.clone()
        return ember.where(self.df <= 1, ember.full_like(m, float("nan")), m)

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        df = self.df
        v = self.scale.pow(2) * df / (df - 2)
        v = ember.where(df <= 2, ember.full_like(v, float("inf")), v)
        return ember.where(df <= 1, ember.full_like(v, float("nan")), v)

    def rsample(self, sample_shape: Any = EMPTY) -> Tensor:
        """``loc + scale * x / sqrt(chi2 / df)`` with ``x`` standard normal and ``chi2`` a
        chi-squared draw of ``df`` degrees (a gamma draw: NOTE [implicit gamma gradient])."""
        shape = self._extended_shape(sample_shape)
        x = ember.randn(shape, dtype=self.df.dtype)
        chi2 = 2 * standard_gamma((0.5 * self.df).expand(shape))
        y = x * ember.rsqrt(chi2 / self.df)
        return self.loc + self.scale * y

    def log_prob(self, value: Any) -> Tensor:
        value = ember.as_tensor(value, dtype=self.df.dtype)
        if self._validate_args:
            self._validate_sample(value)
        y = (value - self.loc) / self.scale
        z = (
            self.scale.log()
            + 0.5 * self.df.log()
            + 0.5 * math.log(math.pi)
            + ember.lgamma(0.5 * self.df)
            - ember.lgamma(0.5 * (self.df + 1.0))
        )
        return -0.5 * (self.df + 1.0) * ember.log1p(y**2.0 / self.df) - z

    def entropy(self) -> Tensor:
        df = self.df
        lbeta = ember.lgamma(0.5 * df) + math.lgamma(0.5) - ember.lgamma(0.5 * (df + 1))
        return (
            self.scale.log()
            + 0.5 * (df + 1) * (ember.digamma(0.5 * (df + 1)) - ember.digamma(0.5 * df))
            + 0.5 * df.log()
            + lbeta
        )
