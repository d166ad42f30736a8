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
    # looked up on first call, as the others (``_scipy``): not at import
    "special_bessel_j0": _scipy("j0"), "special_bessel_j1": _scipy("j1"),
    "special_bessel_y0": _scipy("y0"), "special_bessel_y1": _scipy("y1"),
    "special_modified_bessel_i0": _scipy("i0"), "special_modified_bessel_i1": _scipy("i1"),
    "special_modified_bessel_k0": _scipy("k0"), "special_modified_bessel_k1": _scipy("k1"),
    "special_scaled_modified_bessel_k0": _scipy("k0e"),
    "special_scaled_modified_bessel_k1": _scipy("k1e"), "special_airy_ai": _airy_ai,
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


# --------------------------------------------------------------------------- polynomials
#
# NOTE [orthogonal polynomials]: PyTorch evaluates P_n(x) element by element: n is truncated
# toward zero to an integer (NaN, ±inf and values past int64 read as negative), n < 0 gives
# 0, a few closed forms come first (the endpoints x = ±1, the trigonometric form of the
# Chebyshev polynomials for |x| < 1 and large n), and otherwise the three-term recurrence
# runs n - 1 steps in the computation dtype, stopping early once it is NaN. Here the same
# cases are masks over the whole array, and the recurrence is one vectorised step per degree
# over the elements still running (they leave as their degree is reached or they turn NaN).


def _degree(n: np.ndarray) -> np.ndarray:
    """``n`` as PyTorch's kernels read it: truncated toward zero, -1 where it has no int64
    value (NaN, ±inf, past 2**63), in ``n``'s own floating dtype."""
    ok = np.isfinite(n) & (np.abs(n) < 2.0**63)
    return np.where(ok, np.trunc(n), -1).astype(n.dtype, copy=False)


def _recur(step: Any, x: np.ndarray, q: np.ndarray, steps: np.ndarray, out: np.ndarray) -> None:
    """Write into ``out`` the recurrence ``r = step(j, x, p, q)``, ``p, q = q, r`` for
    ``j = 1 .. steps`` (per element, ``steps >= 1`` where it runs, ``p`` starting at 1)."""
    idx = np.flatnonzero(steps > 0)
    xa, qa, sa = x[idx], q[idx], steps[idx]
    pa = np.ones_like(qa)
    j = 1
    while idx.size:
        r = step(j, xa, pa, qa)
        pa, qa = qa, r
        done = (sa <= j) | np.isnan(r)
        if done.any():
            out[idx[done]] = r[done]
            keep = ~done
            idx, xa, pa, qa, sa = idx[keep], xa[keep], pa[keep], qa[keep], sa[keep]
        j += 1


class _Cases:
    """An output filled case by case, the first case that holds for an element winning."""

    def __init__(self, like: np.ndarray) -> None:
        self.out = np.empty_like(like)
        self.free = np.ones(like.shape, dtype=bool)

    def set(self, mask: Any, value: Any) -> None:
        m = mask & self.free
        self.out[m] = value[m] if np.ndim(value) else value
        self.free &= ~m


def _libm(fn: Any, a: np.ndarray) -> np.ndarray:
    """``fn(a)`` rounded from float64: the C library's float functions PyTorch's scalar
    kernels call are correctly rounded far more often than NumPy's vectorised float32 ones."""
    return fn(a.astype(np.float64)).astype(a.dtype, copy=False)


def _chebyshev_step(j: int, t: np.ndarray, p: np.ndarray, q: np.ndarray) -> np.ndarray:
    return (t + t) * q - p


def _chebyshev(kind: str, shifted: bool) -> Any:
    """The Chebyshev polynomial of the first to fourth kind (``t``, ``u``, ``v``, ``w``) of
    ``x`` or, shifted, of ``2x - 1``."""
    # the degree past which |t| < 1 uses the trigonometric form
    trig_after = {"t": 6, "u": 6 if shifted else 8, "v": 6 if shifted else 8}.get(
        kind, 4 if shifted else 8
    )

    def fn(x: np.ndarray, n: np.ndarray) -> np.ndarray:
        t = x + x - 1 if shifted else x
        one = x == 1 if shifted else t == 1
        minus_one = x == 0 if shifted else t == -1
        even = np.fmod(n, 2) == 0
        c = _Cases(t)
        c.set(n < 0, 0)
        # the endpoints t = 1 and t = -1 (where the other kinds' trigonometric form is 0/0)
        at_one = {"t": 1, "u": n + 1, "v": 1, "w": n + n + 1}[kind]
        at_minus = {"t": 1, "u": n + 1, "v": n + n + 1, "w": 1}[kind]
        c.set(one, at_one)
        c.set(minus_one, np.where(even, at_minus, -at_minus))
        theta = _libm(np.arccos, t)
        cos, sin = (lambda a: _libm(np.cos, a)), (lambda a: _libm(np.sin, a))
        if kind == "t":
            trig = cos(n * theta)
        elif kind == "u":
            s = sin(theta)
            trig = np.where(s != 0, sin((n + 1) * theta) / s, (n + 1) * cos((n + 1) * theta) / t)
        elif kind == "v":
            trig = np.where(
                sin(theta / 2) != 1,
                cos((n + 0.5) * theta) / cos(theta / 2),
                np.where(even, n + n + 1, -(n + n + 1)),
            )
        else:
            odd_end = np.where(even, 1, -1).astype(t.dtype)
            end = odd_end if shifted else np.where(x > 0, n + n + 1, odd_end)
            trig = np.where(cos(theta / 2) != 1, sin((n + 0.5) * theta) / sin(theta / 2), end)
        c.set((n > trig_after) & (np.abs(t) < 1), trig)
        c.set(n == 0, 1)
        q = {"t": t, "u": t + t, "v": t + t - 1, "w": t + t + 1}[kind]
        c.set(n == 1, q)
        _recur(_chebyshev_step, t, q, np.where(c.free, n - 1, 0).astype(np.int64), c.out)
        return c.out

    return fn


