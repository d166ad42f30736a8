"""``standard_gamma(concentration)``: Gamma(concentration, 1) draws that carry a gradient
with respect to the concentration (the implicit reparametrisation PyTorch's
``_standard_gamma`` has); ``regularized_gamma_p(a, x)``: the regularised lower incomplete
gamma function ``P(a, x)`` (``Gamma.cdf``), differentiable in ``x``.

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

__all__ = ["regularized_gamma_p", "standard_gamma"]


def _scipy_special() -> Any:
    # deferred: scipy.special costs about as much as the rest of ``import ember`` to load,
    # and only a gamma sample's gradient and the gamma cdf need it
    from scipy import special

    return special


def _dcdf_dconcentration(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``dP(a, x)/da`` by a central difference of SciPy's ``gammainc`` (NOTE [implicit gamma
    gradient]); NaN where it is undefined."""
    special = _scipy_special()
    h = 1e-5 * np.maximum(a, 1.0)
    low = np.minimum(h, a / 2)
    with np.errstate(all="ignore"):
        return (special.gammainc(a + h, x) - special.gammainc(a - low, x)) / (h + low)  # type: ignore[no-any-return]


def _dsample_dconcentration(x: np.ndarray, a: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        log_pdf = (a - 1) * np.log(x) - x - _scipy_special().gammaln(a)
        out = -_dcdf_dconcentration(a, x) / np.exp(log_pdf)
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


class _RegularizedGammaP(Function):
    @staticmethod
    def forward(ctx: Any, a: Tensor, x: Tensor) -> Tensor:
        with np.errstate(all="ignore"):
            p = _scipy_special().gammainc(
                a.detach().numpy().astype(np.float64), x.detach().numpy().astype(np.float64)
            )
        ctx.save_for_backward(a, x)
        return ember.from_numpy(np.asarray(p).astype(ember.promote_types(a.dtype, x.dtype).np))

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> tuple[Tensor | None, Tensor]:
        a, x = ctx.saved_tensors
        grad_a = None
        if ctx.needs_input_grad[0]:  # PyTorch has no derivative in a; ember's is numerical
            an, xn = a.detach().numpy().astype(np.float64), x.detach().numpy().astype(np.float64)
            grad_a = grad * ember.from_numpy(_dcdf_dconcentration(an, xn).astype(grad.dtype.np))
        # dP(a, x)/dx is the unit-rate gamma density x^(a-1) exp(-x) / Gamma(a)
        return grad_a, grad * ember.exp(ember.xlogy(a - 1, x) - x - ember.lgamma(a))


def regularized_gamma_p(a: Tensor, x: Tensor) -> Tensor:
    """``P(a, x) = gamma(a, x) / Gamma(a)`` elementwise for tensors of one shape, computed by
    SciPy's ``gammainc`` in float64 (NaN for negative ``x``); differentiable in ``x``, and
    in ``a`` by a central difference (PyTorch's ``special.gammainc`` is not).

    >>> from ember.distributions._gamma_sampler import regularized_gamma_p
    >>> regularized_gamma_p(ember.tensor([1.0]), ember.tensor([1.0]))
    tensor([0.6321])
    """
    return _RegularizedGammaP.apply(a, x)  # type: ignore[no-any-return]
