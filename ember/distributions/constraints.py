"""Constraints: what values a distribution's parameters and samples may take
(``torch.distributions.constraints``). ``check(value)`` is a bool tensor over the batch
(the last ``event_dim`` dimensions reduced); ``repr`` is what validation errors print.

>>> from ember.distributions import constraints
>>> constraints.positive.check(ember.tensor([1.0, -1.0]))
tensor([ True, False])
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import ember
from ember._tensor import Tensor

__all__ = [
    "Constraint", "boolean", "cat", "corr_cholesky", "dependent", "dependent_property",
    "greater_than", "greater_than_eq", "half_open_interval", "independent", "integer_interval",
    "interval", "is_dependent",
    "less_than", "lower_cholesky", "lower_triangular", "nonnegative", "nonnegative_integer",
    "positive", "positive_definite", "positive_integer", "positive_semidefinite", "real",
    "real_vector", "simplex", "square", "stack", "symmetric", "unit_interval",
]  # fmt: skip


class Constraint:
    """A region of values: ``check`` says, per batch element, whether a value is in it."""

    is_discrete = False
    event_dim = 0

    def check(self, value: Tensor) -> Tensor:
        raise NotImplementedError

    def __repr__(self) -> str:
        return type(self).__name__.lstrip("_") + "()"


class _Dependent(Constraint):
    """A constraint that depends on other parameters; it cannot be checked on its own."""

    def __init__(self, *, is_discrete: Any = NotImplemented, event_dim: Any = NotImplemented):
        self._is_discrete, self._event_dim = is_discrete, event_dim

    @property
    def is_discrete(self) -> bool:  # type: ignore[override]
        if self._is_discrete is NotImplemented:
            raise NotImplementedError(".is_discrete cannot be determined statically")
        return bool(self._is_discrete)

    @property
    def event_dim(self) -> int:  # type: ignore[override]
        if self._event_dim is NotImplemented:
            raise NotImplementedError(".event_dim cannot be determined statically")
        return int(self._event_dim)

    def __call__(
        self, *, is_discrete: Any = NotImplemented, event_dim: Any = NotImplemented
    ) -> Any:
        if is_discrete is NotImplemented:
            is_discrete = self._is_discrete
        if event_dim is NotImplemented:
            event_dim = self._event_dim
        return _Dependent(is_discrete=is_discrete, event_dim=event_dim)

    def check(self, value: Tensor) -> Tensor:
        raise ValueError("Cannot determine validity of dependent constraint")


def is_dependent(constraint: Any) -> bool:
    """Whether ``constraint`` depends on other parameters (and so is not checked).

    >>> from ember.distributions import constraints
    >>> from ember.distributions.constraints import is_dependent
    >>> is_dependent(constraints.dependent), is_dependent(constraints.real)
    (True, False)
    """
    return isinstance(constraint, _Dependent)


class dependent_property(property, _Dependent):
    """A property whose value is a constraint built from the instance (a ``support`` that
    depends on parameters); on the class it reads as a dependent constraint."""

    def __init__(
        self,
        fn: Callable[..., Any] | None = None,
        *,
        is_discrete: Any = NotImplemented,
        event_dim: Any = NotImplemented,
    ) -> None:
        property.__init__(self, fn)
        _Dependent.__init__(self, is_discrete=is_discrete, event_dim=event_dim)

    def __call__(self, fn: Callable[..., Any]) -> dependent_property:  # type: ignore[override]
        return dependent_property(fn, is_discrete=self._is_discrete, event_dim=self._event_dim)


class _IndependentConstraint(Constraint):
    """``base`` over the last ``reinterpreted_batch_ndims`` dimensions, all at once."""

    def __init__(self, base: Constraint, reinterpreted_batch_ndims: int) -> None:
        self.base_constraint = base
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims

    @property
    def is_discrete(self) -> bool:  # type: ignore[override]
        return self.base_constraint.is_discrete

    @property
    def event_dim(self) -> int:  # type: ignore[override]
        return self.base_constraint.event_dim + self.reinterpreted_batch_ndims

    def check(self, value: Tensor) -> Tensor:
        result = self.base_constraint.check(value)
        n = self.reinterpreted_batch_ndims
        if result.dim() < n:
            expected = self.base_constraint.event_dim + n
            raise ValueError(f"Expected value.dim() >= {expected} but got {value.dim()}")
        return result.reshape(*result.shape[: result.dim() - n], -1).all(-1)

    def __repr__(self) -> str:
        return f"IndependentConstraint({self.base_constraint!r}, {self.reinterpreted_batch_ndims})"


class _Boolean(Constraint):
    is_discrete = True

    def check(self, value: Tensor) -> Tensor:
        return (value == 0) | (value == 1)


class _IntegerInterval(Constraint):
    is_discrete = True

    def __init__(self, lower_bound: Any, upper_bound: Any) -> None:
        self.lower_bound, self.upper_bound = lower_bound, upper_bound

    def check(self, value: Tensor) -> Tensor:
        return (value % 1 == 0) & (self.lower_bound <= value) & (value <= self.upper_bound)

    def __repr__(self) -> str:
        return f"IntegerInterval(lower_bound={self.lower_bound}, upper_bound={self.upper_bound})"


class _IntegerGreaterThan(Constraint):
    is_discrete = True

    def __init__(self, lower_bound: Any) -> None:
        self.lower_bound = lower_bound

    def check(self, value: Tensor) -> Tensor:
        return (value % 1 == 0) & (value >= self.lower_bound)

    def __repr__(self) -> str:
        return f"IntegerGreaterThan(lower_bound={self.lower_bound})"


class _Real(Constraint):
    def check(self, value: Tensor) -> Tensor:
        return value == value  # everything but NaN


class _GreaterThan(Constraint):
    def __init__(self, lower_bound: Any) -> None:
        self.lower_bound = lower_bound

    def check(self, value: Tensor) -> Tensor:
        return self.lower_bound < value

    def __repr__(self) -> str:
        return f"GreaterThan(lower_bound={self.lower_bound})"


class _GreaterThanEq(Constraint):
    def __init__(self, lower_bound: Any) -> None:
        self.lower_bound = lower_bound

    def check(self, value: Tensor) -> Tensor:
        return self.lower_bound <= value

    def __repr__(self) -> str:
        return f"GreaterThanEq(lower_bound={self.lower_bound})"


class _LessThan(Constraint):
    def __init__(self, upper_bound: Any) -> None:
        self.upper_bound = upper_bound

    def check(self, value: Tensor) -> Tensor:
        return value < self.upper_bound

    def __repr__(self) -> str:
        return f"LessThan(upper_bound={self.upper_bound})"


class _Interval(Constraint):
    def __init__(self, lower_bound: Any, upper_bound: Any) -> None:
        self.lower_bound, self.upper_bound = lower_bound, upper_bound

    def check(self, value: Tensor) -> Tensor:
        return (self.lower_bound <= value) & (value <= self.upper_bound)

    def __repr__(self) -> str:
        return f"Interval(lower_bound={self.lower_bound}, upper_bound={self.upper_bound})"


class _HalfOpenInterval(Constraint):
    def __init__(self, lower_bound: Any, upper_bound: Any) -> None:
        self.lower_bound, self.upper_bound = lower_bound, upper_bound

    def check(self, value: Tensor) -> Tensor:
        return (self.lower_bound <= value) & (value < self.upper_bound)

    def __repr__(self) -> str:
        return f"HalfOpenInterval(lower_bound={self.lower_bound}, upper_bound={self.upper_bound})"


class _Simplex(Constraint):
    event_dim = 1

    def check(self, value: Tensor) -> Tensor:
        return ember.all(value >= 0, -1) & ((value.sum(-1) - 1).abs() < 1e-6)


class _LowerCholesky(Constraint):
    event_dim = 2

    def check(self, value: Tensor) -> Tensor:
        lower = _all_in_matrix(value.tril() == value)
        positive_diagonal = (value.diagonal(0, -2, -1) > 0).all(-1)
        return lower & positive_diagonal


class _PositiveDefinite(Constraint):
    event_dim = 2

    def check(self, value: Tensor) -> Tensor:
        # symmetric as torch.isclose(value, value.mT, atol=1e-6) says, and a Cholesky exists
        close = (value - value.mT).abs() <= 1e-6 + 1e-5 * value.mT.abs()
        return _all_in_matrix(close) & _has_cholesky(value)


def _all_in_matrix(mask: Tensor) -> Tensor:
    """Per matrix, whether ``mask`` holds at every entry."""
    return mask.reshape(*mask.shape[:-2], -1).all(-1)


class _Square(Constraint):
    event_dim = 2

    def check(self, value: Tensor) -> Tensor:
        is_square = value.shape[-2] == value.shape[-1]
        return ember.full(tuple(value.shape[:-2]), is_square, dtype=ember.bool)


class _Symmetric(_Square):
    def check(self, value: Tensor) -> Tensor:
        square = super().check(value)
        if not bool(square.all()):
            return square
        return _all_in_matrix((value - value.mT).abs() <= 1e-6 + 1e-5 * value.mT.abs())


class _LowerTriangular(Constraint):
    event_dim = 2

    def check(self, value: Tensor) -> Tensor:
        return _all_in_matrix(value.tril() == value)


class _CorrCholesky(Constraint):
    """Lower Cholesky factors of correlation matrices: positive diagonal, unit rows."""

    event_dim = 2

    def check(self, value: Tensor) -> Tensor:
        tol = float(ember.finfo(value.dtype).eps) * value.shape[-1] * 10
        row_norm = ember.linalg.vector_norm(value.detach(), dim=-1)
        unit_rows = ((row_norm - 1.0).abs() <= tol).all(-1)
        return lower_cholesky.check(value) & unit_rows


class _PositiveSemidefinite(_Symmetric):
    def check(self, value: Tensor) -> Tensor:
        symmetric = super().check(value)
        if not bool(symmetric.all()):
            return symmetric
        return (ember.linalg.eigvalsh(value.detach()) >= 0).all(-1)


class _OverParts(Constraint):
    """One constraint per part of a value along ``dim`` (``_Cat``, ``_Stack``)."""

    def __init__(self, cseq: list[Constraint], dim: int = 0) -> None:
        self.cseq = list(cseq)
        self.dim = dim

    @property
    def is_discrete(self) -> bool:  # type: ignore[override]
        return any(c.is_discrete for c in self.cseq)

    @property
    def event_dim(self) -> int:  # type: ignore[override]
        return max(c.event_dim for c in self.cseq)


class _Cat(_OverParts):
    """``cseq[i]`` on the ``lengths[i]`` slice along ``dim`` (as ``torch.cat``)."""

    def __init__(self, cseq: list[Constraint], dim: int = 0, lengths: Any = None) -> None:
        super().__init__(cseq, dim)
        self.lengths = [1] * len(self.cseq) if lengths is None else list(lengths)
        if len(self.lengths) != len(self.cseq):
            raise ValueError(
                f"cat: got {len(self.cseq)} constraints but {len(self.lengths)} lengths"
            )

    def check(self, value: Tensor) -> Tensor:
        parts = value.split(self.lengths, self.dim)
        return ember.cat([c.check(v) for c, v in zip(self.cseq, parts, strict=True)], self.dim)


class _Stack(_OverParts):
    """``cseq[i]`` on index ``i`` along ``dim`` (as ``torch.stack``)."""

    @property
    def event_dim(self) -> int:  # type: ignore[override]
        dim = super().event_dim
        return dim + 1 if self.dim + dim < 0 else dim

    def check(self, value: Tensor) -> Tensor:
        parts = value.unbind(self.dim)
        return ember.stack([c.check(v) for c, v in zip(self.cseq, parts, strict=True)], self.dim)


def _has_cholesky(value: Tensor) -> Tensor:
    """Per matrix, whether it is positive definite (its Cholesky factorisation succeeds)."""
    return ember.linalg.cholesky_ex(value.detach())[1] == 0


dependent = _Dependent()
boolean = _Boolean()
nonnegative_integer = _IntegerGreaterThan(0)
positive_integer = _IntegerGreaterThan(1)
integer_interval = _IntegerInterval
real = _Real()
real_vector = _IndependentConstraint(real, 1)
positive = _GreaterThan(0.0)
nonnegative = _GreaterThanEq(0.0)
greater_than = _GreaterThan
greater_than_eq = _GreaterThanEq
less_than = _LessThan
unit_interval = _Interval(0.0, 1.0)
interval = _Interval
half_open_interval = _HalfOpenInterval
simplex = _Simplex()
lower_cholesky = _LowerCholesky()
positive_definite = _PositiveDefinite()
independent = _IndependentConstraint
corr_cholesky = _CorrCholesky()
lower_triangular = _LowerTriangular()
positive_semidefinite = _PositiveSemidefinite()
square = _Square()
symmetric = _Symmetric()
cat = _Cat
stack = _Stack
