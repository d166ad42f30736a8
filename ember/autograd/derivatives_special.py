"""Derivatives of the special functions (PyTorch's derivatives.yaml), one line per op.

# NOTE [special derivatives]
``lgamma' = digamma``, ``digamma' = polygamma(1)``, ``polygamma(n)' = polygamma(n + 1)``,
``erfinv'(x) = sqrt(pi)/2 exp(erfinv(x)²)``, ``ndtri'(x) = sqrt(2 pi) exp(ndtri(x)²/2)``,
``log_ndtr'(x) = exp(-(log_ndtr(x) + x²/2)) / sqrt(2 pi)``, ``erfcx'(x) = 2x erfcx(x) -
2/sqrt(pi)``, ``i0' = i1``, ``i1'(x) = i0(x) - i1(x)/x`` (1/2 at 0), and the scaled Bessel
functions by the product rule. ``xlogy``'s gradient for ``self`` is 0 where ``self == 0`` and
``other <= 0`` (where ``log(other)`` is -inf or NaN but the value is defined as 0), as
PyTorch's; ``logit``'s is 0 outside ``[eps, 1 - eps]`` (NaN outside ``[0, 1]`` without
``eps``); ``sinc``'s is 0 at 0.

# NOTE [logit at -0]
``logit``'s gradient is ``g / (x (1 - x))`` in IEEE arithmetic, so at ``x = -0`` it is
``-g * inf`` and at ``+0`` ``g * inf``. PyTorch 2.13's CPU kernel gives that in its vectorized
loop but ``+g * inf`` at both zeros in its scalar loop (short or tail elements), so which sign
PyTorch returns depends on the size and on the machine's vector width; ember takes the
vectorized loop's value everywhere (tests/test_regressions.py).
"""

from __future__ import annotations

import math
from typing import Any

from ember import functional as E  # NOTE [formulas on the public functions]
from ember._tensor import Tensor
from ember.autograd.derivatives import _sgn, conj
from ember.autograd.derivatives_tensorops import _UNNAMED, RAISES_AT_BACKWARD, not_differentiated
from ember.autograd.function_table import defvjp, nondifferentiable
from ember.dtypes import uint8
from ember.ops.native.special import BESSEL, POLYNOMIALS
from ember.ops.registry import ops

aten = ops.aten
_SQRT_PI = math.sqrt(math.pi)
_SQRT_2PI = math.sqrt(2 * math.pi)
_LN2 = math.log(2.0)


def _mvlgamma(g: Any, self: Any, p: int) -> Any:
    # x + (j/2 - (p-1)/2) for j < p: the offsets are +0 (never -0) where they vanish, so
    # digamma(-0 + 0) is digamma(+0) = -inf, as PyTorch adds them
    offsets = E.arange(p, dtype=self.dtype, device=self.device) * 0.5 - (p - 1) / 2
    return g * aten.digamma.default(self.unsqueeze(0) + offsets.view([p] + [1] * self.ndim)).sum(0)


def _logit(g: Any, self: Any, eps: float | None) -> Any:
    # IEEE division at the ends: g / (-0 * 1) is -g * inf at x = -0 (NOTE [logit at -0])
    grad = g / (self * (1 - self))
    if eps is None:
        return E.where((self < 0) | (self > 1), math.nan, grad)
    return E.where((self < eps) | (self > 1 - eps), 0.0, grad)


def _sinc(g: Any, self: Any) -> Any:
    px = self * math.pi
    grad = g * conj((px * px.cos() - px.sin()) / (px * self))
    return E.where(self == 0, 0.0, grad)


def _xlogy_self(g: Any, self: Any, other: Any) -> Any:
    return aten.xlogy.Tensor(g, other).masked_fill((self == 0) & (other <= 0), 0.0)


def _xlog1py_self(g: Any, self: Any, other: Any) -> Any:
    # other compared as a number (in g's dtype): a uint8 other would wrap -1 to 255
    below = other.to(g.dtype) <= -1 if other.dtype is uint8 else other <= -1
    return aten.special_xlog1py.default(g, other).masked_fill((self == 0) & below, 0.0)


def _i1(g: Any, self: Any, result: Any) -> Any:
    return E.where(self == 0, 0.5 * g, g * (aten.i0.default(self) - result / self))


def _i1e(g: Any, self: Any, result: Any) -> Any:
    inner = aten.special_i0e.default(self) - result * (_sgn(self) + 1 / self)
    return E.where(self == 0, 0.5 * g, g * inner)


