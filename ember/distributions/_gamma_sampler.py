"""``standard_gamma(concentration)``: Gamma(concentration, 1) draws that carry a gradient
with respect to the concentration (the implicit reparametrisation PyTorch's
``_standard_gamma`` has).

# NOTE [implicit gamma gradient]
A draw ``x = F^-1(u; a)`` for a fixed uniform ``u`` moves with ``a`` as
``dx/da = -(dF/da)(x; a) / f(x; a)``, with ``F`` the regularised lower incomplete gamma
function and ``f`` the density. ember takes ``dF/da`` by a central difference of SciPy's
``gammainc`` in float64 (PyTorch uses series and asymptotic expansions); the draws
themselves come from NumPy's gamma sampler on ember's generator.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import ember
from ember._tensor import Tensor
from ember.autograd.function import Function
from ember.random import _generator

__all__ = ["standard_gamma"]


def _dsample_dconcentration(x: np.ndarray, a: np.ndarray) -> np.ndarray:
    # deferred: scipy.special costs about as much as the rest of ``import ember`` to load,
    # and only a gamma sample's gradient needs it
    from scipy import special

    h = 1e-5 * np.maximum(a, 1.0)
    with np.errstate(all="ignore"):
        dcdf = (special.gammainc(a + h, x) - special.gammainc(a - np.minimum(h, a / 2), x)) / (
            h + np.minimum(h, a / 2)
        )
        log_pdf = (a - 1) * np.log(x) - x - special.gammaln(a)
        out = -dcdf / np.exp(log_pdf)
    return np.where(np.isfinite(out), out, 0.0)


class _StandardGamma(Function):
    @staticmethod
    def forward(ctx: Any, concentration: Tensor) -> Tensor:
        a = concentration.detach().numpy().astype(np.float64)
        x = _generator(None).standard_gamma(a)
        tiny = np.finfo(concentration.dtype.np).tiny
        x = np.maximum(x, tiny)
        ctx.a, ctx.x = a, x
        return ember.from_numpy(x.astype(concentration.dtype.np))

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> Tensor:
        d = _dsample_dconcentration(ctx.x, ctx.a)
        return grad * ember.from_numpy(d.astype(grad.dtype.np))


def standard_gamma(concentration: Tensor) -> Tensor:
    """Gamma(concentration, 1) draws, one per element, differentiable in ``concentration``.

    >>> from ember.distributions._gamma_sampler import standard_gamma
    >>> bool((standard_gamma(ember.full((100,), 2.0)) > 0).all())
    True
    """
    return _StandardGamma.apply(concentration)
