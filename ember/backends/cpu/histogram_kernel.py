"""``histogram``'s count over equal-width bins in one compiled pass.

# NOTE [histogram loop]
NumPy needs a pass per step for equal-width bins: the in-range mask, the compress, the
scaled position, the cast, the clip, two corrections against the edges and ``bincount``
(six arrays of the input's size). This loop takes each value once: skip it outside
``[edges[0], edges[-1]]`` (NaN too), estimate its bin as ``(v - left) * scale`` in the
input's dtype, then move to the bin whose edges hold it (PyTorch's kernel likewise checks
the estimate against the edges), the last edge counting in the last bin. Counts and weights
are summed in float64, as ``bincount`` sums them. Imported on first use (NOTE [numba on
first use]).
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True)
def count(
    x: np.ndarray, weight: np.ndarray, weighted: bool, edges: np.ndarray, left: float, scale: float
) -> np.ndarray:  # pragma: no cover - compiled
    """The (weighted) count of the flat ``x`` in each equal-width bin between ``edges``
    (``left`` and ``scale = bins / (right - left)`` in ``x``'s dtype)."""
    bins = edges.shape[0] - 1
    lo, hi = edges[0], edges[bins]
    top = bins - 1
    hist = np.zeros(bins, np.float64)
    for i in range(x.shape[0]):
        v = x[i]
        if not (v >= lo and v <= hi):
            continue
        t = (v - left) * scale
        pos = top if t >= top else (0 if t <= 0 else int(t))
        while pos > 0 and edges[pos] > v:
            pos -= 1
        while pos < top and edges[pos + 1] <= v:
            pos += 1
        hist[pos] += weight[i] if weighted else 1.0
    return hist
