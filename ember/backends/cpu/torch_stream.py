"""PyTorch's CPU random values from an ``ember.Generator``'s Mersenne Twister, vectorised.

# NOTE [torch random streams]
PyTorch's CPU kernels draw element by element from a 32-bit MT19937; ember draws the same
raw outputs in one call (``Generator._raw``) and applies PyTorch's transforms to whole
arrays, in PyTorch's order:

- uniform: a float32/half/bfloat16 value takes the low 24/11/8 bits of one output, scaled by
  2^-bits; float64 takes the low 53 bits of ``(first << 32) | second`` from two outputs.
  ``x * (to - from) + from`` is computed in double for float32 and float64 (``from``/``to``
  first rounded to the dtype), which is what PyTorch's results show.
- normal, size >= 16 and contiguous: fill with uniforms, then Box-Muller on blocks of 16
  (``u1 = 1 - data[j]``, ``u2 = data[j + 8]``, cos into ``j`` and sin into ``j + 8``); when
  the size is not a multiple of 16, 16 fresh uniforms replace the last 16 values and are
  transformed again (float64 here; float32 in ``avx2_normal``, NOTE [avx2 normal]).
- normal, size < 16: per element, a cached second value first; else two double uniforms
  ``u1, u2``, ``r = sqrt(-2 log1p(-u2))``, ``theta = 2 pi u1``: ``r cos(theta)`` is returned
  and ``r sin(theta)`` cached in the generator (it survives into the next call).
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from typing import Any

import numpy as np

from ember import dtypes
from ember.random import Generator


def _jit_on_first_call(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` compiled by numba when first called, not when ember is imported.

    # NOTE [numba on first use]
    Importing numba costs about 0.13 s, a third of ``import ember``; only the few kernels
    that reproduce PyTorch's streams (``log`` as the C library rounds it, ``randperm``'s swaps)
    need it, so the import and the compile (or numba's disk-cache load) wait for their first
    call.
    """
    compiled: list[Callable[..., Any]] = []

    def call(*args: Any) -> Any:
        if not compiled:
            import numba  # deferred: NOTE [numba on first use]

            compiled.append(numba.njit(cache=True)(fn))
        return compiled[0](*args)

    call.__name__ = fn.__name__
    call.__doc__ = fn.__doc__
    return call


_BITS = {"float16": 11, "bfloat16": 8, "float32": 24, "float64": 53}
FUSED = 4096  # draws from this size on transform in one compiled pass (stream_kernels)
_NUMPY_NORMALS = [0]  # small float32 normal draws made in NumPy so far (see normal())


def _kernels() -> Any:
    from ember.backends.cpu import stream_kernels  # numba's: NOTE [numba on first use]

    return stream_kernels


def unit_uniform(gen: Generator, n: int, d: dtypes.dtype) -> np.ndarray:
    """``n`` PyTorch uniforms in [0, 1) for the real dtype ``d``, as float64."""
    bits = _BITS.get(d.name, 24)
    if bits == 53 and n >= FUSED:
        return _kernels().u53(gen._raw(2 * n))
    if bits == 53:
        return (gen._raw64(n) & np.uint64(2**53 - 1)).astype(np.float64) * 2.0**-53
    r = gen._raw(n) & np.uint32(2**bits - 1)
    return r.astype(np.float64) * 2.0**-bits


def unit_float32(gen: Generator, n: int) -> np.ndarray:
    """``n`` float32 PyTorch uniforms in [0, 1) (24 bits each, exact in float32)."""
    if n >= FUSED:
        return _kernels().u24(gen._raw(n))
    return (gen._raw(n) & np.uint32(2**24 - 1)).astype(np.float32) * np.float32(2.0**-24)


