"""``kl_divergence(p, q)``: KL(p || q) in closed form, looked up by the pair of types
(``register_kl`` adds a pair; the most specific registered pair of base classes wins).

>>> from ember.distributions.kl import kl_divergence
>>> p, q = ember.distributions.Normal(0.0, 1.0), ember.distributions.Normal(1.0, 1.0)
>>> kl_divergence(p, q)
tensor(0.5000)
"""

from __future__ import annotations

import math
import warnings
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


# ---- the pairs PyTorch registers among the families added for issue 18 ----
# (imported here, below the base pairs: kl.py is where every family meets)
# isort: split
from ember.distributions.dirichlet import Beta, Dirichlet  # noqa: E402
from ember.distributions.gamma import Exponential, Gamma  # noqa: E402
from ember.distributions.independent import Independent, sum_rightmost  # noqa: E402
from ember.distributions.laplace import Laplace  # noqa: E402
from ember.distributions.one_hot_categorical import OneHotCategorical  # noqa: E402
from ember.distributions.poisson import Binomial, Poisson  # noqa: E402
from ember.distributions.transformed_distribution import TransformedDistribution  # noqa: E402

_EULER_GAMMA = 0.57721566490153286060


def _inf_where(result: Tensor, mask: Tensor) -> Tensor:
    return ember.where(mask, ember.full_like(result, math.inf), result)


def _x_log_x(x: Tensor) -> Tensor:
    return x * x.log()


@register_kl(Beta, Beta)
def _kl_beta_beta(p: Beta, q: Beta) -> Tensor:
    sp, sq = p.concentration1 + p.concentration0, q.concentration1 + q.concentration0
    t1 = q.concentration1.lgamma() + q.concentration0.lgamma() + sp.lgamma()
    t2 = p.concentration1.lgamma() + p.concentration0.lgamma() + sq.lgamma()
    t3 = (p.concentration1 - q.concentration1) * ember.digamma(p.concentration1)
    t4 = (p.concentration0 - q.concentration0) * ember.digamma(p.concentration0)
    return t1 - t2 + t3 + t4 + (sq - sp) * ember.digamma(sp)


@register_kl(Binomial, Binomial)
def _kl_binomial_binomial(p: Binomial, q: Binomial) -> Tensor:
    if bool((p.total_count < q.total_count).any()):
        raise NotImplementedError(
            "KL between Binomials where q.total_count > p.total_count is not implemented"
        )
    kl = p.total_count * (p.probs * (p.logits - q.logits) + (-p.probs).log1p() - (-q.probs).log1p())
    return _inf_where(kl, p.total_count > q.total_count)


