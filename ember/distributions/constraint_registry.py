"""``biject_to`` and ``transform_to``: from a constraint to a transform whose codomain is
that constraint (``torch.distributions.constraint_registry``).

``biject_to(c)`` is a bijection from unconstrained space onto ``c`` (so ``log_abs_det_jacobian``
is defined: for a change of variables in a density); ``transform_to(c)`` need only map onto
``c`` (for optimising a constrained parameter by an unconstrained one). They differ on the
simplex (stick breaking against a softmax); as in PyTorch, only ``transform_to`` takes
``lower_cholesky``, ``positive_definite`` and ``positive_semidefinite`` (their transforms
drop the upper triangle, so they are not bijections). ``register(constraint, factory)`` adds a
constraint type (or a singleton instance's type) for a new constraint.

>>> from ember.distributions import biject_to, constraints
>>> t = biject_to(constraints.positive)
>>> t(ember.tensor(0.0)), t.inv(ember.tensor(1.0))
(tensor(1.), tensor(0.))
"""

from __future__ import annotations

import numbers
from collections.abc import Callable
from typing import Any

from ember.distributions import constraints, transforms
from ember.distributions.constraints import Constraint

__all__ = ["ConstraintRegistry", "biject_to", "transform_to"]

Factory = Callable[[Any], transforms.Transform]


class ConstraintRegistry:
    """A registry from constraint types to factories of transforms onto them."""

    def __init__(self) -> None:
        self._registry: dict[type, Factory] = {}

    def register(self, constraint: Any, factory: Factory | None = None) -> Any:
        """Register ``factory(constraint) -> Transform`` for ``constraint``'s type (a
        ``Constraint`` subclass, or an instance standing for its type); as a decorator when
        ``factory`` is omitted.

        >>> from ember.distributions import constraints, transform_to, transforms
        >>> class MyConstraint(constraints.Constraint): ...
        >>> @transform_to.register(MyConstraint)
        ... def _to_mine(constraint):
        ...     return transforms.ExpTransform()
        >>> transform_to(MyConstraint())
        ExpTransform()
        """
        if factory is None:
            return lambda factory: self.register(constraint, factory)
        if isinstance(constraint, Constraint):
            constraint = type(constraint)
        if not (isinstance(constraint, type) and issubclass(constraint, Constraint)):
            raise TypeError(
                "register: expected constraint to be either a Constraint subclass or instance, "
                f"but got {constraint!r}"
            )
        self._registry[constraint] = factory
        return factory

    def __call__(self, constraint: Any) -> transforms.Transform:
        """The transform registered for ``constraint``'s type, built for ``constraint``."""
        try:
            factory = self._registry[type(constraint)]
        except KeyError:
            raise NotImplementedError(
                f"Cannot transform {type(constraint).__name__} constraints"
            ) from None
        return factory(constraint)


biject_to = ConstraintRegistry()
transform_to = ConstraintRegistry()


def _both(constraint: Any) -> Callable[[Factory], Factory]:
    """Register one factory in both registries."""

    def decorator(factory: Factory) -> Factory:
        biject_to.register(constraint, factory)
        transform_to.register(constraint, factory)
        return factory

    return decorator


@_both(constraints.real)
def _to_real(constraint: Any) -> transforms.Transform:
    return transforms.identity_transform


def _register_composites(registry: ConstraintRegistry) -> None:
    """The constraints built of others (independent, cat, stack): each part through
    ``registry`` itself."""

    def independent(constraint: Any) -> transforms.Transform:
        base = registry(constraint.base_constraint)
        return transforms.IndependentTransform(base, constraint.reinterpreted_batch_ndims)

    def cat(constraint: Any) -> transforms.Transform:
        parts = [registry(c) for c in constraint.cseq]
        return transforms.CatTransform(parts, constraint.dim, constraint.lengths)

    def stack(constraint: Any) -> transforms.Transform:
        return transforms.StackTransform([registry(c) for c in constraint.cseq], constraint.dim)

    registry.register(constraints.independent, independent)
    registry.register(constraints.cat, cat)
    registry.register(constraints.stack, stack)


_register_composites(biject_to)
_register_composites(transform_to)


@_both(constraints.positive)
@_both(constraints.nonnegative)
def _to_positive(constraint: Any) -> transforms.Transform:
    return transforms.ExpTransform()


@_both(constraints.greater_than)
@_both(constraints.greater_than_eq)
def _to_greater_than(constraint: Any) -> transforms.Transform:
    shift = transforms.AffineTransform(constraint.lower_bound, 1)
    return transforms.ComposeTransform([transforms.ExpTransform(), shift])


@_both(constraints.less_than)
def _to_less_than(constraint: Any) -> transforms.Transform:
    flip = transforms.AffineTransform(constraint.upper_bound, -1)
    return transforms.ComposeTransform([transforms.ExpTransform(), flip])


@_both(constraints.interval)
@_both(constraints.half_open_interval)
def _to_interval(constraint: Any) -> transforms.Transform:
    low, high = constraint.lower_bound, constraint.upper_bound
    numbers_ = isinstance(low, numbers.Number) and isinstance(high, numbers.Number)
    if numbers_ and low == 0 and high == 1:
        return transforms.SigmoidTransform()
    scale = transforms.AffineTransform(low, high - low)
    return transforms.ComposeTransform([transforms.SigmoidTransform(), scale])


@biject_to.register(constraints.simplex)
def _biject_to_simplex(constraint: Any) -> transforms.Transform:
    return transforms.StickBreakingTransform()


@transform_to.register(constraints.simplex)
def _transform_to_simplex(constraint: Any) -> transforms.Transform:
    return transforms.SoftmaxTransform()


@transform_to.register(constraints.lower_cholesky)
def _to_lower_cholesky(constraint: Any) -> transforms.Transform:
    return transforms.LowerCholeskyTransform()


@transform_to.register(constraints.positive_definite)
@transform_to.register(constraints.positive_semidefinite)
def _to_positive_definite(constraint: Any) -> transforms.Transform:
    return transforms.PositiveDefiniteTransform()


@_both(constraints.corr_cholesky)
def _to_corr_cholesky(constraint: Any) -> transforms.Transform:
    return transforms.CorrCholeskyTransform()
