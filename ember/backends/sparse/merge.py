"""PyTorch's sum of two COO tensors, entry by entry (``add_out_sparse_cpu``): a two-pointer
merge of the operands' entry lists by linear index, taking the smaller key first and adding
two equal keys into one entry. For coalesced operands that is their sorted union (a
coalesced result); for uncoalesced ones it is PyTorch's very entry list, duplicates and all,
so ``_nnz()`` and ``_indices()`` match PyTorch's too. numba compiles it on first use per
value dtype (cached on disk: NOTE [numba on first use] in ``ember/backends/cpu/
torch_stream.py``)."""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True)
def merge(
    ta: np.ndarray, sa: np.ndarray, tv: np.ndarray, sv: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:  # pragma: no cover - compiled
    """Merged linear keys and values of entries ``(ta, tv)`` and ``(sa, sv)`` (values 2-d:
    ``[nnz, dense elements]``)."""
    n = ta.shape[0]
    m = sa.shape[0]
    keys = np.empty(n + m, np.int64)
    vals = np.zeros((n + m, tv.shape[1]), tv.dtype)
    i = 0
    j = 0
    r = 0
    while i < n or j < m:
        if i >= n:
            cmp = -1
        elif j >= m:
            cmp = 1
        elif ta[i] < sa[j]:
            cmp = 1
        elif ta[i] > sa[j]:
            cmp = -1
        else:
            cmp = 0
        if cmp >= 0:
            keys[r] = ta[i]
            vals[r] += tv[i]
            i += 1
        if cmp <= 0:
            keys[r] = sa[j]
            vals[r] += sv[j]
            j += 1
        r += 1
    return keys[:r], vals[:r]