@register_kl(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(p: Dirichlet, q: Dirichlet) -> Tensor:
    sp, sq = p.concentration.sum(-1), q.concentration.sum(-1)
    t1 = sp.lgamma() - sq.lgamma()
    t2 = (p.concentration.lgamma() - q.concentration.lgamma()).sum(-1)
    t3 = p.concentration - q.concentration
    t4 = p.concentration.digamma() - sp.digamma().unsqueeze(-1)
    return t1 - t2 + (t3 * t4).sum(-1)


@register_kl(Exponential, Exponential)
def _kl_exponential_exponential(p: Exponential, q: Exponential) -> Tensor:
    ratio = q.rate / p.rate
    return -ratio.log() + ratio - 1


@register_kl(Gamma, Gamma)
def _kl_gamma_gamma(p: Gamma, q: Gamma) -> Tensor:
    t1 = q.concentration * (p.rate / q.rate).log()
    t2 = ember.lgamma(q.concentration) - ember.lgamma(p.concentration)
    t3 = (p.concentration - q.concentration) * ember.digamma(p.concentration)
    t4 = (q.rate - p.rate) * (p.concentration / p.rate)
    return t1 + t2 + t3 + t4


@register_kl(Laplace, Laplace)
def _kl_laplace_laplace(p: Laplace, q: Laplace) -> Tensor:
    ratio = p.scale / q.scale
    diff = (p.loc - q.loc).abs()
    return -ratio.log() + diff / q.scale + ratio * ember.exp(-diff / p.scale) - 1


@register_kl(OneHotCategorical, OneHotCategorical)
def _kl_onehot_onehot(p: OneHotCategorical, q: OneHotCategorical) -> Tensor:
    return _kl_categorical_categorical(p._categorical, q._categorical)


@register_kl(Poisson, Poisson)
def _kl_poisson_poisson(p: Poisson, q: Poisson) -> Tensor:
    return p.rate * (p.rate.log() - q.rate.log()) - (p.rate - q.rate)


@register_kl(TransformedDistribution, TransformedDistribution)
def _kl_transformed_transformed(p: TransformedDistribution, q: TransformedDistribution) -> Tensor:
    # the transforms compare as PyTorch's do (Transform.__eq__)
    if list(p.transforms) != list(q.transforms) or p.event_shape != q.event_shape:
        raise NotImplementedError
    return kl_divergence(p.base_dist, q.base_dist)


@register_kl(Independent, Independent)
def _kl_independent_independent(p: Independent, q: Independent) -> Tensor:
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError
    return sum_rightmost(kl_divergence(p.base_dist, q.base_dist), p.reinterpreted_batch_ndims)


@register_kl(Bernoulli, Poisson)
def _kl_bernoulli_poisson(p: Bernoulli, q: Poisson) -> Tensor:
    return -p.entropy() - (p.probs * q.rate.log() - q.rate)


@register_kl(Beta, Exponential)
def _kl_beta_exponential(p: Beta, q: Exponential) -> Tensor:
    mean = p.concentration1 / (p.concentration1 + p.concentration0)
    return -p.entropy() - q.rate.log() + q.rate * mean


@register_kl(Beta, Gamma)
def _kl_beta_gamma(p: Beta, q: Gamma) -> Tensor:
    total = p.concentration1 + p.concentration0
    t2 = q.concentration.lgamma() - q.concentration * q.rate.log()
    t3 = (q.concentration - 1) * (p.concentration1.digamma() - total.digamma())
    return -p.entropy() + t2 - t3 + q.rate * p.concentration1 / total


@register_kl(Beta, Normal)
def _kl_beta_normal(p: Beta, q: Normal) -> Tensor:
    total = p.concentration1 + p.concentration0
    mean = p.concentration1 / total
    var_q = q.scale.pow(2)
    second_moment = (mean * (1 - mean) / (total + 1) + mean.pow(2)) * 0.5
    t2 = 0.5 * (var_q * 2 * math.pi).log()
    return -p.entropy() + t2 + (second_moment - q.loc * mean + q.loc.pow(2) * 0.5) / var_q


@register_kl(Beta, Uniform)
def _kl_beta_uniform(p: Beta, q: Uniform) -> Tensor:
    result = -p.entropy() + (q.high - q.low).log()
    return _inf_where(result, (q.low > 0) | (q.high < 1))


@register_kl(Exponential, Gamma)
def _kl_exponential_gamma(p: Exponential, q: Gamma) -> Tensor:
    ratio = q.rate / p.rate
    return (
        -q.concentration * ratio.log() + ratio + q.concentration.lgamma()
        + q.concentration * _EULER_GAMMA - (1 + _EULER_GAMMA)
    )  # fmt: skip


@register_kl(Exponential, Normal)
def _kl_exponential_normal(p: Exponential, q: Normal) -> Tensor:
    var_q = q.scale.pow(2)
    rate_sq = p.rate.pow(2)
    t1 = 0.5 * ember.log(rate_sq * var_q * 2 * math.pi)
    return t1 - 1 + (rate_sq.reciprocal() - q.loc / p.rate + q.loc.pow(2) * 0.5) / var_q


@register_kl(Gamma, Exponential)
def _kl_gamma_exponential(p: Gamma, q: Exponential) -> Tensor:
    return -p.entropy() - q.rate.log() + q.rate * p.concentration / p.rate


@register_kl(Gamma, Normal)
def _kl_gamma_normal(p: Gamma, q: Normal) -> Tensor:
    var_q = q.scale.pow(2)
    beta_sq = p.rate.pow(2)
    c = p.concentration
    t1 = 0.5 * ember.log(beta_sq * var_q * 2 * math.pi) - c - c.lgamma()
    t2 = 0.5 * (c.pow(2) + c) / beta_sq
    t3 = q.loc * c / p.rate
    return t1 + (c - 1) * c.digamma() + (t2 - t3 + 0.5 * q.loc.pow(2)) / var_q


@register_kl(Laplace, Normal)
def _kl_laplace_normal(p: Laplace, q: Normal) -> Tensor:
    var_q = q.scale.pow(2)
    ratio = p.scale.pow(2) / var_q
    t1 = 0.5 * ember.log(2 * ratio / math.pi)
    quad = 0.5 * p.loc.pow(2) - p.loc * q.loc + 0.5 * q.loc.pow(2)
    return -t1 + ratio + quad / var_q - 1


@register_kl(Normal, Laplace)
def _kl_normal_laplace(p: Normal, q: Laplace) -> Tensor:
    diff = p.loc - q.loc
    z = diff / p.scale
    t2 = math.sqrt(2 / math.pi) * p.scale * ember.exp(-0.5 * z.pow(2))
    t3 = diff * ember.erf(math.sqrt(0.5) * z)
    return -ember.log(p.scale / q.scale) + (t2 + t3) / q.scale - 0.5 * (1 + math.log(0.5 * math.pi))


@register_kl(Uniform, Beta)
def _kl_uniform_beta(p: Uniform, q: Beta) -> Tensor:
    width = p.high - p.low
    t2 = (q.concentration1 - 1) * (_x_log_x(p.high) - _x_log_x(p.low) - width) / width
    t3 = (q.concentration0 - 1) * (_x_log_x(1 - p.high) - _x_log_x(1 - p.low) + width) / width
    t4 = (
        q.concentration1.lgamma() + q.concentration0.lgamma()
        - (q.concentration1 + q.concentration0).lgamma()
    )  # fmt: skip
    return _inf_where(t3 + t4 - width.log() - t2, (p.high > 1) | (p.low < 0))


@register_kl(Uniform, Exponential)
def _kl_uniform_exponential(p: Uniform, q: Exponential) -> Tensor:
    result = q.rate * (p.high + p.low) / 2 - ((p.high - p.low) * q.rate).log()
    return _inf_where(result, p.low < 0)


@register_kl(Uniform, Gamma)
def _kl_uniform_gamma(p: Uniform, q: Gamma) -> Tensor:
    width = p.high - p.low
    t2 = q.concentration.lgamma() - q.concentration * q.rate.log()
    t3 = (1 - q.concentration) * (_x_log_x(p.high) - _x_log_x(p.low) - width) / width
    result = -width.log() + t2 + t3 + q.rate * (p.high + p.low) / 2
    return _inf_where(result, p.low < 0)


def _kl_infinity(p: Distribution, q: Distribution) -> Tensor:
    """KL(p || q) is infinite: p puts mass where q has none."""
    param = next(v for v in vars(p).values() if isinstance(v, Tensor))
    return ember.full(tuple(p.batch_shape), math.inf, dtype=param.dtype)


for _p, _q in [(Exponential, Uniform), (Exponential, Beta), (Gamma, Uniform), (Gamma, Beta),
               (Laplace, Uniform), (Laplace, Gamma), (Laplace, Exponential), (Laplace, Beta),
               (Normal, Gamma), (Normal, Exponential), (Normal, Beta),
               (Poisson, Binomial), (Poisson, Bernoulli)]:  # fmt: skip
    register_kl(_p, _q)(_kl_infinity)


# ---- the second group for issue 18 ----
from ember.distributions.cauchy import Cauchy  # noqa: E402
from ember.distributions.geometric import Geometric  # noqa: E402
from ember.distributions.gumbel import Gumbel  # noqa: E402
from ember.distributions.half_normal import HalfNormal  # noqa: E402
from ember.distributions.pareto import Pareto  # noqa: E402


@register_kl(Cauchy, Cauchy)
def _kl_cauchy_cauchy(p: Cauchy, q: Cauchy) -> Tensor:
    num = (p.scale + q.scale).pow(2) + (p.loc - q.loc).pow(2)
    return num.log() - (4 * p.scale * q.scale).log()


@register_kl(Geometric, Geometric)
def _kl_geometric_geometric(p: Geometric, q: Geometric) -> Tensor:
    return -p.entropy() - ember.log1p(-q.probs) / p.probs - q.logits


@register_kl(Gumbel, Gumbel)
def _kl_gumbel_gumbel(p: Gumbel, q: Gumbel) -> Tensor:
    ratio = p.scale / q.scale
    shift = (p.loc - q.loc) / q.scale
    t3 = ember.exp((1 + ratio).lgamma() - shift)
    return -ratio.log() + shift + ratio * _EULER_GAMMA + t3 - (1 + _EULER_GAMMA)


@register_kl(HalfNormal, HalfNormal)
def _kl_halfnormal_halfnormal(p: HalfNormal, q: HalfNormal) -> Tensor:
    return _kl_normal_normal(p.base_dist, q.base_dist)  # type: ignore[arg-type]


@register_kl(Pareto, Pareto)
def _kl_pareto_pareto(p: Pareto, q: Pareto) -> Tensor:
    alpha_ratio = q.alpha / p.alpha
    result = q.alpha * (p.scale / q.scale).log() - alpha_ratio.log() + alpha_ratio - 1
    return _inf_where(result, p.scale < q.scale)


# ---- the pairs PyTorch registers with the third group for issue 18 ----
from ember.distributions.continuous_bernoulli import ContinuousBernoulli  # noqa: E402
from ember.distributions.exp_family import ExponentialFamily  # noqa: E402
from ember.distributions.lowrank_multivariate_normal import (  # noqa: E402
    LowRankMultivariateNormal,
    _lowrank_logdet,
    _lowrank_mahalanobis,
)


@register_kl(ExponentialFamily, ExponentialFamily)
def _kl_expfamily_expfamily(p: ExponentialFamily, q: ExponentialFamily) -> Tensor:
    """The Bregman divergence of the log normaliser (NOTE [Bregman entropy])."""
    if type(p) is not type(q):
        raise NotImplementedError(
            "The cross KL-divergence between different exponential families cannot be "
            f"computed using Bregman divergences (got {type(p).__name__} and "
            f"{type(q).__name__})"
        )
    value, p_params, grads = p._normalizer_and_grads(create_graph=True)
    result = q._log_normalizer(*q._natural_params) - value
    for theta_p, theta_q, g in zip(p_params, q._natural_params, grads, strict=True):
        result = result - sum_rightmost((theta_q - theta_p) * g, len(q.event_shape))
    return result


# -- Gaussians given by a Cholesky factor or a low-rank factor: with Sigma_p = S S^T,
# KL = (log det Sigma_q - log det Sigma_p + |Sigma_q^-1/2 S|_F^2 + Mahalanobis_q - n) / 2


def _gaussian_log_det_and_root(d: Any) -> tuple[Tensor, Tensor]:
    """``log det Sigma`` and a square root ``S`` of it (``S @ S.mT == Sigma``)."""
    if isinstance(d, LowRankMultivariateNormal):
        W, D = d._unbroadcasted_cov_factor, d._unbroadcasted_cov_diag
        W = W.expand(*np.broadcast_shapes(tuple(W.shape[:-2]), tuple(D.shape[:-1])), *W.shape[-2:])
        root = ember.cat([W, ember.diag_embed(D.sqrt()).expand(*W.shape[:-2], -1, -1)], -1)
        return _lowrank_logdet(D, d._capacitance_tril), root
    L = d._unbroadcasted_scale_tril
    return 2 * L.diagonal(0, -2, -1).log().sum(-1), L


def _solve_lower(L: Tensor, B: Tensor) -> Tensor:
    """``L^-1 B`` over broadcast batch dims."""
    batch = np.broadcast_shapes(tuple(L.shape[:-2]), tuple(B.shape[:-2]))
    return ember.linalg.solve_triangular(
        L.expand(*batch, *L.shape[-2:]), B.expand(*batch, *B.shape[-2:]), upper=False
    )


def _gaussian_whitened(q: Any, S: Tensor) -> Tensor:
    """``tr(Sigma_q^-1 S S^T)``: through ``L_q^-1``, or Woodbury's ``D^-1 - A^T A``."""
    if isinstance(q, LowRankMultivariateNormal):
        W, D = q._unbroadcasted_cov_factor, q._unbroadcasted_cov_diag
        A = _solve_lower(q._capacitance_tril, W.mT / D.unsqueeze(-2))
        whitened = (S / D.sqrt().unsqueeze(-1)).pow(2).sum((-2, -1))
        return whitened - ember.matmul(A, S).pow(2).sum((-2, -1))
    return _solve_lower(q._unbroadcasted_scale_tril, S).pow(2).sum((-2, -1))


def _gaussian_mahalanobis(q: Any, x: Tensor) -> Tensor:
    if isinstance(q, LowRankMultivariateNormal):
        W, D = q._unbroadcasted_cov_factor, q._unbroadcasted_cov_diag
        return _lowrank_mahalanobis(W, D, x, q._capacitance_tril)
    return _batch_mahalanobis(q._unbroadcasted_scale_tril, x)


@register_kl(LowRankMultivariateNormal, LowRankMultivariateNormal)
@register_kl(MultivariateNormal, LowRankMultivariateNormal)
@register_kl(LowRankMultivariateNormal, MultivariateNormal)
def _kl_lowrank_gaussians(p: Any, q: Any) -> Tensor:
    if p.event_shape != q.event_shape:
        raise ValueError(
            "KL-divergence between two (Low Rank) Multivariate Normals with different event "
            f"shapes cannot be computed (got {tuple(p.event_shape)} and {tuple(q.event_shape)})"
        )
    log_det_p, root_p = _gaussian_log_det_and_root(p)
    log_det_q, _ = _gaussian_log_det_and_root(q)
    trace = _gaussian_whitened(q, root_p)
    mahalanobis = _gaussian_mahalanobis(q, q.loc - p.loc)
    return 0.5 * (log_det_q - log_det_p + trace + mahalanobis - p.event_shape[0])


# -- ContinuousBernoulli: E_p[log q] = E_p[x] logit(q) + log(1 - q) + log C(q)


def _cb_cross_term(mean: Tensor, q: ContinuousBernoulli) -> Tensor:
    """``-E_p[log q(x)]`` for a ``p`` on [0, 1] with mean ``mean``."""
    return -mean * q.logits - ember.log1p(-q.probs) - q._cont_bern_log_norm()


@register_kl(ContinuousBernoulli, ContinuousBernoulli)
@register_kl(Beta, ContinuousBernoulli)
def _kl_to_continuous_bernoulli(p: Any, q: ContinuousBernoulli) -> Tensor:
    return -p.entropy() + _cb_cross_term(p.mean, q)


@register_kl(Uniform, ContinuousBernoulli)
def _kl_uniform_continuous_bernoulli(p: Uniform, q: ContinuousBernoulli) -> Tensor:
    # infinite where p reaches 1 or 0, as PyTorch 2.13 decides it (it puts mass off [0, 1]
    # only where it goes past them, but PyTorch's test is >= and <=)
    result = -p.entropy() + _cb_cross_term(p.mean, q)
    return _inf_where(result, (p.high >= 1) | (p.low <= 0))


@register_kl(ContinuousBernoulli, Exponential)
def _kl_continuous_bernoulli_exponential(p: ContinuousBernoulli, q: Exponential) -> Tensor:
    return -p.entropy() - q.rate.log() + q.rate * p.mean


@register_kl(ContinuousBernoulli, Normal)
def _kl_continuous_bernoulli_normal(p: ContinuousBernoulli, q: Normal) -> Tensor:
    t2 = 0.5 * (math.log(2.0 * math.pi) + (q.loc / q.scale).pow(2)) + q.scale.log()
    t3 = (p.variance + p.mean.pow(2) - 2.0 * q.loc * p.mean) / (2.0 * q.scale.pow(2))
    return -p.entropy() + t2 + t3


@register_kl(ContinuousBernoulli, Uniform)
def _kl_continuous_bernoulli_uniform(p: ContinuousBernoulli, q: Uniform) -> Tensor:
    # infinite as PyTorch 2.13 decides it: where q.low >= 0 or q.high <= 1
    result = -p.entropy() + (q.high - q.low).log()
    return _inf_where(result, (q.low >= 0) | (q.high <= 1))


for _p, _q in [(ContinuousBernoulli, Pareto), (Exponential, ContinuousBernoulli),
               (Gamma, ContinuousBernoulli), (Gumbel, ContinuousBernoulli),
               (Laplace, ContinuousBernoulli), (Normal, ContinuousBernoulli),
               (Pareto, ContinuousBernoulli)]:  # fmt: skip
    register_kl(_p, _q)(_kl_infinity)
