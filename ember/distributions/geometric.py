"""``Geometric(probs=|logits=)``: the number of failures before the first success."""

from __future__ import annotations

from typing import Any

import ember
from ember._tensor import Tensor
from ember.distributions import constraints
from ember.distributions.distribution import Distribution
from ember.distributions.utils import (
    EMPTY,
    BinaryOdds,
    broadcast_all,
    set_probs_or_logits,
)

__all__ = ["Geometric"]


class Geometric(BinaryOdds, Distribution):
    """Failures before the first success of Bernoulli trials with success ``probs`` (in
    ``(0, 1]``) or log-odds ``logits``, not both.

    ``sample`` is ``floor(log(u) / log1p(-probs))`` for ``u`` uniform in ``[tiny, 1)``, as
    PyTorch draws it: with the same seed the samples are PyTorch's.

    >>> ember.distributions.Geometric(probs=0.5).log_prob(ember.tensor(2.0))
    tensor(-2.0794)
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(
        self, probs: Any = None, logits: Any = None, validate_args: bool | None = None
    ) -> None:
        batch_shape = set_probs_or_logits(self, probs, logits)
        super().__init__(batch_shape, validate_args=validate_args)
        if self._validate_args and probs is not None:
            value = self.probs
            valid = value > 0
            if not bool(valid.all()):
                raise ValueError(
                    f"Expected parameter probs ({type(value).__name__} of shape "
                    f"{tuple(value.shape)}) of distribution {self!r} to satisfy the "
                    f"constraint {constraints.positive!r}, but found invalid values:\n"
                    f"{value[~valid]}"
                )

    def expand(self, batch_shape: Any, _instance: Any = None) -> Geometric:
        return self._expanded_probs_or_logits(Geometric, batch_shape, _instance)  # type: ignore[no-any-return]

    @property
    def mean(self) -> Tensor:
        return 1.0 / self.probs - 1.0

    @property
    def mode(self) -> Tensor:
        return ember.zeros_like(self.probs)

    @property
    def variance(self) -> Tensor:
        return (1.0 / self.probs - 1.0) / self.probs

    def sample(self, sample_shape: Any = EMPTY) -> Tensor:
        shape = self._extended_shape(sample_shape)
        tiny = float(ember.finfo(self.probs.dtype).tiny)
        with ember.no_grad():
            u = ember.empty(shape, dtype=self.probs.dtype).uniform_(tiny, 1)
            return (u.log() / (-self.probs).log1p()).floor()

    def log_prob(self, value: Any) -> Tensor:
        value = ember.as_tensor(value, dtype=self.probs.dtype)
        if self._validate_args:
            self._validate_sample(value)
        value, probs = broadcast_all(value, self.probs)
        # probs == 1 and value == 0: 0 * log(0) is 0, not nan
        safe = ember.where((probs == 1) & (value == 0), ember.zeros_like(probs), probs)
        return value * (-safe).log1p() + self.probs.log()

    def entropy(self) -> Tensor:
        bce = ember.nn.functional.binary_cross_entropy_with_logits
        return bce(self.logits, self.probs, reduction="none") / self.probs
