"""PyTorch's float32 ``normal_`` on CPU for 16 or more contiguous values, bit for bit: the
Box-Muller blocks of its AVX2 kernel, evaluated as that kernel evaluates them.

# NOTE [avx2 normal]
For a contiguous float32 tensor of 16 or more elements, PyTorch's CPU ``normal_`` fills the
tensor with float32 uniforms, then transforms blocks of 16 (``u1 = 1 - data[j]``,
``u2 = data[j + 8]`` for ``j < 8``) with ``radius = sqrt(-2 * log(u1))`` and
``theta = float(2 pi) * u2``, ``data[j] = fma(radius * cos(theta), std, mean)`` and
``data[j + 8] = fma(radius * sin(theta), std, mean)``. On x86 with AVX2 (AVX-512 machines
too: PyTorch keeps ``normal_stub`` off its AVX-512 build) ``log`` and ``sincos`` are the
float32 Cephes polynomials of ``avx_mathfun.h`` (Pommier's SSE port), not the C library's.
Compiled with FMA, GCC fuses each multiply whose only use is an add or subtract into one
fused multiply-add, in program order: the loop here computes exactly those operations, in
float32, with ``fma32`` where GCC fused (LLVM's ``fma``), and so gives PyTorch's bits. (The
scalar kernel PyTorch uses on CPUs without AVX2, e.g. ARM, calls ``std::log``/``sin``/``cos``
on floats instead; ember follows the AVX2 kernel.)
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np
from numba.core import types
from numba.extending import intrinsic

from ember.backends.cpu.avx2_constants import (
    C0,
    C1,
    C2,
    DP1,
    DP2,
    DP3,
    FOPI,
    HALF,
    LOG_Q1,
    LOG_Q2,
    MIN_NORM,
    MINUS_TWO,
    ONE,
    P0,
    P1,
    P2,
    P3,
    P4,
    P5,
    P6,
    P7,
    P8,
    S0,
    S1,
    S2,
    SQRTHF,
    TWO_PI,
    ZERO,
    f32,
)


@intrinsic
def fma32(typingctx: Any, a: Any, b: Any, c: Any) -> Any:  # pragma: no cover - compiled
    """``a * b + c`` rounded once (LLVM's ``fma`` on float32)."""
    sig = types.float32(types.float32, types.float32, types.float32)

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        return builder.fma(*args)

    return sig, codegen


@intrinsic
def fma64(typingctx: Any, a: Any, b: Any, c: Any) -> Any:  # pragma: no cover - compiled
    """``a * b + c`` rounded once (LLVM's ``fma`` on float64)."""
    sig = types.float64(types.float64, types.float64, types.float64)

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        return builder.fma(*args)

    return sig, codegen


@numba.njit(cache=True, inline="always")
def _log(x: np.float32) -> np.float32:  # pragma: no cover - compiled
    """``log256_ps`` for one lane (x in (0, 1] here, so no NaN or denormal input)."""
    b = np.float32(max(x, MIN_NORM)).view(np.int32)
    e = f32(((b >> 23) & 0xFF) - 0x7F) + ONE
    x = np.int32((b & np.int32(~0x7F800000)) | np.int32(0x3F000000)).view(np.float32)
    small = x < SQRTHF
    tmp = x if small else ZERO
    x = x - ONE
    e = e - (ONE if small else ZERO)
    x = x + tmp
    z = x * x
    y = fma32(P0, x, P1)
    y = fma32(y, x, P2)
    y = fma32(y, x, P3)
    y = fma32(y, x, P4)
    y = fma32(y, x, P5)
    y = fma32(y, x, P6)
    y = fma32(y, x, P7)
    y = fma32(y, x, P8)
    y = y * x
    y = fma32(y, z, e * LOG_Q1)
    y = fma32(-z, HALF, y)
    return fma32(e, LOG_Q2, x + y)


@numba.njit(cache=True, inline="always")
def _sincos(x: np.float32) -> tuple[np.float32, np.float32]:  # pragma: no cover - compiled
    """``sincos256_ps`` for one lane (x in [0, 2 pi) here)."""
    j = (np.int32(x * FOPI) + np.int32(1)) & np.int32(~1)
    y = f32(j)
    x = fma32(y, DP1, x)
    x = fma32(y, DP2, x)
    x = fma32(y, DP3, x)
    z = x * x
    yc = fma32(C0, z, C1)
    yc = fma32(yc, z, C2)
    yc = yc * z
    yc = fma32(yc, z, -(z * HALF))
    yc = yc + ONE
    ys = fma32(S0, z, S1)
    ys = fma32(ys, z, S2)
    ys = ys * z
    ys = fma32(ys, x, x)
    poly = (j & 2) == 0
    s = ys if poly else yc
    c = yc if poly else ys
    s = -s if (j & 4) != 0 else s
    c = -c if ((~(j - np.int32(2))) & 4) != 0 else c
    return s, c


@numba.njit(cache=True)
def _lanes(
    r1: np.ndarray, r2: np.ndarray, c: np.ndarray, s: np.ndarray, mean: np.float32, std: np.float32
) -> None:  # pragma: no cover - compiled
    """The eight lanes of every block at once: ``r1``/``r2`` the raw outputs behind
    ``u1``/``u2`` (contiguous), ``c``/``s`` the cos and sin results."""
    scale = f32(2.0**-24)
    mask = np.uint32(0xFFFFFF)
    for i in range(r1.size):
        u1 = ONE - f32(r1[i] & mask) * scale
        u2 = f32(r2[i] & mask) * scale
        radius = np.sqrt(MINUS_TWO * _log(u1))
        sn, cs = _sincos(TWO_PI * u2)
        c[i] = fma32(radius * cs, std, mean)
        s[i] = fma32(radius * sn, std, mean)


def fill(raw: np.ndarray, mean: np.float32, std: np.float32) -> np.ndarray:
    """The transformed values of whole blocks of 16 from ``raw`` (uint32, a multiple of 16)."""
    blocks = raw.reshape(-1, 16)
    r1 = np.ascontiguousarray(blocks[:, :8])
    r2 = np.ascontiguousarray(blocks[:, 8:])
    out = np.empty(blocks.shape, np.float32)
    c = np.empty(r1.shape, np.float32)
    s = np.empty(r1.shape, np.float32)
    _lanes(r1.reshape(-1), r2.reshape(-1), c.reshape(-1), s.reshape(-1), mean, std)
    out[:, :8] = c
    out[:, 8:] = s
    return out.reshape(-1)
