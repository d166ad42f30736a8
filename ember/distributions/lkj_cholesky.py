"""``LKJCholesky(dim, concentration)``: the LKJ distribution over Cholesky factors of
``dim x dim`` correlation matrices (density of ``L`` proportional to
``prod_i L_ii ** (dim - i + 2 (concentration - 1))``, rows from 2).

Draws are the onion method (Lewandowski, Kurowicka and Joe, 2009): row ``i`` (from 0) is
``sqrt(y_i)`` times a uniform direction in its first ``i`` coordinates, with
``y_i ~ Beta(i / 2, concentration + (dim - 1 - i) / 2)``, and the diagonal takes the rest of
the unit norm; every off-diagonal correlation then has LKJ's marginal, ``(r + 1) / 2 ~
Beta(b, b)`` with ``b = concentration - 1 + dim / 2``. PyTorch 2.13 takes the first beta
parameter as ``i - 1/2`` instead of ``i / 2`` for rows from 2 on, so its draws for
``dim >= 3`` are not LKJ-distributed (rows past the second are too close to their
diagonal); ember's follow the paper. The beta draws are ember's gamma sampler (not
PyTorch's stream).
"""

from __future__ import annotations

import math
from typing import Any

import ember
from ember._tensor import Size, Tensor
from ember.distributions import constraints
from ember.distributions.dirichlet import Beta
from ember.distributions.distribution import Distribution
from ember.distributions.utils import EMPTY, broadcast_all

__all__ = ["LKJCholesky"]


class LKJCholesky(Distribution):
    """The LKJ distribution of correlation-matrix Cholesky factors (not reparametrisable).

    >>> d = ember.distributions.LKJCholesky(3, 0.5)
    >>> d.log_prob(ember.eye(3))
    tensor(-2.5310)
    """

    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(
        self, dim: int, concentration: Any = 1.0, validate_args: bool | None = None
    ) -> None:
        if dim < 2:
            raise ValueError(
                f"Expected dim to be an integer greater than or equal to 2. Found dim={dim}."
            )
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        c = self.concentration
        # row i's beta: (i / 2, concentration + (dim - 1 - i) / 2), row 0's unused (a
        # placeholder with the parameters of row 1)
        half = ember.cat([ember.zeros(1, dtype=c.dtype), ember.arange(dim - 1, dtype=c.dtype)]) / 2
        marginal = c + 0.5 * (dim - 2)
        self._beta = Beta(half + 0.5, marginal.unsqueeze(-1) - half, validate_args=False)
        super().__init__(c.size(), Size((dim, dim)), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> LKJCholesky:
        new = self._get_checked_instance(LKJCholesky, _instance)
        batch_shape = Size(batch_shape)
        new.dim = self.dim
        new.concentration = self.concentration.expand(batch_shape)
        new._beta = self._beta.expand((*batch_shape, self.dim))
        return self._finish_expand(new, batch_shape, self.event_shape)  # type: ignore[no-any-return]

    def sample(self, sample_shape: Any = EMPTY) -> Tensor:
        """The onion method (see the module's docstring)."""
        with ember.no_grad():
            y = self._beta.sample(sample_shape).unsqueeze(-1)
            shape = self._extended_shape(sample_shape)
            u = ember.randn(tuple(shape), dtype=y.dtype, device=y.device).tril(-1)
            direction = u / u.norm(dim=-1, keepdim=True)
            first_row = ember.arange(self.dim) == 0
            direction = ember.where(first_row.unsqueeze(-1), ember.zeros_like(direction), direction)
            w = y.sqrt() * direction
            tiny = float(ember.finfo(w.dtype).tiny)
            diag = (1 - w.pow(2).sum(-1)).clamp(min=tiny).sqrt()
            return w + ember.diag_embed(diag)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        d = self.dim
        diag = value.diagonal(0, -2, -1)[..., 1:]
        rows = ember.arange(2, d + 1, dtype=self.concentration.dtype)
        order = 2 * (self.concentration - 1).unsqueeze(-1) + d - rows
        unnormalized = (order * diag.log()).sum(-1)
        # the normaliser: (d - 1) / 2 log(pi) + mvlgamma(alpha - 1/2, d - 1) - (d - 1) lgamma(alpha)
        alpha = self.concentration + 0.5 * (d - 1)
        log_norm = (
            0.5 * (d - 1) * math.log(math.pi)
            + ember.mvlgamma(alpha - 0.5, d - 1)
            - ember.lgamma(alpha) * (d - 1)
        )
        return unnormalized - log_norm
