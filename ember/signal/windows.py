"""``torch.signal.windows``: the window functions, composed of ember ops as PyTorch composes
them (so a dispatch mode sees ops, and ``requires_grad`` gives a leaf).

Each takes the window length ``M``; ``sym=True`` gives a symmetric window (for filter
design), ``sym=False`` a periodic one (the first ``M`` points of a symmetric window of
``M + 1``, for spectral analysis). ``M == 0`` gives an empty window and ``M == 1`` a one.
Only float32 and float64 windows exist, as in PyTorch.

>>> ember.signal.windows.gaussian(4, std=2.0)
tensor([0.7548, 0.9692, 0.9692, 0.7548])
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import ember
from ember.dtypes import dtype as _dtype

__all__ = [
    "bartlett", "blackman", "cosine", "exponential", "gaussian", "general_cosine",
    "general_hamming", "hamming", "hann", "kaiser", "nuttall",
]  # fmt: skip


def _check(name: str, M: int, dtype: _dtype | None, layout: Any) -> _dtype:
    if M < 0:
        raise ValueError(f"{name} requires non-negative window length, got M={M}")
    if layout is not None and layout is not ember.strided:
        raise ValueError(f"{name} is implemented for strided tensors only, got: {layout}")
    d = ember.get_default_dtype() if dtype is None else dtype
    if d not in (ember.float32, ember.float64):
        raise ValueError(f"{name} expects float32 or float64 dtypes, got: {d}")
    return d


def _window(
    name: str, M: int, sym: bool, dtype: _dtype | None, layout: Any, device: Any,
    requires_grad: bool, body: Any,
) -> ember.Tensor:  # fmt: skip
    """``body(n, N)`` over the points ``n = 0 .. N-1`` of the symmetric window of ``N``
    points (``M``, or ``M + 1`` for a periodic one, cut back to ``M``)."""
    d = _check(name, M, dtype, layout)
    opts = {"dtype": d, "device": device}
    if M == 0:
        return ember.empty((0,), requires_grad=requires_grad, **opts)
    if M == 1:
        return ember.ones((1,), requires_grad=requires_grad, **opts)
    n_points = M if sym else M + 1
    with ember.no_grad():
        w = body(ember.arange(n_points, **opts), n_points)[:M].contiguous()
    return w.requires_grad_(requires_grad)


def general_cosine(
    M: int, *, a: Iterable[float], sym: bool = True, dtype: _dtype | None = None,
    layout: Any = None, device: Any = None, requires_grad: bool = False,
) -> ember.Tensor:  # fmt: skip
    """``sum_k (-1)^k a_k cos(2 pi k n / (N - 1))``.

    >>> ember.signal.windows.general_cosine(3, a=[0.5, 0.5])
    tensor([0., 1., 0.])
    """
    coeffs = list(a)
    if not coeffs:
        raise ValueError("general_cosine: coefficients a must be a non-empty iterable")

    def body(n: ember.Tensor, N: int) -> ember.Tensor:
        phase = n * (2 * math.pi / (N - 1))
        w = ember.zeros_like(n)
        for k, c in enumerate(coeffs):
            w = w + (c if k % 2 == 0 else -c) * ember.cos(phase * k)
        return w

    return _window("general_cosine", M, sym, dtype, layout, device, requires_grad, body)


def general_hamming(
    M: int, *, alpha: float = 0.54, sym: bool = True, dtype: _dtype | None = None,
    layout: Any = None, device: Any = None, requires_grad: bool = False,
) -> ember.Tensor:  # fmt: skip
    """``alpha - (1 - alpha) cos(2 pi n / (N - 1))``."""
    return general_cosine(M, a=[alpha, 1.0 - alpha], sym=sym, dtype=dtype, layout=layout,
                          device=device, requires_grad=requires_grad)  # fmt: skip


def hann(M: int, *, sym: bool = True, **kw: Any) -> ember.Tensor:
    """The Hann window, ``general_hamming`` with ``alpha = 0.5``."""
    return general_hamming(M, alpha=0.5, sym=sym, **kw)


def hamming(M: int, *, sym: bool = True, **kw: Any) -> ember.Tensor:
    """The Hamming window, ``general_hamming`` with ``alpha = 0.54``."""
    return general_hamming(M, sym=sym, **kw)


def blackman(M: int, *, sym: bool = True, **kw: Any) -> ember.Tensor:
    """The Blackman window, ``general_cosine`` with ``a = [0.42, 0.5, 0.08]``."""
    return general_cosine(M, a=[0.42, 0.5, 0.08], sym=sym, **kw)


def nuttall(M: int, *, sym: bool = True, **kw: Any) -> ember.Tensor:
    """The minimum 4-term Blackman-Harris window of Nuttall."""
    return general_cosine(M, a=[0.3635819, 0.4891775, 0.1365995, 0.0106411], sym=sym, **kw)


def bartlett(
    M: int, *, sym: bool = True, dtype: _dtype | None = None, layout: Any = None,
    device: Any = None, requires_grad: bool = False,
) -> ember.Tensor:  # fmt: skip
    """The triangular window ``1 - |2 n / (N - 1) - 1|``."""

    def body(n: ember.Tensor, N: int) -> ember.Tensor:
        return 1 - ember.abs(n * (2.0 / (N - 1)) - 1)

    return _window("bartlett", M, sym, dtype, layout, device, requires_grad, body)


def cosine(
    M: int, *, sym: bool = True, dtype: _dtype | None = None, layout: Any = None,
    device: Any = None, requires_grad: bool = False,
) -> ember.Tensor:  # fmt: skip
    """The sine window ``sin(pi (n + 1/2) / N)``."""

    def body(n: ember.Tensor, N: int) -> ember.Tensor:
        return ember.sin((n + 0.5) * (math.pi / N))

    return _window("cosine", M, sym, dtype, layout, device, requires_grad, body)


def exponential(
    M: int, *, center: float | None = None, tau: float = 1.0, sym: bool = True,
    dtype: _dtype | None = None, layout: Any = None, device: Any = None,
    requires_grad: bool = False,
) -> ember.Tensor:  # fmt: skip
    """``exp(-|n - center| / tau)``, centred by default."""
    if sym and center is not None:
        raise ValueError("exponential: center must be None for symmetric windows")
    if tau <= 0:
        raise ValueError(f"exponential: tau must be positive, got: {tau} instead.")

    def body(n: ember.Tensor, N: int) -> ember.Tensor:
        c = (N - 1) / 2 if center is None else center
        return ember.exp(-ember.abs(n - c) / tau)

    return _window("exponential", M, sym, dtype, layout, device, requires_grad, body)


def gaussian(
    M: int, *, std: float = 1.0, sym: bool = True, dtype: _dtype | None = None,
    layout: Any = None, device: Any = None, requires_grad: bool = False,
) -> ember.Tensor:  # fmt: skip
    """``exp(-((n - (N - 1) / 2) / std)^2 / 2)``."""
    if std <= 0:
        raise ValueError(f"gaussian: standard deviation must be positive, got: {std} instead.")

    def body(n: ember.Tensor, N: int) -> ember.Tensor:
        return ember.exp(-(((n - (N - 1) / 2) / std) ** 2) / 2)

    return _window("gaussian", M, sym, dtype, layout, device, requires_grad, body)


def kaiser(
    M: int, *, beta: float = 12.0, sym: bool = True, dtype: _dtype | None = None,
    layout: Any = None, device: Any = None, requires_grad: bool = False,
) -> ember.Tensor:  # fmt: skip
    """``i0(beta sqrt(1 - ((n - h) / h)^2)) / i0(beta)``, ``h = (N - 1) / 2``."""
    if beta < 0:
        raise ValueError(f"kaiser: beta must be non-negative, got: {beta} instead.")

    def body(n: ember.Tensor, N: int) -> ember.Tensor:
        h = (N - 1) / 2
        inner = ember.clamp(1 - ((n - h) / h) ** 2, min=0)
        return ember.i0(beta * ember.sqrt(inner)) / ember.i0(ember.tensor(beta, dtype=n.dtype))

    return _window("kaiser", M, sym, dtype, layout, device, requires_grad, body)
