"""``FisherSnedecor(df1, df2)``: the F distribution, the ratio of two scaled chi-squares,
reparametrisable through the gamma draws."""

from __future__ import annotations

import math
from typing import Any

import ember
from ember._tensor import Size, Tensor
from ember.distributions import constraints
from ember.distributions.distribution import Distribution
from ember.distributions.gamma import Gamma, _batch
from ember.distributions.utils import EMPTY, broadcast_all

__all__ = ["FisherSnedecor"]


def _nan_unless(ok: Tensor, value: Tensor) -> Tensor:
    """``value`` where ``ok``, NaN elsewhere (an undefined moment)."""
    return ember.where(ok, value, ember.full_like(value, math.nan))


class FisherSnedecor(Distribution):
    """The Fisher-Snedecor (F) distribution with ``df1`` and ``df2`` degrees of freedom:
    ``(X1 / df1) / (X2 / df2)`` for chi-squares ``X1``, ``X2``, drawn as
    ``Gamma(df / 2, df)`` draws (ember's gamma sampler: not PyTorch's stream).

    >>> ember.distributions.FisherSnedecor(3.0, 5.0).log_prob(ember.tensor(1.0))
    tensor(-1.0184)
    """

    arg_constraints = {"df1": constraints.positive, "df2": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, df1: Any, df2: Any, validate_args: bool | None = None) -> None:
        self.df1, self.df2 = broadcast_all(df1, df2)
        self._gamma1 = Gamma(self.df1 * 0.5, self.df1, validate_args=False)
        self._gamma2 = Gamma(self.df2 * 0.5, self.df2, validate_args=False)
        super().__init__(_batch(df1, df2), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> FisherSnedecor:
        new = self._get_checked_instance(FisherSnedecor, _instance)
        batch_shape = Size(batch_shape)
        new.df1, new.df2 = self.df1.expand(batch_shape), self.df2.expand(batch_shape)
        new._gamma1 = self._gamma1.expand(batch_shape)
        new._gamma2 = self._gamma2.expand(batch_shape)
        return self._finish_expand(new, batch_shape)  # type: ignore[no-any-return]

    @property
    def mean(self) -> Tensor:
        """``df2 / (df2 - 2)`` for ``df2 > 2``, NaN elsewhere."""
        return _nan_unless(self.df2 > 2, self.df2 / (self.df2 - 2))

    @property
    def mode(self) -> Tensor:
        """``(df1 - 2) / df1 * df2 / (df2 + 2)`` for ``df1 > 2``, NaN elsewhere."""
        mode = (self.df1 - 2) / self.df1 * self.df2 / (self.df2 + 2)
        return _nan_unless(self.df1 > 2, mode)

    @property
    def variance(self) -> Tensor:
        """Defined for ``df2 > 4``, NaN elsewhere."""
        d1, d2 = self.df1, self.df2
        var = 2 * d2.pow(2) * (d1 + d2 - 2) / (d1 * (d2 - 2).pow(2) * (d2 - 4))
        return _nan_unless(d2 > 4, var)

    def rsample(self, sample_shape: Any = EMPTY) -> Tensor:
        """The ratio of the two gammas' draws (each clamped above the dtype's tiny)."""
        shape = self._extended_shape(sample_shape)
        x1 = self._gamma1.rsample(sample_shape).reshape(shape)
        x2 = self._gamma2.rsample(sample_shape).reshape(shape)
        tiny = float(ember.finfo(x2.dtype).tiny)
        return (x1 / x2.clamp(min=tiny)).clamp(min=tiny)

    def log_prob(self, value: Any) -> Tensor:
        value = ember.as_tensor(value, dtype=self.df1.dtype)
        if self._validate_args:
            self._validate_sample(value)
        h1, h2 = self.df1 * 0.5, self.df2 * 0.5
        ratio = self.df1 / self.df2
        log_beta = h1.lgamma() + h2.lgamma() - (h1 + h2).lgamma()
        log_kernel = (
            h1 * ratio.log() + (h1 - 1) * value.log() - (h1 + h2) * ember.log1p(ratio * value)
        )
        return log_kernel - log_beta
