"""``Kumaraswamy(concentration1, concentration0)``: a Beta-like law on ``(0, 1)`` with a
closed-form inverse cdf, reparametrisable."""

from __future__ import annotations

import math
from typing import Any

import ember
from ember._tensor import Size, Tensor
from ember.distributions import constraints
from ember.distributions.gumbel import EULER_GAMMA
from ember.distributions.transformed_distribution import TransformedDistribution
from ember.distributions.transforms import AffineTransform, PowerTransform, Transform
from ember.distributions.uniform import Uniform
from ember.distributions.utils import broadcast_all

__all__ = ["Kumaraswamy"]


def _moment(a: Tensor, b: Tensor, n: int) -> Tensor:
    """``E[X ** n] = b * B(1 + n / a, b)``."""
    arg = 1 + n / a
    return b * ember.exp(ember.lgamma(arg) + ember.lgamma(b) - ember.lgamma(arg + b))


def _transforms(c1: Tensor, c0: Tensor) -> list[Transform]:
    """``u -> (1 - u ** (1 / c0)) ** (1 / c1)`` (PyTorch's chain)."""
    return [
        PowerTransform(exponent=c0.reciprocal()),
        AffineTransform(loc=1.0, scale=-1.0),
        PowerTransform(exponent=c1.reciprocal()),
    ]


class Kumaraswamy(TransformedDistribution):
    """The Kumaraswamy distribution, drawn from uniform draws as PyTorch draws it (same
    seed, same samples).

    ``mode`` is the density's maximum ``((c1 - 1) / (c1 c0 - 1)) ** (1 / c1)`` where
    ``c1, c0 >= 1`` (not both 1), NaN elsewhere. PyTorch 2.13's formula takes ``log1p(-c0)``
    and so gives NaN for every ``c0 > 1``: the two differ there.

    >>> ember.distributions.Kumaraswamy(2.0, 2.0).log_prob(ember.tensor(0.5))
    tensor(0.4055)
    """

    arg_constraints = {
        "concentration1": constraints.positive,
        "concentration0": constraints.positive,
    }
    support = constraints.unit_interval  # type: ignore[assignment]
    has_rsample = True  # type: ignore[assignment]

    def __init__(
        self, concentration1: Any, concentration0: Any, validate_args: bool | None = None
    ) -> None:
        self.concentration1, self.concentration0 = broadcast_all(concentration1, concentration0)
        c0 = self.concentration0
        base = Uniform(ember.zeros_like(c0), ember.ones_like(c0), validate_args=validate_args)
        transforms = _transforms(self.concentration1, c0)
        super().__init__(base, transforms, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Kumaraswamy:
        new = self._get_checked_instance(Kumaraswamy, _instance)
        batch_shape = Size(batch_shape)
        new.concentration1 = self.concentration1.expand(batch_shape)
        new.concentration0 = self.concentration0.expand(batch_shape)
        new.base_dist = self.base_dist.expand(batch_shape)
        new.transforms = _transforms(new.concentration1, new.concentration0)
        return self._finish_expand(new, batch_shape)  # type: ignore[no-any-return]

    @property
    def mean(self) -> Tensor:
        return _moment(self.concentration1, self.concentration0, 1)

    @property
    def mode(self) -> Tensor:
        c1, c0 = self.concentration1, self.concentration0
        mode = ((c1 - 1) / (c1 * c0 - 1)) ** c1.reciprocal()
        defined = (c1 >= 1) & (c0 >= 1) & ((c1 > 1) | (c0 > 1))
        return ember.where(defined, mode, math.nan)

    @property
    def variance(self) -> Tensor:
        return _moment(self.concentration1, self.concentration0, 2) - self.mean.pow(2)

    def entropy(self) -> Tensor:
        c1, c0 = self.concentration1, self.concentration0
        harmonic = ember.digamma(c0 + 1) + EULER_GAMMA
        return (1 - c0.reciprocal()) + (1 - c1.reciprocal()) * harmonic - c1.log() - c0.log()
