"""PyTorch's AVX2 float32 Box-Muller (NOTE [avx2 normal]) in NumPy, for small draws: the
same float32 operations as ``avx2_normal``'s compiled loop, without importing numba (whose
first use costs a second or more per process; NOTE [numba on first use]).

A fused multiply-add here is an exact float64 product plus the addend, rounded to odd in
float64 and then to float32: one correct float32 rounding, as the hardware's.
"""

from __future__ import annotations

import numpy as np

from ember.backends.cpu import avx2_constants as k

f32 = np.float32


def fma32(a: np.ndarray, b: np.ndarray | np.float32, c: np.ndarray | np.float32) -> np.ndarray:
    """``a * b + c`` rounded once to float32."""
    p = a.astype(np.float64) * np.float64(b) if np.ndim(b) == 0 else a * b.astype(np.float64)
    cc = np.asarray(c, np.float64)
    s = p + cc
    bv = s - p
    t = (p - (s - bv)) + (cc - bv)  # s + t == p + c exactly
    inexact = t != 0
    bits = s.view(np.int64)
    bits = bits - (inexact & ((t < 0) != (s < 0)))  # towards zero when |s| overshot
    return (bits | inexact).view(np.float64).astype(np.float32)  # round to odd, then once


def _log(x: np.ndarray) -> np.ndarray:
    b = np.maximum(x, k.MIN_NORM).view(np.int32)
    e = (((b >> 23) & 0xFF) - 0x7F).astype(np.float32) + k.ONE
    x = ((b & np.int32(~0x7F800000)) | np.int32(0x3F000000)).view(np.float32)
    small = x < k.SQRTHF
    tmp = np.where(small, x, k.ZERO)
    x = x - k.ONE
    e = e - np.where(small, k.ONE, k.ZERO)
    x = x + tmp
    z = x * x
    y = fma32(np.full_like(x, k.P0), x, k.P1)
    for p in (k.P2, k.P3, k.P4, k.P5, k.P6, k.P7, k.P8):
        y = fma32(y, x, p)
    y = y * x
    y = fma32(y, z, e * k.LOG_Q1)
    y = fma32(-z, k.HALF, y)
    return fma32(e, k.LOG_Q2, x + y)


def _sincos(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    j = ((x * k.FOPI).astype(np.int32) + np.int32(1)) & np.int32(~1)
    y = j.astype(np.float32)
    x = fma32(y, k.DP1, x)
    x = fma32(y, k.DP2, x)
    x = fma32(y, k.DP3, x)
    z = x * x
    yc = fma32(np.full_like(z, k.C0), z, k.C1)
    yc = fma32(yc, z, k.C2)
    yc = yc * z
    yc = fma32(yc, z, -(z * k.HALF))
    yc = yc + k.ONE
    ys = fma32(np.full_like(z, k.S0), z, k.S1)
    ys = fma32(ys, z, k.S2)
    ys = ys * z
    ys = fma32(ys, x, x)
    poly = (j & 2) == 0
    s = np.where(poly, ys, yc)
    c = np.where(poly, yc, ys)
    s = np.where((j & 4) != 0, -s, s)
    c = np.where(((~(j - np.int32(2))) & 4) != 0, -c, c)
    return s, c


def fill(raw: np.ndarray, mean: np.float32, std: np.float32) -> np.ndarray:
    """The transformed values of whole blocks of 16 from ``raw`` (uint32, a multiple of 16)."""
    blocks = raw.reshape(-1, 16)
    u = (blocks & np.uint32(0xFFFFFF)).astype(np.float32) * f32(2.0**-24)
    radius = np.sqrt(k.MINUS_TWO * _log(k.ONE - u[:, :8]))
    s, c = _sincos(k.TWO_PI * u[:, 8:])
    out = np.empty(blocks.shape, np.float32)
    out[:, :8] = fma32(radius * c, std, mean)
    out[:, 8:] = fma32(radius * s, std, mean)
    return out.reshape(-1)
