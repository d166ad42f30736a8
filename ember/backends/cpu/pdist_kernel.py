"""A compiled ``_pdist_forward`` for p = 1 and 2 (NOTE [pdist] in
``ember/ops/native/distance.py``): one pass over the row pairs ``i < j``, without the
``(n(n-1)/2, m)`` array of differences the NumPy form builds. Imported on first use (NOTE
[numba on first use]).
"""

from __future__ import annotations

import math

import numba
import numpy as np


@numba.njit(cache=True, fastmath={"reassoc"})
def pdist_p1_p2(x: np.ndarray, p2: bool) -> np.ndarray:  # pragma: no cover - compiled
    """Distances of each pair of rows ``i < j``, in row-major pair order, summed in float64
    (reassociated: the sums may be split into lanes; NaN and inf keep their meaning)."""
    n, m = x.shape
    out = np.empty(n * (n - 1) // 2, x.dtype)
    k = 0
    for i in range(n):
        for j in range(i + 1, n):
            acc = 0.0
            if p2:
                for c in range(m):
                    d = np.float64(x[i, c]) - np.float64(x[j, c])
                    acc += d * d
                out[k] = math.sqrt(acc)
            else:
                for c in range(m):
                    acc += abs(np.float64(x[i, c]) - np.float64(x[j, c]))
                out[k] = acc
            k += 1
    return out
