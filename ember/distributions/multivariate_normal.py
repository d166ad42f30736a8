"""``MultivariateNormal(loc, covariance_matrix=|precision_matrix=|scale_tril=)``: the
Gaussian over vectors, parametrised by one of three matrices, reparametrisable.

# NOTE [one Cholesky factor]
Whichever matrix is given, the distribution keeps its lower Cholesky factor ``L`` (with
``L @ L.mT`` the covariance) at the batch shape it was given, unbroadcast: sampling is
``loc + L @ eps``, the log density needs ``L^-1 (x - loc)`` (a triangular solve) and
``log det L`` (its diagonal), and the other two matrices are built from ``L`` when asked for.
A precision matrix ``P`` is factored as PyTorch does: the Cholesky factor of ``P`` with rows
and columns reversed, flipped back, is an upper factor ``U`` with ``U @ U.mT == P``; then
``L = (U.mT)^-1`` is lower triangular with ``L @ L.mT == P^-1``, one triangular solve
against the identity.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

import ember
from ember._tensor import Size, Tensor
from ember.distributions import constraints
from ember.distributions.distribution import Distribution
from ember.distributions.utils import EMPTY, lazy_property, one_matrix, standard_normal

__all__ = ["MultivariateNormal"]


def _batch_mv(bmat: Tensor, bvec: Tensor) -> Tensor:
    """Matrix times vector over broadcast batch dimensions."""
    return ember.matmul(bmat, bvec.unsqueeze(-1)).squeeze(-1)


def _batch_mahalanobis(L: Tensor, x: Tensor) -> Tensor:
    """``x^T (L L^T)^-1 x`` for each vector of ``x``: the squared norm of ``L^-1 x``."""
    n = x.shape[-1]
    batch = np.broadcast_shapes(tuple(L.shape[:-2]), tuple(x.shape[:-1]))
    y = ember.linalg.solve_triangular(
        L.expand(*batch, n, n), x.expand(*batch, n).unsqueeze(-1), upper=False
    )
    return y.squeeze(-1).pow(2).sum(-1)


def _triangular_inverse(L: Tensor) -> Tensor:
    eye = ember.eye(L.shape[-1], dtype=L.dtype, device=L.device)
    return ember.linalg.solve_triangular(L, eye.expand(L.shape), upper=False)


def _precision_to_scale_tril(P: Tensor) -> Tensor:
    """The lower factor ``L`` with ``L @ L.mT == P^-1`` (NOTE [one Cholesky factor])."""
    Lf = ember.linalg.cholesky(ember.flip(P, (-2, -1)))
    L_inv = ember.flip(Lf, (-2, -1)).transpose(-2, -1)
    return _triangular_inverse(L_inv)


class _OneCholeskyFactor:
    """The three matrices of a distribution that keeps one Cholesky factor
    ``_unbroadcasted_scale_tril`` (NOTE [one Cholesky factor]), each built from it when
    asked for and expanded by the class's ``_full`` (``MultivariateNormal``, ``Wishart``)."""

    _unbroadcasted_scale_tril: Tensor

    def _full(self, m: Tensor) -> Tensor:
        raise NotImplementedError

    def _set_scale_tril(
        self, covariance_matrix: Any, precision_matrix: Any, scale_tril: Any
    ) -> None:
        """The factor of whichever matrix was given."""
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = ember.linalg.cholesky(covariance_matrix)
        else:
            assert precision_matrix is not None
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(precision_matrix)

    @lazy_property
    def scale_tril(self) -> Tensor:
        return self._full(self._unbroadcasted_scale_tril)

    @lazy_property
    def covariance_matrix(self) -> Tensor:
        L = self._unbroadcasted_scale_tril
        return self._full(ember.matmul(L, L.mT))

    @lazy_property
    def precision_matrix(self) -> Tensor:
        # (L L^T)^-1 of the whole of L, as PyTorch's cholesky_inverse differentiates it
        # (its gradient reaches L's upper triangle too; a triangular solve's would not)
        L = self._unbroadcasted_scale_tril
        return self._full(ember.linalg.inv(ember.matmul(L, L.mT)))


