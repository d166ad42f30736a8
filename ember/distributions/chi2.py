"""``Chi2(df)``: the chi-squared distribution, ``Gamma(df / 2, 1 / 2)``."""

from __future__ import annotations

from typing import Any

from ember._tensor import Tensor
from ember.distributions import constraints
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
        params = ("concentration", "rate")
        return self._expanded(Chi2, batch_shape, _instance, params)  # type: ignore[no-any-return]

    @property
    def df(self) -> Tensor:
        return self.concentration * 2
