"""CPU kernels of the special functions: ``scipy.special`` ufuncs (NumPy has no erfinv,
gammaln, digamma, polygamma, Bessel functions), NumPy's ``exp2`` and ``sinc``, through the
pointwise kernel factories (``unary``/``binary``: PyTorch's promotion, float16 computed in
float32 and rounded back).

Where SciPy's value at an edge differs from PyTorch's definition, the kernel says so:
``lgamma(-inf)`` is +inf (log|Γ|), and ``logit`` clamps to ``[eps, 1 - eps]`` first.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ember._tensor import Tensor
from ember.backends.cpu._util import quiet_block
from ember.backends.cpu.pointwise import arg, binary, result, unary
from ember.dispatch.keys import DispatchKey
from ember.library import impl
from ember.ops.native.promotion import POINTWISE, pointwise_dtypes
from ember.ops.registry import ops

aten = ops.aten
CPU = DispatchKey.CPU


class _SciPySpecial:
    """``scipy.special``, imported on first use: importing it costs about as much as the
    rest of ember's import (it pulls in SciPy's array-API layer), and most programs never
    call a special function."""

    def __getattr__(self, name: str) -> Any:
        import scipy.special  # deferred: see the class docstring

        return getattr(scipy.special, name)


sp = _SciPySpecial()


def _scipy(name: str) -> Any:
    """``scipy.special.<name>``, looked up when first called (``_SciPySpecial``)."""
    found: list[Any] = []

    def fn(*args: Any) -> Any:
        if not found:
            found.append(getattr(sp, name))
        return found[0](*args)

    fn.__name__ = name
    return fn


def _lgamma(x: np.ndarray) -> np.ndarray:
    """log|Γ(x)|: SciPy gives -inf at -inf, PyTorch (and the limit of |Γ|) +inf."""
    r = sp.gammaln(x)
    return np.where(x == -np.inf, np.inf, r) if r.size else r


def _opmath(x: np.ndarray) -> np.ndarray:
    """float16 computed in float32, as PyTorch computes it."""
    return x.astype(np.float32) if x.dtype == np.float16 else x


_UNARY = {
    "erfc": _scipy("erfc"), "erfinv": _scipy("erfinv"), "exp2": np.exp2, "lgamma": _lgamma,
    "digamma": _scipy("digamma"), "sinc": np.sinc, "i0": _scipy("i0"),
    "special_entr": _scipy("entr"), "special_ndtri": _scipy("ndtri"),
    "special_log_ndtr": _scipy("log_ndtr"), "special_erfcx": _scipy("erfcx"),
    "special_i0e": _scipy("i0e"), "special_i1": _scipy("i1"), "special_i1e": _scipy("i1e"),
}  # fmt: skip


def _airy_ai(x: np.ndarray) -> np.ndarray:
    return sp.airy(x)[0]  # (Ai, Ai', Bi, Bi')


def _spherical_j0(x: np.ndarray) -> np.ndarray:
    return sp.spherical_jn(0, x)


_UNARY.update({
    "special_bessel_j0": sp.j0, "special_bessel_j1": sp.j1, "special_bessel_y0": sp.y0,
    "special_bessel_y1": sp.y1, "special_modified_bessel_i0": sp.i0,
    "special_modified_bessel_i1": sp.i1, "special_modified_bessel_k0": sp.k0,
    "special_modified_bessel_k1": sp.k1, "special_scaled_modified_bessel_k0": sp.k0e,
    "special_scaled_modified_bessel_k1": sp.k1e, "special_airy_ai": _airy_ai,
    "special_spherical_bessel_j0": _spherical_j0,
})  # fmt: skip

for _name, _fn in _UNARY.items():
    impl(getattr(aten, _name).default, CPU, unary(f"{_name}.default", _fn))

_BINARY = (("xlogy", _scipy("xlogy")), ("special_xlog1py", _scipy("xlog1py")),
           ("special_zeta", _scipy("zeta")))  # fmt: skip
for _name, _fn in _BINARY:
    _packet = getattr(aten, _name)
    _t, _s, _o = (
        ("Tensor", "Scalar_Self", "Scalar_Other")
        if _name == "xlogy"
        else ("default", "self_scalar", "other_scalar")
    )
    for _overload in (_t, _s, _o):
        impl(getattr(_packet, _overload), CPU, binary(f"{_name}.{_overload}", _fn))


_POLYGAMMA = POINTWISE["polygamma.default"]


@impl(aten.polygamma.default, CPU)
def polygamma(n: int, self: Any) -> Tensor:
    """The n-th derivative of digamma (digamma itself for n = 0)."""
    cdt, rdt = pointwise_dtypes("polygamma.default", _POLYGAMMA, (n, self))
    x = arg(self, cdt.np)
    with quiet_block():  # the float32 result of a large float64 one: inf, silently
        r = sp.digamma(x) if n == 0 else sp.polygamma(n, x)
        return result(np.asarray(r, x.dtype if x.dtype.kind == "f" else None), rdt.np)


_MVLGAMMA = POINTWISE["mvlgamma.default"]


@impl(aten.mvlgamma.default, CPU)
def mvlgamma(self: Any, p: int) -> Tensor:
    """The multivariate log-gamma function of dimension ``p``: ``p(p-1)/4 log(pi) + sum_j
    lgamma(x - j/2)``."""
    cdt, rdt = pointwise_dtypes("mvlgamma.default", _MVLGAMMA, (self, p))
    x = _opmath(arg(self, cdt.np))  # (PyTorch 2.13 no longer checks x > (p-1)/2)
    with quiet_block():
        j = np.arange(p, dtype=x.dtype).reshape((p,) + (1,) * x.ndim)
        r = _lgamma(x - j / 2).sum(0) + p * (p - 1) / 4 * np.log(np.pi)
    return result(np.asarray(r, x.dtype), rdt.np)


_LOGIT = POINTWISE["logit.default"]


@impl(aten.logit.default, CPU)
def logit(self: Any, eps: float | None = None) -> Tensor:
    """``log(x / (1 - x))``, after clamping to ``[eps, 1 - eps]`` when ``eps`` is given."""
    cdt, rdt = pointwise_dtypes("logit.default", _LOGIT, (self,))
    x = _opmath(arg(self, cdt.np))
    with quiet_block():
        if eps is not None:
            x = np.clip(x, eps, 1 - eps)
        r = np.log(x / (1 - x))
    return result(r, rdt.np)