class _VectorGaussian(Distribution):
    """What ``MultivariateNormal`` and ``LowRankMultivariateNormal`` share: a mean ``loc`` of
    shape ``batch_shape + (n,)`` (also the mode), matrices expanded to
    ``batch_shape + (n, n)`` by ``_full``, and an entropy expanded to the batch shape."""

    support = constraints.real_vector
    has_rsample = True
    loc: Tensor

    @staticmethod
    def _check_loc(loc: Tensor) -> None:
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")

    def _expand_loc(self, cls: type, batch_shape: Any, _instance: Any) -> tuple[Any, Size]:
        """The first step of ``expand``: the new instance with ``loc`` expanded, and the
        new batch shape."""
        new = self._get_checked_instance(cls, _instance)
        batch_shape = Size(batch_shape)
        new.loc = self.loc.expand(*batch_shape, *self.event_shape)
        return new, batch_shape

    def _full(self, m: Tensor) -> Tensor:
        return m.expand(*self._batch_shape, *self._event_shape, *self._event_shape)

    @property
    def mean(self) -> Tensor:
        """The mean (and mode) ``loc``."""
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    def _batch_entropy(self, H: Tensor) -> Tensor:
        return H if len(self._batch_shape) == 0 else H.expand(self._batch_shape)


class MultivariateNormal(_VectorGaussian, _OneCholeskyFactor):
    """A Gaussian over vectors with mean ``loc`` and a covariance given by exactly one of
    ``covariance_matrix``, ``precision_matrix`` or ``scale_tril`` (its lower Cholesky factor).

    >>> d = ember.distributions.MultivariateNormal(ember.zeros(2), ember.eye(2))
    >>> d.log_prob(ember.zeros(2))
    tensor(-1.8379)
    """

    arg_constraints = {
        "loc": constraints.real_vector,
        "covariance_matrix": constraints.positive_definite,
        "precision_matrix": constraints.positive_definite,
        "scale_tril": constraints.lower_cholesky,
    }

    def __init__(
        self,
        loc: Tensor,
        covariance_matrix: Tensor | None = None,
        precision_matrix: Tensor | None = None,
        scale_tril: Tensor | None = None,
        validate_args: bool | None = None,
    ) -> None:
        self._check_loc(loc)
        name, matrix = one_matrix(covariance_matrix, precision_matrix, scale_tril)
        if matrix.dim() < 2:
            what = "scale_tril matrix" if name == "scale_tril" else name
            raise ValueError(
                f"{what} must be at least two-dimensional, with optional leading batch dimensions"
            )
        batch_shape = Size(np.broadcast_shapes(tuple(matrix.shape[:-2]), tuple(loc.shape[:-1])))
        setattr(self, name, matrix.expand(*batch_shape, -1, -1))
        self.loc = loc.expand(*batch_shape, -1)
        super().__init__(batch_shape, self.loc.shape[-1:], validate_args=validate_args)
        self._set_scale_tril(covariance_matrix, precision_matrix, scale_tril)

    def expand(self, batch_shape: Any, _instance: Any = None) -> MultivariateNormal:
        new, batch_shape = self._expand_loc(MultivariateNormal, batch_shape, _instance)
        cov_shape = (*batch_shape, *self.event_shape, *self.event_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(cov_shape))
        return self._finish_expand(new, batch_shape, self.event_shape)  # type: ignore[no-any-return]

    @property
    def variance(self) -> Tensor:
        return (
            self._unbroadcasted_scale_tril.pow(2)
            .sum(-1)
            .expand(*self._batch_shape, *self._event_shape)
        )

    def rsample(self, sample_shape: Any = EMPTY) -> Tensor:
        """``loc + L @ eps`` with standard normal ``eps``."""
        shape = self._extended_shape(sample_shape)
        eps = standard_normal(tuple(shape), self.loc.dtype, self.loc.device)
        return self.loc + _batch_mv(self._unbroadcasted_scale_tril, eps)

    def _half_log_det(self) -> Tensor:
        return self._unbroadcasted_scale_tril.diagonal(0, -2, -1).log().sum(-1)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        diff = value - self.loc
        M = _batch_mahalanobis(self._unbroadcasted_scale_tril, diff)
        n = self._event_shape[0]
        return -0.5 * (n * math.log(2 * math.pi) + M) - self._half_log_det()

    def entropy(self) -> Tensor:
        n = self._event_shape[0]
        return self._batch_entropy(0.5 * n * (1.0 + math.log(2 * math.pi)) + self._half_log_det())
