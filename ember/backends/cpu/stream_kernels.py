"""Compiled transforms of PyTorch's raw 32-bit Mersenne Twister outputs into its values, one
pass each (NOTE [torch random streams]): float32 and float64 uniforms, float64 normals of
16 or more values, and integers in a range below 2^32. Imported on first use (NOTE [numba on
first use]).
"""

from __future__ import annotations

import math

import numba
import numpy as np

from ember.backends.cpu.avx2_normal import fma64

_LOW24 = np.uint32(0xFFFFFF)
_LOW53 = np.uint64(2**53 - 1)
_S24 = np.float32(2.0**-24)
_S53 = 2.0**-53


@numba.njit(cache=True)
def u24(raw: np.ndarray) -> np.ndarray:  # pragma: no cover - compiled
    """float32 uniforms: the low 24 bits of each output over 2^24."""
    out = np.empty(raw.size, np.float32)
    for i in range(raw.size):
        out[i] = np.float32(raw[i] & _LOW24) * _S24
    return out


@numba.njit(cache=True)
def u53(raw: np.ndarray) -> np.ndarray:  # pragma: no cover - compiled
    """float64 uniforms: the low 53 bits of ``(first << 32) | second`` over 2^53."""
    n = raw.size // 2
    out = np.empty(n, np.float64)
    for i in range(n):
        v = (np.uint64(raw[2 * i]) << np.uint64(32)) | np.uint64(raw[2 * i + 1])
        out[i] = np.float64(v & _LOW53) * _S53
    return out


@numba.njit(cache=True)
def normal64_blocks(
    raw: np.ndarray, out: np.ndarray, mean: float, std: float
) -> None:  # pragma: no cover
    """PyTorch's ``normal_fill_16`` on doubles for whole blocks of 16 (``raw`` holds two
    outputs per value): ``u1 = 1 - u[j]``, ``u2 = u[j + 8]``, ``r = sqrt(-2 log u1)``,
    ``theta = 2 pi u2``, ``fma(r cos theta, std, mean)`` and ``fma(r sin theta, std, mean)``
    (the C library's log/cos/sin, as numba's ``math`` calls them)."""
    u = u53(raw)
    two_pi = 2.0 * math.pi
    for start in range(0, out.size - 15, 16):
        for j in range(start, start + 8):
            radius = math.sqrt(-2.0 * math.log(1.0 - u[j]))
            theta = two_pi * u[j + 8]
            out[j] = fma64(radius * math.cos(theta), std, mean)
            out[j + 8] = fma64(radius * math.sin(theta), std, mean)


@numba.njit(cache=True)
def mod_add(raw: np.ndarray, span: np.uint32, low: np.int64) -> np.ndarray:  # pragma: no cover
    """``low + raw % span`` as int64 (a range below 2^32)."""
    out = np.empty(raw.size, np.int64)
    for i in range(raw.size):
        out[i] = low + np.int64(raw[i] % span)
    return out
