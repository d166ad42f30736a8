"""``Wishart(df, covariance_matrix=|precision_matrix=|scale_tril=)``: the distribution of
``sum_k x_k x_k.mT`` over ``df`` Gaussian vectors ``x_k ~ N(0, S)``, on positive-definite
matrices, reparametrisable.

Like ``MultivariateNormal`` it keeps one lower Cholesky factor ``L`` of ``S`` (NOTE [one
Cholesky factor] in multivariate_normal.py). Draws use Bartlett's decomposition: ``L A A.mT
L.mT`` with ``A`` lower triangular, ``A_ii = sqrt(chi2(df - i))`` and standard normals below
the diagonal; the chi-squares are ember's gamma sampler (not PyTorch's stream). A draw that
is numerically singular is redrawn (up to ``max_try_correction`` times), as PyTorch does.
"""

from __future__ import annotations

import math
import numbers
import warnings
from typing import Any

import numpy as np

import ember
from ember._tensor import Size, Tensor
from ember.distributions import constraints
from ember.distributions.chi2 import Chi2
from ember.distributions.exp_family import ExponentialFamily
from ember.distributions.multivariate_normal import _OneCholeskyFactor
from ember.distributions.utils import EMPTY, one_matrix, vec_to_tril_matrix

__all__ = ["Wishart"]

_LOG_2 = math.log(2)


def _mvdigamma(x: Tensor, p: int) -> Tensor:
    """The multivariate digamma ``sum_i digamma(x - i / 2)``, ``i < p``."""
    half = ember.arange(p, dtype=x.dtype) / 2
    return ember.digamma(x.unsqueeze(-1) - half).sum(-1)


def _cholesky_solve_trace(L: Tensor, value: Tensor) -> Tensor:
    """``tr((L L.mT)^-1 value)``, by two triangular solves."""
    batch = np.broadcast_shapes(tuple(L.shape[:-2]), tuple(value.shape[:-2]))
    n = L.shape[-1]
    L, value = L.expand(*batch, n, n), value.expand(*batch, n, n)
    a = ember.linalg.solve_triangular(L, value, upper=False)
    b = ember.linalg.solve_triangular(L.mT, a, upper=True)
    return b.diagonal(0, -2, -1).sum(-1)


