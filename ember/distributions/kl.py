"""``kl_divergence(p, q)``: KL(p || q) in closed form, looked up by the pair of types
(``register_kl`` adds a pair; the most specific registered pair of base classes wins).

>>> from ember.distributions.kl import kl_divergence
>>> p, q = ember.distributions.Normal(0.0, 1.0), ember.distributions.Normal(1.0, 1.0)
>>> kl_divergence(p, q)
tensor(0.5000)
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import total_ordering
from typing import Any

import numpy as np

import ember
from ember._tensor import Tensor
from ember.distributions.bernoulli import Bernoulli
from ember.distributions.categorical import Categorical
from ember.distributions.distribution import Distribution
from ember.distributions.multivariate_normal import MultivariateNormal, _batch_mahalanobis
from ember.distributions.normal import Normal
from ember.distributions.uniform import Uniform
from ember.distributions.utils import softplus

__all__ = ["kl_divergence", "register_kl"]

KLFunction = Callable[[Any, Any], Tensor]
_REGISTRY: dict[tuple[type, type], KLFunction] = {}
_MEMO: dict[tuple[type, type], KLFunction | None] = {}


def register_kl(type_p: type, type_q: type) -> Callable[[KLFunction], KLFunction]:
    """Decorator: ``fn(p, q)`` computes KL(p || q) for distributions of these types.

    >>> from ember.distributions import Normal, kl_divergence, register_kl
    >>> class UnitNormal(Normal):
    ...     def __init__(self, loc):
    ...         super().__init__(loc, 1.0)
    >>> @register_kl(UnitNormal, UnitNormal)
    ... def kl_unit_normals(p, q):
    ...     return 0.5 * (p.loc - q.loc) ** 2
    >>> kl_divergence(UnitNormal(0.0), UnitNormal(1.0))
    tensor(0.5000)
    """
    if not (isinstance(type_p, type) and issubclass(type_p, Distribution)):
        raise TypeError(f"Expected type_p to be a Distribution subclass but got {type_p}")
    if not (isinstance(type_q, type) and issubclass(type_q, Distribution)):
        raise TypeError(f"Expected type_q to be a Distribution subclass but got {type_q}")

    def decorator(fn: KLFunction) -> KLFunction:
        _REGISTRY[type_p, type_q] = fn
        _MEMO.clear()
        return fn

    return decorator


@total_ordering
class _Match:
    """A registered pair, ordered by how far up each MRO it sits (nearer is smaller)."""

    def __init__(self, *types: type) -> None:
        self.types = types

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Match) and self.types == other.types

    def __le__(self, other: _Match) -> bool:
        return all(issubclass(x, y) for x, y in zip(self.types, other.types, strict=True))


def _lookup(type_p: type, type_q: type) -> KLFunction | None:
    matches = [
        (super_p, super_q)
        for super_p, super_q in _REGISTRY
        if issubclass(type_p, super_p) and issubclass(type_q, super_q)
    ]
    if not matches:
        return None
    left_p, left_q = min(_Match(*m) for m in matches).types
    right_q, right_p = min(_Match(q, p) for p, q in matches).types
    left, right = _REGISTRY[left_p, left_q], _REGISTRY[right_p, right_q]
    if left is not right:
        import warnings

        warnings.warn(
            f"Ambiguous kl_divergence({type_p.__name__}, {type_q.__name__}). Please register_kl"
            f"({left_p.__name__}, {right_q.__name__})",
            RuntimeWarning,
            stacklevel=3,
        )
    return left


def kl_divergence(p: Distribution, q: Distribution) -> Tensor:
    """KL(p || q), batched over the distributions' batch shape.

    >>> p = ember.distributions.Bernoulli(probs=0.5)
    >>> ember.distributions.kl_divergence(p, p)
    tensor(0.)
    """
    key = (type(p), type(q))
    if key not in _MEMO:
        _MEMO[key] = _lookup(*key)
    fn = _MEMO[key]
    if fn is None:
        raise NotImplementedError(
            f"No KL(p || q) is implemented for p type {type(p).__name__} and q type "
            f"{type(q).__name__}"
        )
    return fn(p, q)


# --------------------------------------------------------------------------- closed forms


@register_kl(Normal, Normal)
def _kl_normal_normal(p: Normal, q: Normal) -> Tensor:
    var_ratio = (p.scale / q.scale).pow(2)
    t1 = ((p.loc - q.loc) / q.scale).pow(2)
    return 0.5 * (var_ratio + t1 - 1 - var_ratio.log())


@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p: Bernoulli, q: Bernoulli) -> Tensor:
    # p log(p/q) + (1-p) log((1-p)/(1-q)), through softplus of the logits; a zero
    # probability in p contributes 0, one in q where p has mass makes it infinite
    t1 = p.probs * (softplus(-q.logits) - softplus(-p.logits))
    t1 = t1.masked_fill(q.probs == 0, math.inf).masked_fill(p.probs == 0, 0)
    t2 = (1 - p.probs) * (softplus(q.logits) - softplus(p.logits))
    t2 = t2.masked_fill(q.probs == 1, math.inf).masked_fill(p.probs == 1, 0)
    return t1 + t2


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p: Categorical, q: Categorical) -> Tensor:
    t = p.probs * (p.logits - q.logits)
    t = t.masked_fill((q.probs == 0).expand(t.shape), math.inf)
    t = t.masked_fill((p.probs == 0).expand(t.shape), 0)
    return t.sum(-1)


@register_kl(Uniform, Uniform)
def _kl_uniform_uniform(p: Uniform, q: Uniform) -> Tensor:
    result = ((q.high - q.low) / (p.high - p.low)).log()
    return result.masked_fill((q.low > p.low) | (q.high < p.high), math.inf)


@register_kl(Uniform, Normal)
def _kl_uniform_normal(p: Uniform, q: Normal) -> Tensor:
    # -H(p) - E_p[log q]: E_p[(x - loc)^2] is p's variance plus its squared offset
    width = p.high - p.low
    t1 = (math.sqrt(math.pi * 2) * q.scale / width).log()
    t2 = width.pow(2) / 12
    t3 = ((p.high + p.low - 2 * q.loc) / 2).pow(2)
    return t1 + 0.5 * (t2 + t3) / q.scale.pow(2)


@register_kl(MultivariateNormal, MultivariateNormal)
def _kl_mvn_mvn(p: MultivariateNormal, q: MultivariateNormal) -> Tensor:
    # log det Lq - log det Lp + (tr(Sq^-1 Sp) + Mahalanobis(q, loc_p) - n) / 2
    if p.event_shape != q.event_shape:
        raise ValueError(
            "KL-divergence between two Multivariate Normals with different event shapes "
            "cannot be computed"
        )
    Lp, Lq = p._unbroadcasted_scale_tril, q._unbroadcasted_scale_tril
    half_term1 = Lq.diagonal(0, -2, -1).log().sum(-1) - Lp.diagonal(0, -2, -1).log().sum(-1)
    n = p.event_shape[0]
    batch = np.broadcast_shapes(tuple(Lq.shape[:-2]), tuple(Lp.shape[:-2]))
    x = ember.linalg.solve_triangular(Lq.expand(*batch, n, n), Lp.expand(*batch, n, n), upper=False)
    term2 = x.pow(2).sum((-2, -1))
    term3 = _batch_mahalanobis(Lq, q.loc - p.loc)
    return half_term1 + 0.5 * (term2 + term3 - n)
