"""erf in one compiled pass: the C library's ``erf`` (through numba's ``math.erf``) in
double precision for float32 and float64 values, the result stored in the input's dtype.
Imported on first use (NOTE [numba on first use]).
"""

from __future__ import annotations

import math

import numba
import numpy as np


@numba.njit(cache=True)
def erf(x: np.ndarray, out: np.ndarray) -> None:  # pragma: no cover - compiled
    """``out[i] = erf(x[i])`` for 1-d contiguous ``x`` and ``out`` of one dtype."""
    for i in range(x.size):
        out[i] = math.erf(np.float64(x[i]))


@numba.njit(cache=True)
def gelu(x: np.ndarray, out: np.ndarray) -> None:  # pragma: no cover - compiled
    """``out[i] = x[i] / 2 * (1 + erf(x[i] / sqrt(2)))`` in double precision, one pass."""
    for i in range(x.size):
        v = np.float64(x[i])
        out[i] = 0.5 * v * (1.0 + math.erf(v * 0.7071067811865476))
