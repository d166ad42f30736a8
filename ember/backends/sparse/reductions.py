"""SparseCPU kernels of ``sum``: a full sum is a dense 0-d tensor; a sum over some dims is
sparse while a sparse dim survives (entries that meet are summed: a coalesced result) and
dense when every sparse dim is reduced, as PyTorch's ``_sparse_sum``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ember._tensor import Tensor, wrap
from ember.backends.sparse.coo import SparseCOO, coalesce_arrays
from ember.backends.sparse.creation import coo, make
from ember.dispatch.keys import DispatchKey
from ember.ops.registry import impl, ops
from ember.ops.shapes import wrap_dim

aten = ops.aten
SPARSE = DispatchKey.SparseCPU


def _sum_dtype(c: SparseCOO, dtype: Any) -> Any:
    if dtype is not None:
        return dtype.np
    return np.dtype(np.int64) if c.dtype.kind in "biu" else c.dtype


@impl(aten.sum.default, SPARSE)
def sum_all(self: Tensor, *, dtype: Any = None) -> Tensor:
    c = coo(self)
    return wrap(np.asarray(c.values.sum(dtype=_sum_dtype(c, dtype))))


def sparse_sum(self: Tensor, dim: Sequence[int], dtype: Any = None) -> Tensor:
    c = coo(self)
    dims = sorted({wrap_dim(d, c.ndim) for d in dim})
    npdt = _sum_dtype(c, dtype)
    sd = c.sparse_dim
    dense_axes = tuple(1 + d - sd for d in dims if d >= sd)
    values = c.values.sum(axis=dense_axes, dtype=npdt) if dense_axes else c.values.astype(npdt)
    keep = [d for d in range(sd) if d not in dims]
    shape = [n for d, n in enumerate(c.shape) if d not in dims]
    if not keep:  # every sparse dim reduced: a dense result
        return wrap(np.array(values.sum(axis=0), copy=True))
    part = SparseCOO(c.indices[keep], values, tuple(shape), False)
    indices, summed = coalesce_arrays(part)
    return make(indices, summed, shape, True)


@impl(aten.sum.dim_IntList, SPARSE)
def sum_dims(self: Tensor, dim: Sequence[int] | None, keepdim: bool = False, *,
             dtype: Any = None) -> Tensor:  # fmt: skip
    if keepdim:
        raise RuntimeError("sum: keepdim=True is not supported for sparse COO tensors")
    if isinstance(dim, int):
        dim = [dim]
    if dim is None or not len(dim):
        return sum_all(self, dtype=dtype)
    return sparse_sum(self, dim, dtype)


@impl(aten._sparse_sum.dim, SPARSE)
def sparse_sum_dim(self: Tensor, dim: Sequence[int]) -> Tensor:
    return sparse_sum(self, [dim] if isinstance(dim, int) else dim)