# fmt: off
defvjp(aten.erfc.default, lambda g, self: (g * (-2 / _SQRT_PI) * (-self * self).exp(),))
defvjp(aten.erfinv.default, lambda g, self, *, result: (g * (0.5 * _SQRT_PI) * (result * result).exp(),))
defvjp(aten.exp2.default, lambda g, self, *, result: (g * conj(result) * _LN2,))
defvjp(aten.lgamma.default, lambda g, self: (g * aten.digamma.default(self),))
defvjp(aten.digamma.default, lambda g, self: (g * aten.polygamma.default(1, self),))
defvjp(aten.polygamma.default, lambda g, n, self: (g * aten.polygamma.default(n + 1, self),))
defvjp(aten.mvlgamma.default, lambda g, self, p: (_mvlgamma(g, self, p),))
defvjp(aten.logit.default, lambda g, self, eps=None: (_logit(g, self, eps),))
defvjp(aten.xlogy.Tensor, lambda g, self, other: (_xlogy_self(g, self, other), g * self / other))
defvjp(aten.xlogy.Scalar_Self, lambda g, self, other: (g * self / other,))
defvjp(aten.xlogy.Scalar_Other, lambda g, self, other: (
    aten.xlogy.Scalar_Other(g, other) if other > 0
    else aten.xlogy.Scalar_Other(g, other).masked_fill(self == 0, 0.0),))
defvjp(aten.sinc.default, lambda g, self: (_sinc(g, self),))
defvjp(aten.i0.default, lambda g, self: (g * aten.special_i1.default(self),))
defvjp(aten.special_entr.default, lambda g, self: (g * -(1 + self.log()),))
defvjp(aten.special_ndtri.default, lambda g, self, *, result: (g * _SQRT_2PI * (result * result / 2).exp(),))
defvjp(aten.special_log_ndtr.default, lambda g, self, *, result: (
    g / _SQRT_2PI * (-(result + self * self / 2)).exp(),))
defvjp(aten.special_erfcx.default, lambda g, self, *, result: ((2 * self * result - 2 / _SQRT_PI) * g,))
defvjp(aten.special_i0e.default, lambda g, self, *, result: (
    g * (aten.special_i1e.default(self) - _sgn(self) * result),))
defvjp(aten.special_i1.default, lambda g, self, *, result: (_i1(g, self, result),))
defvjp(aten.special_i1e.default, lambda g, self, *, result: (_i1e(g, self, result),))
defvjp(aten.special_xlog1py.default, lambda g, self, other: (
    _xlog1py_self(g, self, other), g * self / (other + 1)))
defvjp(aten.special_xlog1py.self_scalar, lambda g, self, other: (g * self / (other + 1),))
defvjp(aten.special_xlog1py.other_scalar, lambda g, self, other: (
    aten.special_xlog1py.other_scalar(g, other) if other > -1
    else aten.special_xlog1py.other_scalar(g, other).masked_fill(self == 0, 0.0),))
# fmt: on


def _zeta_other(g: Any, self: Any, other: Any) -> Any:
    """d/dq zeta(x, q) = -x zeta(x + 1, q). PyTorch has no derivative in x: its backward
    raises when x requires grad, so this one does too."""
    if isinstance(self, Tensor):
        if self.requires_grad:
            raise NotImplementedError(
                "the derivative for 'zeta' in its first argument is not implemented (as in "
                "PyTorch); detach() it if no gradient should flow through it"
            )
        return g * -self * aten.special_zeta.default(self + 1.0, other)
    return g * -self * aten.special_zeta.self_scalar(self + 1.0, other)


defvjp(aten.special_zeta.default, lambda g, self, other: (None, _zeta_other(g, self, other)))
RAISES_AT_BACKWARD.add(aten.special_zeta.default)  # whenever x requires grad
defvjp(aten.special_zeta.self_scalar, lambda g, self, other: (_zeta_other(g, self, other),))
not_differentiated(aten.special_zeta.other_scalar)  # only x is a tensor: nothing to give

# PyTorch has no derivative for heaviside: its backward raises
not_differentiated(aten.heaviside.default, _UNNAMED)  # PyTorch's node has no name


# the Bessel family: outputs that never require grad, as PyTorch's (no derivatives there)
nondifferentiable(*(getattr(aten, f"special_{name}").default for name in BESSEL))


# the orthogonal polynomials: no derivatives in PyTorch either (outputs never require grad)
nondifferentiable(
    *(
        getattr(getattr(aten, f"special_{name}"), overload)
        for name in POLYNOMIALS
        for overload in ("default", "x_scalar", "n_scalar")
    )
)
