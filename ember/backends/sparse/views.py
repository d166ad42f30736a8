"""SparseCPU kernels of ``t`` and ``transpose``: swapping two sparse dims swaps two rows of
the indices (the result is not coalesced, as in PyTorch); dense dims cannot be swapped
(PyTorch's error)."""

from __future__ import annotations

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
