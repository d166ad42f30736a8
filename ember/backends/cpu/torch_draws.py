"""PyTorch's CPU draws beyond uniform and normal, from an ``ember.Generator``'s Mersenne
Twister, vectorised: Bernoulli, exponential, geometric, Cauchy, log-normal and multinomial.

# NOTE [torch draws]
Each of PyTorch's serial CPU kernels draws one value per element, in the tensor's memory
order, and transforms it; ember draws the same raw outputs at once and applies the same
transform in double precision (NOTE [libm rounding] for the C library's functions), then
converts to the dtype:

- ``random_(from, to)``/``randint``: ``torch_stream.random_int``; ``random_()`` is the same
  with ``to`` one past the dtype's largest integer (2^mantissa + 1 for floating dtypes).
- ``bernoulli_(p)`` with a float ``p``: a double uniform (53 bits of ``random64()``) ``< p``;
  with a tensor ``p``: a double uniform when ``p`` is float64, else a float uniform (24 bits
  of ``random()``) compared with ``p`` in float. (On Intel CPUs PyTorch's float-``p`` kernel
  uses MKL's own generator instead, seeded with one ``random()``; ember follows the kernel
  PyTorch uses on every other CPU.)
- ``exponential_(l)``: ``-1 / l * log1p(-u)``; ``geometric_(p)``: ``ceil(log(u) / log1p(-p))``;
  ``cauchy_(m, s)``: ``fma(s, tan(pi * (u - 0.5)), m)``; ``u`` a double uniform each.
- ``log_normal_(m, s)``: ``exp`` of the scalar ``normal_distribution<double>`` (pairs of
  uniforms, the second value cached in the generator), whatever the size.
- ``multinomial``: without replacement or for one sample, ``argmax``/``topk`` of
  ``p / q`` with ``q = exponential_()`` in ``p``'s dtype; with replacement, per row the
  running sum of ``p`` in its dtype divided by the total, the last entry set to 1, and for
  each sample the first entry ``>= u`` (``u`` a double uniform).
"""

from __future__ import annotations

import numpy as np

from ember import dtypes
from ember.backends.cpu.torch_stream import (
    _jit_on_first_call,
    _libm,
    fma,
    normal_scalar,
    unit_uniform,
)
from ember.random import Generator

_F64 = dtypes.float64


def bernoulli_scalar(gen: Generator, n: int, p: float) -> np.ndarray:
    """``n`` draws of ``bernoulli_(p)`` for a float ``p`` (bool)."""
    return unit_uniform(gen, n, _F64) < p


def bernoulli_tensor(gen: Generator, p: np.ndarray) -> np.ndarray:
    """One draw per element of the probabilities ``p`` (C order; bool)."""
    if p.dtype == np.float64:
        return unit_uniform(gen, p.size, _F64).reshape(p.shape) < p
    u = unit_uniform(gen, p.size, dtypes.float32).reshape(p.shape)
    return u < p.astype(np.float32)


def exponential(gen: Generator, n: int, lambd: float) -> np.ndarray:
    """``n`` values of ``exponential_(lambd)`` in float64."""
    u = unit_uniform(gen, n, _F64)
    return (-1.0 / lambd) * _libm(np.log1p, -u)


def geometric(gen: Generator, n: int, p: float) -> np.ndarray:
    """``n`` values of ``geometric_(p)`` in float64."""
    u = unit_uniform(gen, n, _F64)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.ceil(_libm(np.log, u) / _libm(np.log1p, np.array([-p]))[0])


def cauchy(gen: Generator, n: int, median: float, sigma: float) -> np.ndarray:
    """``n`` values of ``cauchy_(median, sigma)`` in float64."""
    t = _libm(np.tan, np.pi * (unit_uniform(gen, n, _F64) - 0.5))
    return fma(np.full(n, float(sigma)), t, float(median))


def log_normal(gen: Generator, n: int, mean: float, std: float) -> np.ndarray:
    """``n`` values of ``log_normal_(mean, std)`` in float64."""
    with np.errstate(over="ignore"):
        return _libm(np.exp, normal_scalar(gen, n, mean, std))


def multinomial(gen: Generator, p: np.ndarray, k: int, replacement: bool) -> np.ndarray:
    """``k`` category indices per row of the 2-d weights ``p`` (int64, rows x k)."""
    rows, cats = p.shape
    if not replacement or k == 1:
        work = p.dtype if p.dtype in (np.float32, np.float64) else np.dtype(np.float32)
        q = exponential(gen, p.size, 1.0).astype(work).reshape(p.shape)
        with np.errstate(divide="ignore", invalid="ignore"):
            keys = (p.astype(work) / q).astype(work)
        if k == 1:
            return np.argmax(keys, axis=1).reshape(rows, 1).astype(np.int64)
        return np.argsort(-keys, axis=1, kind="stable")[:, :k].astype(np.int64)
    work = p.dtype if p.dtype == np.float64 else np.dtype(np.float32)
    cdf = np.cumsum(p.astype(work), axis=1, dtype=work)
    total = cdf[:, -1:].copy()
    cdf = np.where(total > 0, cdf / total, cdf).astype(work)
    cdf[:, -1] = 1
    u = unit_uniform(gen, rows * k, _F64).reshape(rows, k)
    return _first_at_least(cdf.astype(np.float64), u)


@_jit_on_first_call
def _first_at_least(cdf: np.ndarray, u: np.ndarray) -> np.ndarray:  # pragma: no cover
    """Per row ``r``, the first index ``i`` with ``cdf[r, i] >= u[r, j]`` for each ``j``
    (PyTorch's binary search)."""
    rows, k = u.shape
    out = np.empty((rows, k), np.int64)
    for r in range(rows):
        for j in range(k):
            lo, hi = 0, cdf.shape[1]
            while hi > lo:
                mid = lo + (hi - lo) // 2
                if cdf[r, mid] < u[r, j]:
                    lo = mid + 1
                else:
                    hi = mid
            out[r, j] = lo
    return out
