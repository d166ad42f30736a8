"""The window functions of signal processing: ``hann_window``, ``hamming_window``,
``blackman_window``, ``bartlett_window`` and ``kaiser_window`` (PyTorch's
CompositeExplicitAutograd factories, composed here of ``arange`` and pointwise ops, so they
run on every device). ``periodic=True`` (the default) computes a window of ``n + 1`` points
and drops the last, as for spectral analysis; ``False`` gives the symmetric window."""

from __future__ import annotations

import math
from typing import Any

from ember import dtypes
from ember.ops.native._define import define
from ember.ops.registry import impl, ops

aten = ops.aten
CEA = "CompositeExplicitAutograd"
_O = "ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None"
_F = ("function",)

for _name in ("hann", "hamming", "blackman", "bartlett", "kaiser"):
    define(f"{_name}_window(int window_length, *, {_O}) -> Tensor", variants=_F)
    define(f"{_name}_window.periodic(int window_length, bool periodic, *, {_O}) -> Tensor",
           variants=_F)  # fmt: skip
define(f"hamming_window.periodic_alpha(int window_length, bool periodic, float alpha, *, {_O}) "
       "-> Tensor", variants=_F)  # fmt: skip
define("hamming_window.periodic_alpha_beta(int window_length, bool periodic, float alpha, "
       f"float beta, *, {_O}) -> Tensor", variants=_F)  # fmt: skip
define(f"kaiser_window.beta(int window_length, bool periodic, float beta, *, {_O}) -> Tensor",
       variants=_F)  # fmt: skip


def _points(name: str, n: int, periodic: bool, options: dict[str, Any]) -> tuple[Any, int] | Any:
    """(``arange`` of the points, the symmetric length) or, for 0 or 1 points, the window."""
    if n < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got window_length={n}")
    d = options.get("dtype") or dtypes.get_default_dtype()
    if d.category != dtypes.FLOATING:
        raise RuntimeError(f"{name} expects floating point dtypes, got: {d}")
    opts = {"dtype": d, "device": options.get("device")}
    if n <= 1:
        return aten.ones.default([n], **opts)
    length = n + 1 if periodic else n
    return aten.arange.default(n, **opts), length


def _cos(k: Any, times: float, length: int) -> Any:
    return aten.cos.default(aten.mul.Scalar(k, times * math.pi / (length - 1)))


def _hamming(name: str, n: int, periodic: bool, alpha: float, beta: float, kw: Any) -> Any:
    got = _points(name, n, periodic, kw)
    if not isinstance(got, tuple):
        return got
    k, length = got
    return aten.rsub.Scalar(aten.mul.Scalar(_cos(k, 2, length), beta), alpha)


def hann(n: int, periodic: bool = True, **kw: Any) -> Any:
    return _hamming("hann_window", n, periodic, 0.5, 0.5, kw)


def hamming(
    n: int, periodic: bool = True, alpha: float = 0.54, beta: float = 0.46, **kw: Any
) -> Any:
    return _hamming("hamming_window", n, periodic, alpha, beta, kw)


def blackman(n: int, periodic: bool = True, **kw: Any) -> Any:
    got = _points("blackman_window", n, periodic, kw)
    if not isinstance(got, tuple):
        return got
    k, length = got
    a = aten.rsub.Scalar(aten.mul.Scalar(_cos(k, 2, length), 0.5), 0.42)
    return aten.add.Tensor(a, aten.mul.Scalar(_cos(k, 4, length), 0.08))


def bartlett(n: int, periodic: bool = True, **kw: Any) -> Any:
    got = _points("bartlett_window", n, periodic, kw)
    if not isinstance(got, tuple):
        return got
    k, length = got
    ramp = aten.sub.Scalar(aten.mul.Scalar(k, 2.0 / (length - 1)), 1)
    return aten.rsub.Scalar(aten.abs.default(ramp), 1)


def kaiser(n: int, periodic: bool = True, beta: float = 12.0, **kw: Any) -> Any:
    got = _points("kaiser_window", n, periodic, kw)
    if not isinstance(got, tuple):
        return got
    k, length = got
    half = (length - 1) / 2
    ratio = aten.div.Scalar(aten.sub.Scalar(k, half), half)
    inner = aten.sqrt.default(aten.rsub.Scalar(aten.mul.Tensor(ratio, ratio), 1))
    return aten.div.Scalar(aten.i0.default(aten.mul.Scalar(inner, beta)), _i0(beta))


def _i0(x: float) -> float:
    """The modified Bessel function of order 0 (its power series, exact to float64)."""
    total, term, k = 1.0, 1.0, 1
    while term > 1e-17 * total:
        term *= (x / (2 * k)) ** 2
        total += term
        k += 1
    return total


for _packet, _fn in (("hann_window", hann), ("hamming_window", hamming),
                     ("blackman_window", blackman), ("bartlett_window", bartlett),
                     ("kaiser_window", kaiser)):  # fmt: skip
    for _ov in getattr(aten, _packet).overloads():
        impl(getattr(getattr(aten, _packet), _ov), CEA, _fn)
