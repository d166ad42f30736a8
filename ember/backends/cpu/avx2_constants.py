"""The float32 constants of PyTorch's AVX2 ``log256_ps``/``sincos256_ps`` (Cephes' polynomial
coefficients and range-reduction splits, ``avx_mathfun.h``) and of its Box-Muller kernel
(NOTE [avx2 normal])."""

from __future__ import annotations

import numpy as np

f32 = np.float32

_LOG_P = tuple(
    f32(c)
    for c in (
        7.0376836292e-2,
        -1.1514610310e-1,
        1.1676998740e-1,
        -1.2420140846e-1,
        1.4249322787e-1,
        -1.6668057665e-1,
        2.0000714765e-1,
        -2.4999993993e-1,
        3.3333331174e-1,
    )
)
P0, P1, P2, P3, P4, P5, P6, P7, P8 = _LOG_P
LOG_Q1, LOG_Q2 = f32(-2.12194440e-4), f32(0.693359375)
SQRTHF = f32(0.707106781186547524)
DP1, DP2, DP3 = f32(-0.78515625), f32(-2.4187564849853515625e-4), f32(-3.77489497744594108e-8)
S0, S1, S2 = f32(-1.9515295891e-4), f32(8.3321608736e-3), f32(-1.6666654611e-1)
C0, C1 = f32(2.443315711809948e-005), f32(-1.388731625493765e-003)
C2 = f32(4.166664568298827e-002)
FOPI = f32(1.27323954473516)
TWO_PI = f32(2.0 * np.pi)
ONE, HALF, ZERO, MINUS_TWO = f32(1.0), f32(0.5), f32(0.0), f32(-2.0)
MIN_NORM = f32(np.array(0x00800000, np.int32).view(np.float32))
