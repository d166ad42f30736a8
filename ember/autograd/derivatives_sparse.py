"""Derivatives of the sparse COO layout's ops, PyTorch's formulas (format:
``function_table.py``): gradients of a sparse input are sparse and keep to its pattern
(``sparse_mask``), gradients of the values a sparse tensor was built from are read off
at its indices."""

from __future__ import annotations

from typing import Any

from ember._layout import strided
from ember.autograd.function_table import defvjp, nondifferentiable
from ember.ops.registry import ops

aten = ops.aten


def _constructor_values(g: Any, result: Any) -> Any:
    """The gradient of a sparse constructor's values: ``g`` at each of its indices
    (duplicates each get the whole value there), PyTorch's
    ``sparse_constructor_values_backward``."""
    return aten.sparse_mask.default(g, result)._values()


def _sparse_addmm_mat1(g: Any, mat1: Any, mat2: Any, alpha: Any) -> Any:
    """``g @ mat2.T`` at the sparse ``mat1``'s entries (coalesced), PyTorch's
    ``mm_mat1_sparse_backward``."""
    full = aten.mm.default(g, aten.t.default(mat2))
    if alpha != 1:
        full = full * alpha
    return aten.sparse_mask.default(full, aten.coalesce.default(mat1))


def _sparse_sum_backward(g: Any, self: Any, dim: Any) -> Any:
    """The reduced dims put back, then ``self``'s pattern (PyTorch's ``_sparse_sum_backward``)."""
    if g.layout is not strided:
        g = aten.to_dense.default(g)
    for d in sorted(d % self.ndim for d in dim):
        g = g.unsqueeze(d)
    full = g.expand(self.shape).contiguous()
    return aten.sparse_mask.default(full, aten.coalesce.default(self))


defvjp(
    aten._sparse_coo_tensor_with_dims_and_tensors.default,
    lambda g, sparse_dim, dense_dim, size, indices, values, *, dtype=None, layout=None, device=None, pin_memory=False, is_coalesced=None, result: (
        None,
        _constructor_values(g, result),
    ),
)
defvjp(
    aten._to_dense.default,
    lambda g, self, dtype=None, masked_grad=None: (
        aten.sparse_mask.default(g, aten.coalesce.default(self))
        if masked_grad is None or masked_grad
        else aten.to_sparse.sparse_dim(g, self.sparse_dim())
    ),
)
defvjp(
    aten._to_sparse.default,
    lambda g, self, *, layout=None, blocksize=None, dense_dim=None: (aten.to_dense.default(g),),
    name="ToSparseBackward1",  # PyTorch's names: the two overloads swapped
)
defvjp(aten._to_sparse.sparse_dim, lambda g, self, sparse_dim: (aten.to_dense.default(g),),
       name="ToSparseBackward0")  # fmt: skip
defvjp(aten._coalesce.default, lambda g, self: (g,))
defvjp(
    aten.values.default,
    lambda g, self: (
        aten._sparse_coo_tensor_with_dims_and_tensors.default(
            self.sparse_dim(), self.dense_dim(), list(self.shape), self._indices(), g,
            is_coalesced=True,
        ),
    ),
)  # fmt: skip
defvjp(
    aten.sparse_mask.default,
    lambda g, self, mask: (
        aten.to_dense.default(g) if self.layout is strided else g,
        None,
    ),
)
defvjp(
    aten._sparse_addmm.default,
    lambda g, self, mat1, mat2, *, beta=1, alpha=1: (
        None if beta == 0 else g * beta,
        _sparse_addmm_mat1(g, mat1, mat2, alpha),
        aten.mm.default(aten.t.default(mat1), g) * alpha,
    ),
)
defvjp(
    aten._sparse_sum.dim,
    lambda g, self, dim: (_sparse_sum_backward(g, self, dim),),
    name="SparseSumBackward0",
)
nondifferentiable(
    aten._indices.default, aten._values.default, aten.indices.default,
    aten._sparse_mask_projection.default,
)  # fmt: skip