def _hermite(physicists: bool) -> Any:
    """Hermite's polynomials H_n (physicists') or He_n (probabilists'); NaN past degree 128
    (float32) or 512 (float64), as PyTorch."""

    def step(j: int, x: np.ndarray, p: np.ndarray, q: np.ndarray) -> np.ndarray:
        if physicists:
            return (x + x) * q - (j + j) * p
        return x * q - j * p

    def fn(x: np.ndarray, n: np.ndarray) -> np.ndarray:
        c = _Cases(x)
        c.set(n < 0, 0)
        c.set(n == 0, 1)
        q = x + x if physicists else x
        c.set(n == 1, q)
        c.set(n > (128 if x.dtype == np.float32 else 512), np.nan)
        _recur(step, x, q, np.where(c.free, n - 1, 0).astype(np.int64), c.out)
        return c.out

    return fn


def _laguerre_step(j: int, x: np.ndarray, p: np.ndarray, q: np.ndarray) -> np.ndarray:
    return (((j + j) + (1 - x)) * q - j * p) / (j + 1)


def _laguerre(x: np.ndarray, n: np.ndarray) -> np.ndarray:
    """Laguerre's polynomial L_n(x) (1 at x = 0 for every n >= 0)."""
    c = _Cases(x)
    c.set(n < 0, 0)
    c.set(x == 0, 1)
    c.set(n == 0, 1)
    c.set(n == 1, 1 - x)
    _recur(_laguerre_step, x, 1 - x, np.where(c.free, n - 1, 0).astype(np.int64), c.out)
    return c.out


def _legendre_step(j: int, x: np.ndarray, p: np.ndarray, q: np.ndarray) -> np.ndarray:
    return ((j + j + 1) * x * q - j * p) / (j + 1)


def _legendre(x: np.ndarray, n: np.ndarray) -> np.ndarray:
    """Legendre's polynomial P_n(x)."""
    c = _Cases(x)
    c.set(n < 0, 0)
    c.set(np.abs(x) == 1, np.where((x > 0) | (np.fmod(n, 2) == 0), 1, -1).astype(x.dtype))
    c.set(n == 0, 1)
    c.set(n == 1, x)
    _recur(_legendre_step, x, x, np.where(c.free, n - 1, 0).astype(np.int64), c.out)
    return c.out


def _polynomial(fn: Any) -> Any:
    """``fn(x, n)`` on flat arrays of one floating dtype, lifted to broadcast operands (either
    one may be a Python number) with n read as PyTorch reads it."""

    def kernel(x: Any, n: Any) -> np.ndarray:
        dtype = (x if isinstance(x, np.ndarray) else n).dtype
        xb, nb = np.broadcast_arrays(np.asarray(x, dtype), np.asarray(n, dtype))
        shape = xb.shape
        r = fn(xb.reshape(-1), _degree(nb.reshape(-1)))
        return np.asarray(r, dtype).reshape(shape)

    kernel.__name__ = fn.__name__
    return kernel


POLYNOMIALS = {
    **{f"chebyshev_polynomial_{k}": _polynomial(_chebyshev(k, False)) for k in "tuvw"},
    **{f"shifted_chebyshev_polynomial_{k}": _polynomial(_chebyshev(k, True)) for k in "tuvw"},
    "hermite_polynomial_h": _polynomial(_hermite(True)),
    "hermite_polynomial_he": _polynomial(_hermite(False)),
    "laguerre_polynomial_l": _polynomial(_laguerre),
    "legendre_polynomial_p": _polynomial(_legendre),
}
for _name, _fn in POLYNOMIALS.items():
    _packet = getattr(aten, f"special_{_name}")
    for _overload in ("default", "x_scalar", "n_scalar"):
        impl(getattr(_packet, _overload), CPU, binary(f"special_{_name}.{_overload}", _fn))
