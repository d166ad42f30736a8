"""``SparseCOO``: what a sparse COO tensor holds instead of an ndarray, and the array
arithmetic every SparseCPU kernel shares (linear indices, coalescing, SciPy matrices).

# NOTE [sparse layout]
A sparse COO tensor (``layout=ember.sparse_coo``) carries the SparseCPU key alone, so every
op on it reaches a SparseCPU kernel (``ember/backends/sparse/``), a decomposition, or the
dispatcher's error naming the op and the SparseCPU backend, as PyTorch's. Its ``_edata`` is
a ``SparseCOO``: ``indices`` (an int64 array ``[sparse_dim, nnz]``), ``values`` (an array
``[nnz, *dense sizes]``), the full ``shape`` and the ``coalesced`` flag. As in PyTorch,
duplicate and unsorted indices are allowed until ``coalesce()``, which sorts them (row-major
order of the sparse dims) and sums duplicates; ``indices()``/``values()`` need a coalesced
tensor, ``_indices()``/``_values()`` do not. ``SparseCOO`` answers the attributes ``Tensor``
reads from an ndarray (shape, dtype, device), so tensor properties need no branch on the
layout; reading it as an array raises PyTorch's error. Matrix products go through SciPy's
CSR matrices; everything else is NumPy on the two arrays.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ember._array_shape import ArrayShape
from ember._layout import sparse_coo
from ember.device import CPU

INDEX = np.dtype(np.int64)


class SparseCOO(ArrayShape):
    """The indices, values, shape and coalesced flag of a sparse COO tensor."""

    __slots__ = ("indices", "values", "shape", "coalesced", "__weakref__")
    layout = sparse_coo
    device = CPU

    def __init__(
        self, indices: np.ndarray, values: np.ndarray, shape: tuple[int, ...], coalesced: bool
    ) -> None:
        self.indices = indices
        self.values = values
        self.shape = tuple(int(s) for s in shape)
        self.coalesced = bool(coalesced)

    @property
    def dtype(self) -> np.dtype[Any]:
        return self.values.dtype

    @property
    def sparse_dim(self) -> int:
        return int(self.indices.shape[0])

    @property
    def dense_dim(self) -> int:
        return self.values.ndim - 1

    @property
    def nnz(self) -> int:
        return int(self.indices.shape[1])

    @property
    def strides(self) -> tuple[int, ...]:
        return (0,) * len(self.shape)  # PyTorch's sparse tensors report zero strides

    @property
    def offset(self) -> int:
        raise RuntimeError("Cannot access storage of SparseTensorImpl")

    def materialize(self, what: str) -> np.ndarray:
        """Reading a sparse tensor as an array: PyTorch's error (``numpy()``, ``tolist()``)."""
        raise TypeError(
            f"can't convert Sparse layout tensor to numpy ({what}). Use Tensor.to_dense() first."
        )

    def __repr__(self) -> str:
        return f"SparseCOO(shape={self.shape}, nnz={self.nnz}, dtype={self.dtype})"


def linear(indices: np.ndarray, sizes: tuple[int, ...]) -> np.ndarray:
    """Row-major linear positions of ``indices`` ``[len(sizes), nnz]`` in a grid of ``sizes``."""
    lin = np.zeros(indices.shape[1], INDEX)
    for d, n in enumerate(sizes):
        lin *= n
        lin += indices[d]
    return lin


def unlinear(lin: np.ndarray, sizes: tuple[int, ...]) -> np.ndarray:
    """The inverse of ``linear``: indices ``[len(sizes), nnz]``."""
    if not sizes:
        return np.zeros((0, lin.shape[0]), INDEX)
    return np.stack(np.unravel_index(lin, sizes)).astype(INDEX, copy=False).reshape(len(sizes), -1)


def coalesce_arrays(c: SparseCOO) -> tuple[np.ndarray, np.ndarray]:
    """Indices sorted row-major with duplicates summed, and their values."""
    sizes = c.shape[: c.sparse_dim]
    if c.nnz == 0:
        return c.indices.copy(), c.values.copy()
    lin = linear(c.indices, sizes)
    order = np.argsort(lin, kind="stable")
    lin = lin[order]
    values = c.values[order]
    first = np.ones(lin.shape[0], bool)
    first[1:] = lin[1:] != lin[:-1]
    starts = np.flatnonzero(first)
    if starts.shape[0] != lin.shape[0]:
        values = np.add.reduceat(values, starts, axis=0)
    return unlinear(lin[starts], sizes), values


def scipy_csr(c: SparseCOO) -> Any:
    """A 2-d sparse tensor (no dense dims) as a SciPy CSR array (duplicates summed)."""
    from scipy import sparse  # deferred: scipy.sparse loads when first needed

    return sparse.csr_array((c.values, (c.indices[0], c.indices[1])), shape=c.shape[:2])


def lookup(c: SparseCOO, indices: np.ndarray) -> np.ndarray:
    """The values of ``c`` (coalesced or not) at each column of ``indices``, zeros where
    ``c`` has none: shape ``[n, *dense sizes]``."""
    sizes = c.shape[: c.sparse_dim]
    ci, cv = (c.indices, c.values) if c.coalesced else coalesce_arrays(c)
    have = linear(ci, sizes)
    want = linear(indices, sizes)
    out = np.zeros((indices.shape[1], *c.values.shape[1:]), c.values.dtype)
    if have.shape[0] == 0 or want.shape[0] == 0:
        return out
    pos = np.minimum(np.searchsorted(have, want), have.shape[0] - 1)
    found = have[pos] == want
    out[found] = cv[pos[found]]
    return out
