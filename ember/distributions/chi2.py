"""``Chi2(df)``: the chi-squared distribution, ``Gamma(df / 2, 1 / 2)``."""

from __future__ import annotations

from typing import Any

from ember._tensor import Size, Tensor
from ember.distributions import constraints
from ember.distributions.distribution import Distribution
from ember.distributions.gamma import Gamma

__all__ = ["Chi2"]


class Chi2(Gamma):
    """The chi-squared distribution with ``df`` degrees of freedom. Its draws are
    ``Gamma``'s, which come from ember's gamma sampler, not PyTorch's stream.

    >>> ember.distributions.Chi2(2.0).mean
    tensor(2.)
    """

    arg_constraints = {"df": constraints.positive}

    def __init__(self, df: Any, validate_args: bool | None = None) -> None:
        super().__init__(0.5 * df, 0.5, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Chi2:
        new = self._get_checked_instance(Chi2, _instance)
        batch_shape = Size(batch_shape)
        new.concentration = self.concentration.expand(batch_shape)
        new.rate = self.rate.expand(batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def df(self) -> Tensor:
        return self.concentration * 2
