"""A stack of outer products in one compiled pass: ``bmm`` of ``(B, n, 1)`` by ``(B, 1, m)``.

# NOTE [stacked outer products]
Per-example weight gradients (``vmap(grad(...))`` over a Linear layer) are a batch of outer
products: ``bmm`` with an inner size of 1. NumPy has no fast loop for it: its ``matmul``
calls a gemm per matrix (about 15 us each), and the broadcast ``multiply`` of
``(B, n, 1)`` by ``(B, 1, m)`` pays the iterator's cost once per row (124 us for
``64 x 128 x 64`` floats, against 21 us for this loop). Imported on first use (NOTE [numba
on first use]); each product is one multiply, so the values equal NumPy's bit for bit.
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True)
def outer(a: np.ndarray, b: np.ndarray) -> np.ndarray:  # pragma: no cover - compiled
    """``out[k, i, j] = a[k, i] * b[k, j]`` for ``a`` of shape (B, n), ``b`` of (B, m)."""
    batch, n = a.shape
    m = b.shape[1]
    out = np.empty((batch, n, m), a.dtype)
    for k in range(batch):
        for i in range(n):
            x = a[k, i]
            for j in range(m):
                out[k, i, j] = x * b[k, j]
    return out
