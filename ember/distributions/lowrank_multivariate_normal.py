"""``LowRankMultivariateNormal(loc, cov_factor, cov_diag)``: a Gaussian over vectors whose
covariance is ``W @ W.mT + diag(D)`` for an ``n x m`` factor ``W``, reparametrisable.

# NOTE [capacitance]
Nothing ``n x n`` is factored. With the ``m x m`` capacitance matrix
``K = I + W.mT D^-1 W`` and its Cholesky factor ``C``, the matrix determinant lemma gives
``log det(W W.mT + D) = 2 log det C + sum(log D)``, and Woodbury's identity gives the
Mahalanobis term ``x.mT D^-1 x - |C^-1 W.mT D^-1 x|^2``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

import ember
from ember._tensor import Size, Tensor
from ember.distributions import constraints
from ember.distributions.multivariate_normal import (
    _batch_mahalanobis,
    _batch_mv,
    _VectorGaussian,
)
from ember.distributions.utils import EMPTY, lazy_property, standard_normal

__all__ = ["LowRankMultivariateNormal"]


def _eye_like(m: Tensor) -> Tensor:
    return ember.eye(m.shape[-1], dtype=m.dtype, device=m.device)


def _capacitance_tril(W: Tensor, D: Tensor) -> Tensor:
    """The Cholesky factor of ``I + W.mT D^-1 W`` (NOTE [capacitance])."""
    Wt_Dinv = W.mT / D.unsqueeze(-2)
    K = ember.matmul(Wt_Dinv, W)
    return ember.linalg.cholesky(K + _eye_like(K))


def _lowrank_logdet(D: Tensor, C: Tensor) -> Tensor:
    return 2 * C.diagonal(0, -2, -1).log().sum(-1) + D.log().sum(-1)


def _lowrank_mahalanobis(W: Tensor, D: Tensor, x: Tensor, C: Tensor) -> Tensor:
    Wt_Dinv_x = _batch_mv(W.mT / D.unsqueeze(-2), x)
    return (x.pow(2) / D).sum(-1) - _batch_mahalanobis(C, Wt_Dinv_x)


class LowRankMultivariateNormal(_VectorGaussian):
    """A multivariate normal with mean ``loc`` and covariance
    ``cov_factor @ cov_factor.mT + diag(cov_diag)`` (NOTE [capacitance]).

    >>> D = ember.distributions
    >>> d = D.LowRankMultivariateNormal(ember.zeros(2), ember.ones(2, 1), ember.ones(2))
    >>> d.log_prob(ember.zeros(2))
    tensor(-2.3872)
    """

    arg_constraints = {
        "loc": constraints.real_vector,
        "cov_factor": constraints.independent(constraints.real, 2),
        "cov_diag": constraints.independent(constraints.positive, 1),
    }

    def __init__(
        self, loc: Tensor, cov_factor: Tensor, cov_diag: Tensor, validate_args: bool | None = None
    ) -> None:
        self._check_loc(loc)
        event_shape = loc.shape[-1:]
        if cov_factor.dim() < 2:
            raise ValueError(
                "cov_factor must be at least two-dimensional, with optional leading batch "
                "dimensions"
            )
        if cov_factor.shape[-2:-1] != event_shape:
            raise ValueError(
                f"cov_factor must be a batch of matrices with shape {event_shape[0]} x m "
                f"(got {tuple(cov_factor.shape)})"
            )
        if cov_diag.shape[-1:] != event_shape:
            raise ValueError(
                f"cov_diag must be a batch of vectors with shape {tuple(event_shape)} "
                f"(got {tuple(cov_diag.shape)})"
            )
        try:
            batch_shape = Size(
                np.broadcast_shapes(
                    tuple(loc.shape[:-1]), tuple(cov_factor.shape[:-2]), tuple(cov_diag.shape[:-1])
                )
            )
        except ValueError as e:
            raise ValueError(
                f"Incompatible batch shapes: loc {tuple(loc.shape)}, cov_factor "
                f"{tuple(cov_factor.shape)}, cov_diag {tuple(cov_diag.shape)}"
            ) from e
        n, m = event_shape[0], cov_factor.shape[-1]
        self.loc = loc.expand(*batch_shape, n)
        self.cov_factor = cov_factor.expand(*batch_shape, n, m)
        self.cov_diag = cov_diag.expand(*batch_shape, n)
        self._unbroadcasted_cov_factor = cov_factor
        self._unbroadcasted_cov_diag = cov_diag
        # validated first: a non-positive cov_diag is named, not a failed Cholesky (PyTorch
        # 2.13 factors first and raises its LinAlgError)
        super().__init__(batch_shape, event_shape, validate_args=validate_args)
        self._capacitance_tril = _capacitance_tril(cov_factor, cov_diag)

    def expand(self, batch_shape: Any, _instance: Any = None) -> LowRankMultivariateNormal:
        new, batch_shape = self._expand_loc(LowRankMultivariateNormal, batch_shape, _instance)
        loc_shape = new.loc.shape
        new.cov_diag = self.cov_diag.expand(loc_shape)
        new.cov_factor = self.cov_factor.expand(*loc_shape, self.cov_factor.shape[-1])
        new._unbroadcasted_cov_factor = self._unbroadcasted_cov_factor
        new._unbroadcasted_cov_diag = self._unbroadcasted_cov_diag
        new._capacitance_tril = self._capacitance_tril
        return self._finish_expand(new, batch_shape, self.event_shape)  # type: ignore[no-any-return]

    @lazy_property
    def variance(self) -> Tensor:
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        return (W.pow(2).sum(-1) + D).expand(*self._batch_shape, *self._event_shape)

    @lazy_property
    def scale_tril(self) -> Tensor:
        """``sqrt(D) chol(I + D^-1/2 W W.mT D^-1/2)``: the covariance's Cholesky factor."""
        sqrt_d = self._unbroadcasted_cov_diag.sqrt().unsqueeze(-1)
        scaled = self._unbroadcasted_cov_factor / sqrt_d
        K = ember.matmul(scaled, scaled.mT)
        return self._full(sqrt_d * ember.linalg.cholesky(K + _eye_like(K)))

    @lazy_property
    def covariance_matrix(self) -> Tensor:
        W = self._unbroadcasted_cov_factor
        return self._full(ember.matmul(W, W.mT) + ember.diag_embed(self._unbroadcasted_cov_diag))

    @lazy_property
    def precision_matrix(self) -> Tensor:
        """Woodbury: ``D^-1 - A.mT A`` with ``A = C^-1 W.mT D^-1``."""
        D = self._unbroadcasted_cov_diag
        Wt_Dinv = self._unbroadcasted_cov_factor.mT / D.unsqueeze(-2)
        C = self._capacitance_tril
        batch = np.broadcast_shapes(tuple(C.shape[:-2]), tuple(Wt_Dinv.shape[:-2]))
        A = ember.linalg.solve_triangular(
            C.expand(*batch, *C.shape[-2:]),
            Wt_Dinv.expand(*batch, *Wt_Dinv.shape[-2:]),
            upper=False,
        )
        return self._full(ember.diag_embed(D.reciprocal()) - A.mT @ A)

    def rsample(self, sample_shape: Any = EMPTY) -> Tensor:
        """``loc + W @ eps_W + sqrt(D) * eps_D`` (PyTorch's draws: same seed, same samples)."""
        shape = self._extended_shape(sample_shape)
        W_shape = (*shape[:-1], self.cov_factor.shape[-1])
        eps_W = standard_normal(W_shape, self.loc.dtype, self.loc.device)
        eps_D = standard_normal(tuple(shape), self.loc.dtype, self.loc.device)
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        return self.loc + _batch_mv(W, eps_W) + D.sqrt() * eps_D

    def _log_det(self) -> Tensor:
        return _lowrank_logdet(self._unbroadcasted_cov_diag, self._capacitance_tril)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        M = _lowrank_mahalanobis(
            self._unbroadcasted_cov_factor,
            self._unbroadcasted_cov_diag,
            value - self.loc,
            self._capacitance_tril,
        )
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + self._log_det() + M)

    def entropy(self) -> Tensor:
        n = self._event_shape[0]
        return self._batch_entropy(0.5 * (n * (1.0 + math.log(2 * math.pi)) + self._log_det()))