def _split(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Veltkamp's split of doubles into two 26-bit halves (``hi + lo == a`` exactly)."""
    t = a * 134217729.0  # 2^27 + 1
    hi = t - (t - a)
    return hi, a - hi


def fma(a: np.ndarray, b: np.ndarray | float, c: np.ndarray | float) -> np.ndarray:
    """``a * b + c`` with one rounding for float32 (an exact float64 product) and, up to the
    rare double-rounding tie, for float64 (Dekker's exact product and Knuth's two-sum): the
    fused multiply-add PyTorch's compiled kernels use."""
    if a.dtype == np.float32:
        wide = a.astype(np.float64) * np.float64(np.float32(b)) + np.float64(np.float32(c))
        return wide.astype(np.float32)
    b = np.broadcast_to(np.asarray(b, np.float64), a.shape)
    c = np.broadcast_to(np.asarray(c, np.float64), a.shape)
    p = a * b
    ah, al = _split(a)
    bh, bl = _split(b)
    err = ((ah * bh - p) + ah * bl + al * bh) + al * bl  # p + err == a * b exactly
    s = p + c
    bv = s - p
    t = (p - (s - bv)) + (c - bv)  # s + t == p + c exactly
    return s + (t + err)


def uniform(gen: Generator, n: int, d: dtypes.dtype, low: float, high: float) -> np.ndarray:
    """``n`` values of PyTorch's ``uniform_(low, high)`` in ``d`` (flat):
    ``fma(x, to - from, from)`` with ``from``/``to`` and their difference in ``d``."""
    if (low, high) == (0.0, 1.0):
        if d.np == np.float32:
            return unit_float32(gen, n)
        return unit_uniform(gen, n, d).astype(d.np)
    x = unit_uniform(gen, n, d)
    work = np.float64 if d.np == np.float64 else np.float32
    lo = work(low)
    span = work(high) - lo
    with np.errstate(all="ignore"):
        return fma(x.astype(work), span, lo).astype(d.np)


@_jit_on_first_call
def _c_call(x: np.ndarray, which: int) -> np.ndarray:  # pragma: no cover - compiled
    out = np.empty_like(x)
    for i in range(x.size):
        v = x[i]
        if which == 0:
            out[i] = math.log(v)
        elif which == 1:
            out[i] = math.log1p(v)
        elif which == 2:
            out[i] = math.tan(v)
        else:
            out[i] = math.exp(v)
    return out


_C_FUNCS = {np.log: 0, np.log1p: 1, np.tan: 2, np.exp: 3}


def _libm(f: np.ufunc, x: np.ndarray) -> np.ndarray:
    """``f`` on float64 values as the C library computes it.

    # NOTE [libm rounding]
    PyTorch's kernels call the C library's ``log``/``log1p``/``sin``/``cos``/``tan``/``exp``.
    NumPy's own float64 ``log`` (SIMD) differs from it in the last bit for about one value in
    a thousand, so ``log``, ``log1p``, ``tan`` and ``exp`` run in a numba loop over
    ``math``'s, which call the C library; NumPy's ``sin``/``cos`` agree with it.
    """
    if x.dtype != np.float64 or f not in _C_FUNCS:
        return f(x)
    flat = np.ascontiguousarray(x).reshape(-1)
    return _c_call(flat, _C_FUNCS[f]).reshape(x.shape)


def _box_muller_16(data: np.ndarray, mean: float, std: float) -> np.ndarray:
    """Box-Muller on rows of 16 uniforms (PyTorch's ``normal_fill_16``), in ``data``'s dtype."""
    t = data.dtype.type
    u1 = t(1) - data[:, :8]
    u2 = data[:, 8:]
    radius = np.sqrt(t(-2) * _libm(np.log, u1))
    theta = (2.0 * np.pi * u2).astype(data.dtype)
    out = np.empty_like(data)
    out[:, :8] = fma(radius * _libm(np.cos, theta), t(std), t(mean))
    out[:, 8:] = fma(radius * _libm(np.sin, theta), t(std), t(mean))
    return out


def normal(gen: Generator, n: int, d: dtypes.dtype, mean: float, std: float) -> np.ndarray:
    """``n`` values of PyTorch's ``normal_(mean, std)`` on a contiguous tensor of ``d``."""
    if n >= 16 and d.np == np.float32:  # NOTE [avx2 normal]
        raw = gen._raw(n + (16 if n % 16 else 0))
        m, s = np.float32(mean), np.float32(std)
        if n < FUSED and "numba" not in sys.modules and _NUMPY_NORMALS[0] < 16:
            # the first few small draws of a process in NumPy (0.5 ms each for 1000 values),
            # not worth numba's start (a second or more); later ones compiled (15 us)
            _NUMPY_NORMALS[0] += 1
            from ember.backends.cpu import avx2_normal_numpy as avx2_normal  # (numba-free)
        else:
            from ember.backends.cpu import avx2_normal  # type: ignore[no-redef]
        full = n - n % 16
        out = np.empty(n, np.float32)
        out[:full] = avx2_normal.fill(raw[:full], m, s)
        if n % 16:
            out[n - 16 :] = avx2_normal.fill(raw[n:], m, s)
        return out
    if n >= 16 and d.np == np.float64:  # (the C library's log needs numba here anyway)
        raw = gen._raw(2 * (n + (16 if n % 16 else 0)))
        out = np.empty(n, np.float64)
        _kernels().normal64_blocks(raw[: 2 * n], out, float(mean), float(std))
        if n % 16:
            tail = np.empty(16, np.float64)
            _kernels().normal64_blocks(raw[2 * n :], tail, float(mean), float(std))
            out[n - 16 :] = tail
        return out
    if n >= 16:
        work = np.float32 if d.itemsize < 4 else np.float64
        data = unit_uniform(gen, n, d).astype(work)
        full = n - n % 16
        with np.errstate(all="ignore"):
            data[:full] = _box_muller_16(data[:full].reshape(-1, 16), mean, std).reshape(-1)
            if n % 16:
                extra = unit_uniform(gen, 16, d).astype(work).reshape(1, 16)
                data[n - 16 :] = _box_muller_16(extra, mean, std).reshape(-1)
        return data.astype(d.np)
    return normal_scalar(gen, n, mean, std).astype(d.np)


def normal_scalar(gen: Generator, n: int, mean: float, std: float) -> np.ndarray:
    """``n`` draws of PyTorch's scalar ``normal_distribution<double>`` (float64): the
    generator's cached second value first, then pairs of double uniforms."""
    out = np.empty(n, np.float64)
    start = 0
    if n and gen._next_double is not None:
        out[0] = fma(np.array([gen._next_double]), std, mean)[0]
        gen._next_double = None
        start = 1
    m = n - start
    if m:
        pairs = (m + 1) // 2
        u = unit_uniform(gen, 2 * pairs, dtypes.float64).reshape(pairs, 2)
        with np.errstate(all="ignore"):
            r = np.sqrt(-2.0 * _libm(np.log1p, -u[:, 1]))
            theta = 2.0 * np.pi * u[:, 0]
            cos, sin = _libm(np.cos, theta), _libm(np.sin, theta)
            z = np.stack([r * cos, r * sin], axis=1).reshape(-1)
        out[start:] = fma(z[:m], std, mean)
        if m % 2:
            gen._next_double = float(z[-1])
    return out


@_jit_on_first_call
def _swaps(raw: np.ndarray, n: int) -> np.ndarray:  # pragma: no cover - compiled
    out = np.arange(n)
    for i in range(n - 1):
        z = i + np.int64(raw[i] % np.uint64(n - i))
        out[i], out[z] = out[z], out[i]
    return out


def randperm(gen: Generator, n: int) -> np.ndarray:
    """PyTorch's ``randperm(n)`` on CPU: a forward Fisher-Yates shuffle, swapping ``i`` with
    ``i + random() % (n - i)`` (the swaps run in a numba loop)."""
    return _swaps(gen._raw(max(n - 1, 0)), n)


def random_int(gen: Generator, n: int, low: int, high: int, wide: int = 2**28) -> np.ndarray:
    """``n`` PyTorch integers in ``[low, high)`` (``random_``, ``random_(from, to)``,
    ``randint``) as int64: ``low + v % (high - low)``, ``v`` one 32-bit output when the
    range is below ``wide``, otherwise one 64-bit draw (two outputs, the first the high
    word): PyTorch's ``random_(from, to)`` and ``randint`` go wide from 2^28 (keeping the
    modulo's skew small), its ``random_()`` from 2^32; a range of 2^64 takes the draw as
    it is (``uniform_int_full_range``). Arithmetic wraps modulo 2^64 (the result lies in
    ``[low, high)``)."""
    span = high - low
    if span < wide and n >= FUSED:
        return _kernels().mod_add(gen._raw(n), np.uint32(span), np.int64(low))
    if span < wide:
        v = gen._raw(n)
    else:
        r = gen._raw(2 * n).reshape(n, 2)
        v = (r[:, 0] << np.uint64(32)) | r[:, 1]
    if span >= 2**64:  # the full int64 range: the draw itself (PyTorch's full-range kernel)
        return v.view(np.int64)
    v = v % np.uint64(span)
    with np.errstate(over="ignore"):
        return (v + np.uint64(low % 2**64)).view(np.int64)


# NOTE [poisson stream]
# PyTorch's CPU ``poisson`` draws element by element (in the output's order) with one
# double uniform per ``random64()`` (its low 53 bits times 2^-53): for a rate below 10 the
# product of uniforms until it falls to ``exp(-rate)`` or below, else Hoermann's
# transformed rejection (two uniforms per try). The number of draws depends on the values,
# so ember runs the same loop compiled, making each Mersenne Twister output as the loop
# asks for it (NOTE [poisson on the twister] in ``poisson_kernel.py``): the same values as
# PyTorch for the same seed and the generator left where PyTorch leaves it (up to the last
# bit of C's ``log``/``lgamma`` in the rare rejection test that compares them).


def poisson(gen: Generator, rates: np.ndarray) -> np.ndarray:
    """PyTorch's ``poisson`` draws for the float64 ``rates`` (flat, in order), as int64
    (NOTE [poisson stream])."""
    n = rates.shape[0]
    out = np.zeros(n, np.int64)
    if n == 0:
        return out
    from ember.backends.cpu import poisson_kernel  # numba's: NOTE [numba on first use]

    st = gen._mt.state["state"]
    key = np.array(st["key"], np.uint32)
    pos = poisson_kernel.draw(rates, out, key, int(st["pos"]))
    gen._mt.state = {"bit_generator": "MT19937", "state": {"key": key, "pos": pos}}
    return out
