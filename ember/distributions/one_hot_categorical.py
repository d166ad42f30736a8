"""``OneHotCategorical(probs=|logits=)`` and ``Multinomial(total_count, probs=|logits=)``:
categorical draws as one-hot vectors, and their counts over ``total_count`` draws."""

from __future__ import annotations

from typing import Any

import numpy as np

import ember
from ember._tensor import Size, Tensor
from ember.distributions import constraints
from ember.distributions.categorical import Categorical
from ember.distributions.distribution import Distribution
from ember.distributions.utils import EMPTY
from ember.random import _generator

__all__ = ["Multinomial", "OneHotCategorical", "OneHotCategoricalStraightThrough"]


class _OverCategorical(Distribution):
    """What ``OneHotCategorical`` and ``Multinomial`` share: a ``Categorical`` over the last
    dim of ``probs`` or ``logits`` (batch shape the rest, event shape that dim), whose
    parameters they read."""

    arg_constraints = {
        "probs": constraints.simplex,
        "logits": constraints.independent(constraints.real, 1),
    }

    def _init_categorical(
        self, probs: Tensor | None, logits: Tensor | None, validate_args: bool | None
    ) -> None:
        """Make the inner ``Categorical`` and set this distribution's shapes from it."""
        self._categorical = Categorical(probs, logits, validate_args=validate_args)
        shape = self._categorical.param_shape
        super().__init__(shape[:-1], shape[-1:], validate_args=validate_args)

    def _expanded_categorical(self, cls: type, batch_shape: Any, _instance: Any) -> Any:
        """The ``expand`` of both: a new instance whose ``Categorical`` is expanded."""
        new = self._get_checked_instance(cls, _instance)
        batch_shape = Size(batch_shape)
        new._categorical = self._categorical.expand(batch_shape)
        return self._finish_expand(new, batch_shape, self.event_shape)

    @property
    def probs(self) -> Tensor:
        return self._categorical.probs

    @property
    def logits(self) -> Tensor:
        return self._categorical.logits


class OneHotCategorical(_OverCategorical):
    """A ``Categorical`` draw as a one-hot vector over the last dim.

    >>> ember.distributions.OneHotCategorical(probs=ember.tensor([0.0, 1.0])).sample()
    tensor([0., 1.])
    """

    support = constraints.independent(constraints.boolean, 1)  # one-hot: PyTorch's `one_hot`
    has_enumerate_support = True

    def __init__(
        self, probs: Tensor | None = None, logits: Tensor | None = None,
        validate_args: bool | None = None,
    ) -> None:  # fmt: skip
        self._init_categorical(probs, logits, validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> OneHotCategorical:
        return self._expanded_categorical(OneHotCategorical, batch_shape, _instance)  # type: ignore[no-any-return]

    @property
    def mean(self) -> Tensor:
        return self._categorical.probs

    @property
    def mode(self) -> Tensor:
        probs = self._categorical.probs
        return ember.nn.functional.one_hot(probs.argmax(-1), probs.shape[-1]).to(probs.dtype)

    @property
    def variance(self) -> Tensor:
        p = self._categorical.probs
        return p * (1 - p)

    def sample(self, sample_shape: Any = EMPTY) -> Tensor:
        probs = self._categorical.probs
        idx = self._categorical.sample(sample_shape)
        return ember.nn.functional.one_hot(idx, probs.shape[-1]).to(probs.dtype)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return self._categorical.log_prob(value.argmax(-1))

    def entropy(self) -> Tensor:
        return self._categorical.entropy()

    def enumerate_support(self, expand: bool = True) -> Tensor:
        n = self.event_shape[0]
        values = ember.eye(n, dtype=self._categorical.probs.dtype)
        values = values.view((n,) + (1,) * len(self.batch_shape) + (n,))
        if expand:
            values = values.expand((n, *self.batch_shape, n))
        return values


class OneHotCategoricalStraightThrough(OneHotCategorical):
    """``OneHotCategorical`` with the straight-through gradient estimator: ``rsample`` is a
    one-hot draw whose gradient is that of ``probs`` (``sample + probs - probs.detach()``).

    >>> d = ember.distributions.OneHotCategoricalStraightThrough(probs=ember.tensor([0.0, 1.0]))
    >>> d.rsample()
    tensor([0., 1.])
    """

    has_rsample = True

    def rsample(self, sample_shape: Any = EMPTY) -> Tensor:
        draws = self.sample(sample_shape)
        probs = self._categorical.probs
        return draws + (probs - probs.detach())


class Multinomial(_OverCategorical):
    """Counts of each of the last dim's categories over ``total_count`` categorical draws.

    >>> ember.distributions.Multinomial(4, probs=ember.tensor([1.0, 1.0])).mean
    tensor([2., 2.])
    """

    def __init__(
        self, total_count: int = 1, probs: Tensor | None = None, logits: Tensor | None = None,
        validate_args: bool | None = None,
    ) -> None:  # fmt: skip
        if not isinstance(total_count, int):
            raise NotImplementedError("inhomogeneous total_count is not supported")
        self.total_count = total_count
        self._init_categorical(probs, logits, validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Multinomial:
        new = self._expanded_categorical(Multinomial, batch_shape, _instance)
        new.total_count = self.total_count
        return new  # type: ignore[no-any-return]

    @property
    def support(self) -> constraints.Constraint:
        return constraints.independent(constraints.integer_interval(0, self.total_count), 1)

    @property
    def mean(self) -> Tensor:
        return self.probs * self.total_count

    @property
    def variance(self) -> Tensor:
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape: Any = EMPTY) -> Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        p = self.probs.detach().numpy().astype(np.float64)
        p = np.broadcast_to(p / p.sum(-1, keepdims=True), shape)
        drawn = _generator(None).multinomial(self.total_count, p.reshape(-1, shape[-1]))
        return ember.from_numpy(drawn.reshape(shape).astype(self.probs.dtype.np))

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        logits = self.logits
        logits = logits.clone()
        log_factorial_n = ember.lgamma(value.sum(-1) + 1)
        log_factorial_xs = ember.lgamma(value + 1).sum(-1)
        logits = ember.where(
            (value == 0) & (logits == float("-inf")), ember.zeros_like(logits), logits
        )
        log_powers = (logits * value).sum(-1)
        return log_factorial_n - log_factorial_xs + log_powers

    def entropy(self) -> Tensor:
        n = self.total_count
        probs = self.probs
        support = ember.arange(1, n + 1, dtype=probs.dtype).view((-1,) + (1,) * probs.dim())
        n_t = ember.tensor(float(n), dtype=probs.dtype)
        binomial_log_p = (
            ember.lgamma(n_t + 1)
            - ember.lgamma(support + 1)
            - ember.lgamma(n - support + 1)
            + ember.xlogy(support, probs)
            + ember.xlogy(n - support, 1 - probs)
        )
        term1 = n * self._categorical.entropy() - ember.lgamma(n_t + 1)
        term2 = (ember.exp(binomial_log_p) * ember.lgamma(support + 1)).sum([0, -1])
        return term1 + term2
