"""SparseCPU kernels that pick or join entries: ``select``, ``index_select``, ``unsqueeze``,
``cat``, ``stack``, and the in-place ``t_``/``transpose_``/``detach_``. Results keep
PyTorch's entry order and are marked uncoalesced, as PyTorch's are."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ember._tensor import Tensor, wrap
from ember.backends.sparse.coo import INDEX, SparseCOO
from ember.backends.sparse.creation import array, coo, make
from ember.backends.sparse.views import transpose
from ember.dispatch.keys import DispatchKey
from ember.ops.registry import impl, ops
from ember.ops.shapes import wrap_dim

aten = ops.aten
SPARSE = DispatchKey.SparseCPU


@impl(aten.select.int, SPARSE)
def select(self: Tensor, dim: int, index: int) -> Tensor:
    c = coo(self)
    d = wrap_dim(dim, c.ndim)
    n = c.shape[d]
    if not -n <= index < n:
        raise IndexError(
            f"select(): index {index} out of range for tensor of size {list(c.shape)} at "
            f"dimension {d}"
        )
    index %= n
    sd = c.sparse_dim
    shape = c.shape[:d] + c.shape[d + 1 :]
    if d >= sd:  # a dense dim: the values' axis
        return make(c.indices, np.ascontiguousarray(np.take(c.values, index, 1 + d - sd)),
                    shape, False)  # fmt: skip
    hit = c.indices[d] == index
    if sd == 1:  # the last sparse dim: a dense result, the matching values summed
        return wrap(np.array(c.values[hit].sum(0), copy=True))
    keep = [k for k in range(sd) if k != d]
    return make(c.indices[keep][:, hit], c.values[hit], shape, False)


@impl(aten.index_select.default, SPARSE)
def index_select(self: Tensor, dim: int, index: Tensor) -> Tensor:
    """For each position of ``index``, the entries at that index (in their order)."""
    c = coo(self)
    d = wrap_dim(dim, c.ndim)
    idx = array(index, "index_select").reshape(-1).astype(INDEX)
    if idx.size and (idx.min() < -c.shape[d] or idx.max() >= c.shape[d]):
        raise IndexError(f"index_select(): index out of range in self (dim {d}, size "
                         f"{c.shape[d]})")  # fmt: skip
    idx = idx % max(c.shape[d], 1)
    shape = list(c.shape)
    shape[d] = idx.shape[0]
    sd = c.sparse_dim
    if d >= sd:
        values = np.ascontiguousarray(np.take(c.values, idx, 1 + d - sd))
        return make(c.indices, values, shape, False)
    key = c.indices[d]
    order = np.argsort(key, kind="stable")
    sorted_key = key[order]
    lo = np.searchsorted(sorted_key, idx, "left")
    counts = np.searchsorted(sorted_key, idx, "right") - lo
    total = int(counts.sum())
    starts = np.repeat(np.cumsum(counts) - counts, counts)
    pos = np.arange(total) - starts + np.repeat(lo, counts)
    entries = order[pos]
    indices = c.indices[:, entries].copy()
    indices[d] = np.repeat(np.arange(idx.shape[0], dtype=INDEX), counts)
    return make(indices, c.values[entries], shape, False)


@impl(aten.unsqueeze.default, SPARSE)
def unsqueeze(self: Tensor, dim: int) -> Tensor:
    c = coo(self)
    d = wrap_dim(dim, c.ndim + 1)
    shape = c.shape[:d] + (1,) + c.shape[d:]
    sd = c.sparse_dim
    if d <= sd:
        indices = np.insert(c.indices, d, 0, axis=0)
        return make(indices, c.values, shape, False)
    return make(c.indices, np.expand_dims(c.values, 1 + d - sd), shape, False)


def _same_structure(op: str, parts: Sequence[SparseCOO], d: int) -> None:
    first = parts[0]
    for p in parts[1:]:
        if (p.sparse_dim, p.dense_dim) != (first.sparse_dim, first.dense_dim):
            raise RuntimeError(
                f"{op}: concatenating sparse tensors, but they don't have the same number of "
                f"sparse and dense dims: ({first.sparse_dim}, {first.dense_dim}) and "
                f"({p.sparse_dim}, {p.dense_dim})"
            )
        if p.shape[:d] + p.shape[d + 1 :] != first.shape[:d] + first.shape[d + 1 :]:
            raise RuntimeError(
                f"{op}: sizes of tensors must match except in dimension {d}, got "
                f"{list(first.shape)} and {list(p.shape)}"
            )


@impl(aten.cat.default, SPARSE)
def cat(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    """Entries one tensor after another: along a sparse dim with shifted indices, along a
    dense dim with the values padded by zeros (PyTorch's)."""
    for t in tensors:
        if type(t._edata) is not SparseCOO:
            raise RuntimeError(
                "cat: expected all tensors to be sparse COO when one is (got a strided one)"
            )
    parts = [coo(t) for t in tensors]
    first = parts[0]
    d = wrap_dim(dim, first.ndim)
    _same_structure("cat", parts, d)
    sizes = [p.shape[d] for p in parts]
    shape = list(first.shape)
    shape[d] = sum(sizes)
    npdt = np.result_type(*[p.dtype for p in parts])
    sd = first.sparse_dim
    offsets = np.cumsum([0, *sizes[:-1]])
    if d < sd:
        indices = []
        for p, off in zip(parts, offsets, strict=True):
            shifted = p.indices.copy()
            shifted[d] += off
            indices.append(shifted)
        values = [p.values.astype(npdt, copy=False) for p in parts]
    else:
        axis = 1 + d - sd
        indices, values = [], []
        for p, off in zip(parts, offsets, strict=True):
            v = np.zeros((p.nnz, *shape[sd:]), npdt)
            where = [slice(None)] * v.ndim
            where[axis] = slice(int(off), int(off) + p.shape[d])
            v[tuple(where)] = p.values
            indices.append(p.indices)
            values.append(v)
    return make(np.concatenate(indices, 1), np.concatenate(values, 0), shape, False)


@impl(aten.stack.default, SPARSE)
def stack(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    d = wrap_dim(dim, tensors[0].ndim + 1)
    return cat([unsqueeze(t, d) for t in tensors], d)


@impl(aten.t_.default, SPARSE)
def t_(self: Tensor) -> Tensor:
    r = transpose(self, 0, 1) if self.ndim == 2 else self
    self._edata = r._edata
    self._bump_version()
    return self


@impl(aten.transpose_.default, SPARSE)
def transpose_(self: Tensor, dim0: int, dim1: int) -> Tensor:
    self._edata = transpose(self, dim0, dim1)._edata
    self._bump_version()
    return self


@impl(aten.detach_.default, SPARSE)
def detach_(self: Tensor) -> Tensor:
    return self


@impl(aten.new_zeros.default, SPARSE)
def new_zeros(self: Tensor, size: Sequence[int], *, dtype: Any = None, layout: Any = None,
              device: Any = None, pin_memory: Any = None) -> Tensor:  # fmt: skip
    """An empty sparse tensor of ``size`` (every dim sparse), as PyTorch's."""
    npdt = coo(self).dtype if dtype is None else dtype.np
    return make(np.zeros((len(size), 0), INDEX), np.zeros((0,), npdt), list(size), True)
