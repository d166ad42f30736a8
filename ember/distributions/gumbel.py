"""``Gumbel(loc, scale)``: the type-I extreme value distribution, reparametrisable."""

from __future__ import annotations

import math
from typing import Any

import ember
from ember._tensor import Size, Tensor
from ember.distributions import constraints
from ember.distributions.gamma import _batch
from ember.distributions.transformed_distribution import TransformedDistribution
from ember.distributions.transforms import AffineTransform, ExpTransform, Transform
from ember.distributions.uniform import Uniform
from ember.distributions.utils import broadcast_all

__all__ = ["Gumbel"]

EULER_GAMMA = 0.57721566490153286060


def _gumbel_transforms(loc: Tensor, scale: Tensor) -> list[Transform]:
    """``u -> loc - scale * log(-log(u))`` as four transforms (PyTorch's chain)."""
    return [
        ExpTransform().inv,
        AffineTransform(loc=0, scale=-ember.ones_like(scale)),
        ExpTransform().inv,
        AffineTransform(loc=loc, scale=-scale),
    ]


class Gumbel(TransformedDistribution):
    """The Gumbel distribution: ``loc - scale * log(-log(u))`` for ``u`` uniform in
    ``[tiny, 1 - eps)``, drawn as PyTorch draws it (same seed, same samples).

    >>> ember.distributions.Gumbel(0.0, 1.0).log_prob(ember.tensor(0.0))
    tensor(-1.)
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real  # type: ignore[assignment]
    has_rsample = True  # type: ignore[assignment]

    def __init__(self, loc: Any, scale: Any, validate_args: bool | None = None) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        finfo = ember.finfo(self.loc.dtype)
        batch = _batch(loc, scale)
        low = ember.full(batch, float(finfo.tiny), dtype=self.loc.dtype)
        high = ember.full(batch, 1 - float(finfo.eps), dtype=self.loc.dtype)
        base = Uniform(low, high, validate_args=validate_args)
        transforms = _gumbel_transforms(self.loc, self.scale)
        super().__init__(base, transforms, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Gumbel:
        new = self._get_checked_instance(Gumbel, _instance)
        batch_shape = Size(batch_shape)
        new.loc = self.loc.expand(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        new.base_dist = self.base_dist.expand(batch_shape)
        new.transforms = _gumbel_transforms(new.loc, new.scale)
        return self._finish_expand(new, batch_shape)  # type: ignore[no-any-return]

    def log_prob(self, value: Any) -> Tensor:
        value = ember.as_tensor(value, dtype=self.loc.dtype)
        if self._validate_args:
            self._validate_sample(value)
        y = (self.loc - value) / self.scale
        return (y - y.exp()) - self.scale.log()

    @property
    def mean(self) -> Tensor:
        return self.loc + self.scale * EULER_GAMMA

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def stddev(self) -> Tensor:
        return (math.pi / math.sqrt(6)) * self.scale

    @property
    def variance(self) -> Tensor:
        return self.stddev.pow(2)

    def entropy(self) -> Tensor:
        return self.scale.log() + (1 + EULER_GAMMA)
