"""``Distribution``: the base of every distribution (``torch.distributions.Distribution``).

A distribution has a ``batch_shape`` (independent, differently parametrised copies) and an
``event_shape`` (the shape of one draw). ``sample(sample_shape)`` returns
``sample_shape + batch_shape + event_shape``; ``log_prob(value)`` returns a
``batch_shape``-like tensor (broadcast with value's leading dimensions).

# NOTE [argument validation]
As in PyTorch, validation is on by default (``Distribution.set_default_validate_args``
switches it for every new instance; ``validate_args=`` for one). It checks each parameter
against ``arg_constraints`` when the distribution is built, and a value's shape and
``support`` in ``log_prob``/``cdf``, raising ``ValueError`` with PyTorch's messages. It reads
the values (one sync per check), so turning it off is the fast path.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from typing import Any

import ember
from ember._tensor import Size, Tensor
from ember.distributions import constraints
from ember.distributions.utils import EMPTY, broadcast_all, lazy_property

__all__ = ["Distribution"]

_SizeLike = Size | Sequence[int]


class Distribution:
    """The base class of probability distributions.

    >>> d = ember.distributions.Normal(ember.zeros(3), 1.0)
    >>> d.batch_shape, d.event_shape, d.sample((2,)).shape
    (ember.Size([3]), ember.Size([]), ember.Size([2, 3]))
    """

    has_rsample = False
    has_enumerate_support = False
    _validate_args = __debug__

    @staticmethod
    def set_default_validate_args(value: bool) -> None:
        """Turn argument validation on or off for distributions built from now on.

        >>> ember.distributions.Distribution.set_default_validate_args(True)
        """
        if value not in (True, False):
            raise ValueError
        Distribution._validate_args = value

    def __init__(
        self,
        batch_shape: _SizeLike = EMPTY,
        event_shape: _SizeLike = EMPTY,
        validate_args: bool | None = None,
    ) -> None:
        self._batch_shape = Size(batch_shape)
        self._event_shape = Size(event_shape)
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            self._check_parameters()

    def _check_parameters(self) -> None:
        """NOTE [argument validation]: every given parameter within its constraint."""
        try:
            arg_constraints = self.arg_constraints
        except NotImplementedError:
            arg_constraints = {}
        for param, constraint in arg_constraints.items():
            if constraints.is_dependent(constraint):
                continue
            if param not in self.__dict__ and isinstance(
                getattr(type(self), param, None), lazy_property
            ):
                continue  # a parameter computed from another is not checked
            value = getattr(self, param)
            if not bool(constraint.check(value).all()):
                raise ValueError(
                    f"Expected parameter {param} ({type(value).__name__} of shape "
                    f"{tuple(value.shape)}) of distribution {self!r} to satisfy the "
                    f"constraint {constraint!r}, but found invalid values:\n{value}"
                )

    def expand(self, batch_shape: _SizeLike, _instance: Any = None) -> Distribution:
        """A distribution whose parameters are expanded (not copied) to ``batch_shape``."""
        raise NotImplementedError

    @property
    def batch_shape(self) -> Size:
        """The shape over which parameters are batched."""
        return self._batch_shape

    @property
    def event_shape(self) -> Size:
        """The shape of a single sample (without batching)."""
        return self._event_shape

    @property
    def arg_constraints(self) -> dict[str, constraints.Constraint]:
        """Each parameter's name and the constraint its values must satisfy."""
        raise NotImplementedError

    @property
    def support(self) -> Any:
        """The constraint that samples satisfy."""
        raise NotImplementedError

    @property
    def mean(self) -> Tensor:
        raise NotImplementedError(f"{type(self)} does not implement mean")

    @property
    def mode(self) -> Tensor:
        raise NotImplementedError(f"{type(self)} does not implement mode")

    @property
    def variance(self) -> Tensor:
        raise NotImplementedError(f"{type(self)} does not implement variance")

    @property
    def stddev(self) -> Tensor:
        return self.variance.sqrt()

    def sample(self, sample_shape: _SizeLike = EMPTY) -> Tensor:
        """Draw ``sample_shape`` batches of samples, with no graph to the parameters."""
        with ember.no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape: _SizeLike = EMPTY) -> Tensor:
        """Draw samples by reparametrisation: gradients flow to the parameters."""
        raise NotImplementedError

    def sample_n(self, n: int) -> Tensor:
        return self.sample(Size((n,)))

    def log_prob(self, value: Tensor) -> Tensor:
        raise NotImplementedError

    def cdf(self, value: Tensor) -> Tensor:
        raise NotImplementedError

    def icdf(self, value: Tensor) -> Tensor:
        raise NotImplementedError

    def enumerate_support(self, expand: bool = True) -> Tensor:
        raise NotImplementedError

    def entropy(self) -> Tensor:
        raise NotImplementedError

    def perplexity(self) -> Tensor:
        """``exp(entropy)``."""
        return ember.exp(self.entropy())

    def _extended_shape(self, sample_shape: _SizeLike = EMPTY) -> Size:
        """``sample_shape + batch_shape + event_shape``."""
        if not isinstance(sample_shape, Size):
            sample_shape = Size(sample_shape)
        return Size((*sample_shape, *self._batch_shape, *self._event_shape))

    def _validate_sample(self, value: Any) -> None:
        """NOTE [argument validation]: ``value``'s shape and its support."""
        if not isinstance(value, Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        start = value.dim() - len(self._event_shape)
        if value.shape[start:] != self._event_shape:
            raise ValueError(
                "The right-most size of value must match event_shape: "
                f"{value.shape} vs {self._event_shape}."
            )
        actual, expected = value.shape, Size((*self._batch_shape, *self._event_shape))
        for i, j in zip(reversed(actual), reversed(expected), strict=False):
            if i != 1 and j != 1 and i != j:
                raise ValueError(
                    "Value is not broadcastable with batch_shape+event_shape: "
                    f"{actual} vs {expected}."
                )
        try:
            support = self.support
        except NotImplementedError:
            return
        if not bool(support.check(value).all()):
            raise ValueError(
                f"Expected value argument ({type(value).__name__} of shape "
                f"{tuple(value.shape)}) to be within the support ({support!r}) of the "
                f"distribution {self!r}, but found invalid values:\n{value}"
            )

    def _expanded(
        self, cls: type, batch_shape: _SizeLike, _instance: Any, params: Sequence[str]
    ) -> Any:
        """The ``expand`` of a distribution whose ``params`` all have its batch shape: a new
        instance (``_get_checked_instance``) with each of them expanded to ``batch_shape``."""
        new = self._get_checked_instance(cls, _instance)
        batch_shape = Size(batch_shape)
        for name in params:
            setattr(new, name, getattr(self, name).expand(batch_shape))
        return self._finish_expand(new, batch_shape)

    def _finish_expand(self, new: Any, batch_shape: Size, event_shape: _SizeLike = EMPTY) -> Any:
        """The last step of every ``expand``: ``new``'s shapes set, without validating its
        (already valid) parameters, and ``self``'s choice of validation carried over."""
        Distribution.__init__(new, batch_shape, event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _expand_probs_or_logits(self, new: Any, param_shape: Size) -> None:
        """Give ``new`` ``self``'s ``probs`` and/or ``logits`` (those already computed)
        expanded to ``param_shape``, and as ``_param`` the one given last (a distribution
        given by one of the two, as ``Bernoulli`` and ``Categorical``)."""
        if "probs" in self.__dict__:
            new.probs = self.probs.expand(param_shape)  # type: ignore[attr-defined]
            new._param = new.probs
        if "logits" in self.__dict__:
            new.logits = self.logits.expand(param_shape)  # type: ignore[attr-defined]
            new._param = new.logits

    def _expanded_probs_or_logits(
        self, cls: type, batch_shape: _SizeLike, _instance: Any, event: tuple[int, ...] = ()
    ) -> Any:
        """The ``expand`` of a distribution given by ``probs`` or ``logits`` of shape
        ``batch_shape + event``: a new instance with them expanded (the caller adds any
        other parameter)."""
        new = self._get_checked_instance(cls, _instance)
        batch_shape = Size(batch_shape)
        self._expand_probs_or_logits(new, Size((*batch_shape, *event)))
        return self._finish_expand(new, batch_shape)

    def _get_checked_instance(self, cls: type, _instance: Any = None) -> Any:
        if _instance is None and type(self).__init__ != cls.__init__:
            raise NotImplementedError(
                f"Subclass {type(self).__name__} of {cls.__name__} that defines a custom "
                "__init__ method must also define a custom .expand() method."
            )
        return self.__new__(type(self)) if _instance is None else _instance

    def __repr__(self) -> str:
        names = [k for k in self.arg_constraints if k in self.__dict__]
        parts = []
        for p in names:
            v = self.__dict__[p]
            parts.append(f"{p}: {v if v.numel() == 1 else v.size()}")
        return f"{type(self).__name__}({', '.join(parts)})"


class LocScale:
    """What the real-line location-scale families share (``Normal``, ``Laplace``, ``Cauchy``;
    mixed in before their ``Distribution`` base): ``loc`` and a positive ``scale``,
    broadcast together (no batch shape when both are numbers), reparametrised draws, and
    ``loc`` as the mode."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True
    loc: Tensor
    scale: Tensor

    def __init__(self, loc: Any, scale: Any, validate_args: bool | None = None) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        numbers_only = isinstance(loc, numbers.Number) and isinstance(scale, numbers.Number)
        batch_shape = Size() if numbers_only else self.loc.size()
        super().__init__(batch_shape, validate_args=validate_args)  # type: ignore[call-arg]

    @property
    def mode(self) -> Tensor:
        return self.loc
