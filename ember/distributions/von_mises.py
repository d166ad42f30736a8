"""``VonMises(loc, concentration)``: the circular normal distribution on angles.

The log normaliser ``log(2 pi I0(kappa))`` is computed exactly from ember's exponentially
scaled Bessel function (``log(i0e(kappa)) + kappa``); PyTorch 2.13 uses a polynomial
approximation of ``I0`` (relative error about 1e-7), so densities agree to about that.
Draws are Best and Fisher's (1979) rejection sampler, computed in float64 from the same
uniform draws as PyTorch's (same seed, same samples).
"""

from __future__ import annotations

import math
from typing import Any

import ember
from ember._tensor import Tensor
from ember.distributions import constraints
from ember.distributions.distribution import Distribution
from ember.distributions.utils import EMPTY, broadcast_all, lazy_property

__all__ = ["VonMises"]


def _log_i0(x: Tensor) -> Tensor:
    """``log(I0(x))`` for ``x >= 0``."""
    return ember.special.i0e(x).log() + x


class VonMises(Distribution):
    """The von Mises distribution with mean angle ``loc`` and ``concentration`` (kappa);
    samples are angles in ``[-pi, pi)``. Not reparametrisable.

    >>> ember.distributions.VonMises(0.0, 1.0).log_prob(ember.tensor(0.0))
    tensor(-1.0738)
    """

    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real
    has_rsample = False

    def __init__(self, loc: Any, concentration: Any, validate_args: bool | None = None) -> None:
        self.loc, self.concentration = broadcast_all(loc, concentration)
        super().__init__(self.loc.shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> VonMises:
        params = ("loc", "concentration")
        return self._expanded(VonMises, batch_shape, _instance, params)  # type: ignore[no-any-return]

    def log_prob(self, value: Tensor) -> Tensor:
        """``kappa cos(value - loc) - log(2 pi I0(kappa))``."""
        if self._validate_args:
            self._validate_sample(value)
        kappa = self.concentration
        return kappa * ember.cos(value - self.loc) - math.log(2 * math.pi) - _log_i0(kappa)

    @lazy_property
    def _proposal_r(self) -> Tensor:
        """Best and Fisher's ``r = (1 + rho^2) / (2 rho)`` in float64 (``1 / kappa + kappa``
        for tiny kappa, where the closed form cancels)."""
        kappa = self.concentration.to(ember.float64)
        tau = 1 + (1 + 4 * kappa.pow(2)).sqrt()
        rho = (tau - (2 * tau).sqrt()) / (2 * kappa)
        return ember.where(kappa < 1e-5, 1 / kappa + kappa, (1 + rho.pow(2)) / (2 * rho))

    def sample(self, sample_shape: Any = EMPTY) -> Tensor:
        """Rejection sampling: each round draws three uniforms per element, until every
        element has had an accepted proposal (the last accepted one is kept, as PyTorch)."""
        shape = self._extended_shape(sample_shape)
        with ember.no_grad():
            loc = self.loc.to(ember.float64)
            kappa = self.concentration.to(ember.float64)
            r = self._proposal_r
            x = ember.zeros(shape, dtype=ember.float64)
            done = ember.zeros(shape, dtype=ember.bool)
            while not bool(done.all()):
                u1, u2, u3 = ember.rand((3, *shape), dtype=ember.float64).unbind()
                z = ember.cos(math.pi * u1)
                f = (1 + r * z) / (r + z)
                c = kappa * (r - f)
                accept = ((c * (2 - c) - u2) > 0) | ((c / u2).log() + 1 - c >= 0)
                x = ember.where(accept, (u3 - 0.5).sign() * f.acos(), x)
                done = done | accept
            angle = (x + math.pi + loc) % (2 * math.pi) - math.pi
            return angle.to(self.loc.dtype)

    @property
    def mean(self) -> Tensor:
        """The mean (and modal) angle ``loc``."""
        return self.loc

    mode = mean

    @property
    def variance(self) -> Tensor:
        """The circular variance ``1 - I1(kappa) / I0(kappa)``."""
        kappa = self.concentration
        return 1 - ember.special.i1e(kappa) / ember.special.i0e(kappa)