class Wishart(_OneCholeskyFactor, ExponentialFamily):
    """The Wishart distribution with ``df`` degrees of freedom (more than ``n - 1``) and a
    scale given by exactly one of ``covariance_matrix``, ``precision_matrix``, ``scale_tril``.

    >>> d = ember.distributions.Wishart(3.0, ember.eye(2))
    >>> d.log_prob(ember.eye(2))
    tensor(-3.5310)
    """

    support = constraints.positive_definite
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def arg_constraints(self) -> dict[str, constraints.Constraint]:  # type: ignore[override]
        return {
            "covariance_matrix": constraints.positive_definite,
            "precision_matrix": constraints.positive_definite,
            "scale_tril": constraints.lower_cholesky,
            "df": constraints.greater_than(self.event_shape[-1] - 1),
        }

    def __init__(
        self,
        df: Any,
        covariance_matrix: Tensor | None = None,
        precision_matrix: Tensor | None = None,
        scale_tril: Tensor | None = None,
        validate_args: bool | None = None,
    ) -> None:
        name, param = one_matrix(covariance_matrix, precision_matrix, scale_tril)
        if param.dim() < 2:
            raise ValueError(
                f"{name} must be at least two-dimensional, with optional leading batch dimensions"
            )
        if isinstance(df, numbers.Number):
            batch_shape = Size(param.shape[:-2])
            self.df = ember.tensor(df, dtype=param.dtype, device=param.device)
        else:
            batch_shape = Size(np.broadcast_shapes(tuple(param.shape[:-2]), tuple(df.shape)))
            self.df = df.expand(batch_shape)
        event_shape = param.shape[-2:]
        p = event_shape[-1]
        if bool((self.df <= p - 1).any()):
            raise ValueError(f"Value of df={df} expected to be greater than ndim - 1 = {p - 1}.")
        setattr(self, name, param.expand(*batch_shape, -1, -1))
        if bool((self.df < p).any()):
            warnings.warn(
                "Low df values detected. Singular samples are highly likely to occur for "
                "ndim - 1 < df < ndim.",
                stacklevel=2,
            )
        super().__init__(batch_shape, event_shape, validate_args=validate_args)
        self._set_scale_tril(covariance_matrix, precision_matrix, scale_tril)
        self._dist_chi2 = self._bartlett_chi2()

    def _bartlett_chi2(self) -> Chi2:
        """The chi-squares of Bartlett's diagonal: ``df - i`` degrees of freedom, ``i < p``."""
        p = self._event_shape[-1]
        steps = ember.arange(p, dtype=self._unbroadcasted_scale_tril.dtype)
        return Chi2((self.df.unsqueeze(-1) - steps).expand(*self._batch_shape, p))

    def expand(self, batch_shape: Any, _instance: Any = None) -> Wishart:
        new = self._get_checked_instance(Wishart, _instance)
        batch_shape = Size(batch_shape)
        cov_shape = (*batch_shape, *self.event_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril.expand(cov_shape)
        new.df = self.df.expand(batch_shape)
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(cov_shape))
        self._finish_expand(new, batch_shape, self.event_shape)
        new._dist_chi2 = new._bartlett_chi2()
        return new  # type: ignore[no-any-return]

    def _full(self, m: Tensor) -> Tensor:
        return m.expand(*self._batch_shape, *self._event_shape)

    def _df_matrix(self) -> Tensor:
        return self.df.reshape(*self._batch_shape, 1, 1)

    @property
    def mean(self) -> Tensor:
        return self._df_matrix() * self.covariance_matrix

    @property
    def mode(self) -> Tensor:
        """``(df - p - 1) S`` where ``df > p + 1``, NaN elsewhere."""
        factor = self.df - self.covariance_matrix.shape[-1] - 1
        factor = ember.where(factor > 0, factor, ember.full_like(factor, math.nan))
        return factor.reshape(*self._batch_shape, 1, 1) * self.covariance_matrix

    @property
    def variance(self) -> Tensor:
        V = self.covariance_matrix
        d = V.diagonal(0, -2, -1)
        return self._df_matrix() * (V.pow(2) + d.unsqueeze(-1) * d.unsqueeze(-2))

    def _bartlett_sampling(self, sample_shape: Size) -> Tensor:
        p = self._event_shape[-1]
        eps = float(ember.finfo(self.df.dtype).eps)
        diag = self._dist_chi2.rsample(sample_shape).sqrt().clamp(min=eps)
        below = ember.randn((*sample_shape, *self._batch_shape, p * (p - 1) // 2), dtype=diag.dtype)

        A = vec_to_tril_matrix(below, diag=-1) + ember.diag_embed(diag)
        chol = self._unbroadcasted_scale_tril @ A
        return chol @ chol.mT

    def rsample(self, sample_shape: Any = EMPTY, max_try_correction: int | None = None) -> Tensor:
        """Bartlett draws; singular ones redrawn up to ``max_try_correction`` (10) times."""
        sample_shape = Size(sample_shape)
        tries = 10 if max_try_correction is None else max_try_correction
        sample = self._bartlett_sampling(sample_shape)
        singular = ~self.support.check(sample)
        for _ in range(tries):
            if not bool(singular.any()):
                break
            redraw = self._bartlett_sampling(sample_shape)
            sample = ember.where(singular.unsqueeze(-1).unsqueeze(-1), redraw, sample)
            singular = ~self.support.check(sample)
        else:
            if bool(singular.any()):
                warnings.warn("Singular sample detected.", stacklevel=2)
        return sample

    def _log_det_scale(self) -> Tensor:
        """``p log(2) / 2 + log det L``."""
        p = self._event_shape[-1]
        return p * _LOG_2 / 2 + self._unbroadcasted_scale_tril.diagonal(0, -2, -1).log().sum(-1)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        nu, p = self.df, self._event_shape[-1]
        return (
            -nu * self._log_det_scale()
            - ember.mvlgamma(nu / 2, p)
            + (nu - p - 1) / 2 * ember.linalg.slogdet(value)[1]
            - _cholesky_solve_trace(self._unbroadcasted_scale_tril, value) / 2
        )

    def entropy(self) -> Tensor:
        nu, p = self.df, self._event_shape[-1]
        return (
            (p + 1) * self._log_det_scale()
            + ember.mvlgamma(nu / 2, p)
            - (nu - p - 1) / 2 * _mvdigamma(nu / 2, p)
            + nu * p / 2
        )

    # NOTE [Bregman entropy]: the natural parameters and log normaliser
    @property
    def _natural_params(self) -> tuple[Tensor, ...]:
        p = self._event_shape[-1]
        return -self.precision_matrix / 2, (self.df - p - 1) / 2

    def _log_normalizer(self, x: Tensor, y: Tensor) -> Tensor:
        p = self._event_shape[-1]
        a = y + (p + 1) / 2
        return a * (-ember.linalg.slogdet(-2 * x)[1] + _LOG_2 * p) + ember.mvlgamma(a, p)
