"""SparseCPU kernels of ``t`` and ``transpose``: swapping two sparse dims swaps two rows of
the indices (the result is not coalesced, as in PyTorch); dense dims cannot be swapped
(PyTorch's error)."""

from __future__ import annotations

import numpy as np

from ember._tensor import Tensor
from ember.backends.sparse.creation import coo, make
from ember.dispatch.keys import DispatchKey
from ember.ops.registry import impl, ops
from ember.ops.shapes import wrap_dim

aten = ops.aten
SPARSE = DispatchKey.SparseCPU


@impl(aten.transpose.int, SPARSE)
def transpose(self: Tensor, dim0: int, dim1: int) -> Tensor:
    c = coo(self)
    d0, d1 = wrap_dim(dim0, c.ndim), wrap_dim(dim1, c.ndim)
    shape = list(c.shape)
    shape[d0], shape[d1] = shape[d1], shape[d0]
    sd = c.sparse_dim
    if d0 == d1:
        return make(c.indices, c.values, shape, c.coalesced)
    if d0 < sd and d1 < sd:
        order = list(range(sd))
        order[d0], order[d1] = d1, d0
        return make(c.indices[order], c.values, shape, False)
    raise RuntimeError(
        f"sparse transpose: transposed dimensions must be sparse Got sparse_dim: {sd}, d0: "
        f"{d0}, d1: {d1}"
    )


@impl(aten.t.default, SPARSE)
def t(self: Tensor) -> Tensor:
    if self.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {self.ndim}D")
    return self if self.ndim < 2 else transpose(self, 0, 1)


@impl(aten.permute.default, SPARSE)
def permute(self: Tensor, dims: list[int]) -> Tensor:
    """Sparse dims among themselves (rows of the indices; coalesced only if unmoved) and
    dense dims among themselves (axes of the values), as PyTorch's."""
    c = coo(self)
    order = [wrap_dim(d, c.ndim) for d in dims]
    if sorted(order) != list(range(c.ndim)):
        raise RuntimeError(f"permute(): dims {list(dims)} are not a permutation of {c.ndim} dims")
    sd = c.sparse_dim
    if sorted(order[:sd]) != list(range(sd)):
        raise RuntimeError(
            "permute(sparse_coo): transpositions between sparse and dense dimensions are not "
            "allowed.Only transpositions within sparse and dense dimensions are supported."
        )
    shape = [c.shape[d] for d in order]
    sparse_order = order[:sd]
    values = c.values
    if order[sd:] != list(range(sd, c.ndim)):
        values = np.ascontiguousarray(values.transpose(0, *(1 + d - sd for d in order[sd:])))
    moved = sparse_order != list(range(sd))
    indices = c.indices[sparse_order] if moved else c.indices
    return make(indices, values, shape, c.coalesced and not moved)
