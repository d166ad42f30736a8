"""SparseCPU kernels that build, convert, copy and look into sparse COO tensors (NOTE
[sparse layout] in ``coo.py``). The constructor and ``_to_sparse`` take dense arguments, so
they are CPU kernels that return a sparse tensor, as PyTorch's are."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ember._tensor import Tensor, wrap, wrap_sparse
from ember.backends.sparse.coo import INDEX, SparseCOO, coalesce_arrays, lookup
from ember.dispatch.keys import DispatchKey
from ember.ops.registry import impl, ops

aten = ops.aten
SPARSE = DispatchKey.SparseCPU
CPU = DispatchKey.CPU


def coo(t: Tensor) -> SparseCOO:
    """The ``SparseCOO`` of a sparse tensor (PyTorch's error for a strided one)."""
    d = t._edata
    if type(d) is not SparseCOO:
        raise RuntimeError(f"expected a sparse COO tensor, got layout {t.layout}")
    return d


def make(indices: np.ndarray, values: np.ndarray, shape: Sequence[int], coalesced: bool) -> Tensor:
    """A new sparse tensor over the two arrays (not copied)."""
    return wrap_sparse(SparseCOO(indices, values, tuple(shape), coalesced))


def array(x: Tensor, op: str) -> np.ndarray:
    d = x._edata
    if type(d) is not np.ndarray:
        raise RuntimeError(
            f"{op}: expected a dense cpu tensor, got layout {x.layout} on {x.device}"
        )
    return d


# --------------------------------------------------------------------------- constructor


def _check(sparse_dim: int, dense_dim: int, size: Sequence[int], idx: np.ndarray,
           val: np.ndarray) -> None:  # fmt: skip
    """PyTorch's argument checks, and the index bounds it checks only when asked
    (``check_invariants``): ember always checks them, as an index out of bounds would read
    past the tensor."""
    op = "sparse_coo_tensor"
    if idx.ndim != 2:
        raise RuntimeError(f"{op}: indices must be sparse_dim x nnz, but got: {list(idx.shape)}")
    if val.ndim < 1:
        raise RuntimeError(f"{op}: values must be at least 1-dimensional (nnz x dense sizes)")
    if idx.shape[1] != val.shape[0]:
        raise RuntimeError(
            f"indices and values must have same nnz, but got nnz from indices: {idx.shape[1]}, "
            f"nnz from values: {val.shape[0]}"
        )
    if idx.shape[0] != sparse_dim or val.ndim - 1 != dense_dim:
        raise RuntimeError(
            f"{op}: indices have {idx.shape[0]} sparse dims and values {val.ndim - 1} dense "
            f"dims, but sparse_dim={sparse_dim} and dense_dim={dense_dim}"
        )
    if len(size) != sparse_dim + dense_dim:
        raise RuntimeError(
            f"number of dimensions must be sparse_dim ({sparse_dim}) + dense_dim ({dense_dim}), "
            f"but got {len(size)}"
        )
    if tuple(size[sparse_dim:]) != val.shape[1:]:
        raise RuntimeError(
            f"values has incorrect size, expected {[val.shape[0], *size[sparse_dim:]]}, got "
            f"{list(val.shape)}"
        )
    if idx.shape[1]:
        low, high = idx.min(1), idx.max(1)
        for d in range(sparse_dim):
            if low[d] < 0:
                raise RuntimeError(f"{op}: found negative index {low[d]} for dim {d}")
            if high[d] >= size[d]:
                raise RuntimeError(
                    f"size is inconsistent with indices: for dim {d}, size is {size[d]} but "
                    f"found index {high[d]}"
                )


def sparse_coo(
    sparse_dim: int, dense_dim: int, size: Sequence[int], indices: Tensor, values: Tensor, *,
    dtype: Any = None, layout: Any = None, device: Any = None, pin_memory: bool | None = False,
    is_coalesced: bool | None = None,
) -> Tensor:  # fmt: skip
    op = "sparse_coo_tensor"
    if indices._edata.dtype != INDEX:
        raise RuntimeError(f"{op}: indices must be an int64 tensor, got {indices.dtype}")
    if device is not None and str(device).partition(":")[0] != "cpu":
        raise RuntimeError(f"{op}: ember's sparse tensors live on the cpu device, got '{device}'")
    if type(indices._edata) is not np.ndarray or type(values._edata) is not np.ndarray:
        raise RuntimeError(
            f"{op}: ember's sparse COO tensors hold data on the cpu device; indices on "
            f"'{indices.device}' and values on '{values.device}' cannot make one (meta and "
            "fake sparse tensors are not supported yet)"
        )
    idx, val = indices._edata, values._edata
    _check(sparse_dim, dense_dim, size, idx, val)
    if dtype is not None and dtype.np != val.dtype:
        val = val.astype(dtype.np)
    coalesced = idx.shape[1] < 2 if is_coalesced is None else is_coalesced
    return make(idx, val, size, coalesced)


impl(aten._sparse_coo_tensor_with_dims_and_tensors.default, (CPU, DispatchKey.Meta), sparse_coo)


# --------------------------------------------------------------------------- conversions


@impl(aten._to_dense.default, SPARSE)
def to_dense(self: Tensor, dtype: Any = None, masked_grad: bool | None = None) -> Tensor:
    c = coo(self)
    out = np.zeros(c.shape, c.dtype if dtype is None else dtype.np)
    if c.coalesced:
        out[tuple(c.indices)] = c.values
    elif c.dense_dim == 0:  # one number per entry: np.add.at sums duplicates fastest
        np.add.at(out, tuple(c.indices), c.values)
    else:  # rows per entry: coalesced first, so each index is written once
        indices, values = coalesce_arrays(c)
        out[tuple(indices)] = values
    return wrap(out)


def _dense_to_sparse(self: Tensor, sparse_dim: int) -> Tensor:
    x = array(self, "to_sparse")
    if not 0 <= sparse_dim <= x.ndim:
        raise RuntimeError(
            f"to_sparse: sparse_dim argument must be in [0, {x.ndim}], got {sparse_dim}"
        )
    head = x.shape[:sparse_dim]
    nonzero = (x != 0).reshape(*head, -1).any(-1) if x.size else np.zeros(head, bool)
    index = np.nonzero(nonzero)
    indices = np.stack(index).astype(INDEX) if index else np.zeros((0, 1), INDEX)
    values = x[index].copy() if index else x[None].copy()
    return make(indices.reshape(sparse_dim, -1), values, x.shape, True)


@impl(aten._to_sparse.default, CPU)
def dense_to_sparse(self: Tensor, *, layout: Any = None, blocksize: Any = None,
                    dense_dim: int | None = None) -> Tensor:  # fmt: skip
    return _dense_to_sparse(self, self.ndim - (dense_dim or 0))


@impl(aten._to_sparse.sparse_dim, CPU)
def dense_to_sparse_dim(self: Tensor, sparse_dim: int) -> Tensor:
    return _dense_to_sparse(self, sparse_dim)


@impl(aten._coalesce.default, SPARSE)
def coalesce(self: Tensor) -> Tensor:
    c = coo(self)
    indices, values = coalesce_arrays(c)
    return make(indices, values, c.shape, True)


# --------------------------------------------------------------------------- metadata


@impl(aten.is_coalesced.default, SPARSE)
def is_coalesced(self: Tensor) -> bool:
    return coo(self).coalesced


@impl(aten._nnz.default, SPARSE)
def nnz(self: Tensor) -> int:
    return coo(self).nnz


@impl(aten.sparse_dim.default, SPARSE)
def sparse_dim(self: Tensor) -> int:
    return coo(self).sparse_dim


@impl(aten.dense_dim.default, SPARSE)
def dense_dim(self: Tensor) -> int:
    return coo(self).dense_dim


# a strided tensor: no sparse dims, every dim dense (PyTorch's answers)
impl(aten.sparse_dim.default, CPU, lambda self: 0)
impl(aten.dense_dim.default, CPU, lambda self: self.ndim)


def _alias(arr: np.ndarray) -> Tensor:
    return wrap(arr.view())


def _coalesced_only(self: Tensor, what: str) -> SparseCOO:
    c = coo(self)
    if not c.coalesced:
        raise RuntimeError(
            f"Cannot get {what} on an uncoalesced tensor, please call .coalesce() first"
        )
    return c


impl(aten.indices.default, SPARSE, lambda self: _alias(_coalesced_only(self, "indices").indices))
impl(aten.values.default, SPARSE, lambda self: _alias(_coalesced_only(self, "values").values))
impl(aten._indices.default, SPARSE, lambda self: _alias(coo(self).indices))
impl(aten._values.default, SPARSE, lambda self: _alias(coo(self).values))


# --------------------------------------------------------------------------- masks


@impl(aten.sparse_mask.default, SPARSE)
def sparse_mask(self: Tensor, mask: Tensor) -> Tensor:
    """``self``'s values at ``mask``'s indices (kept as they are, coalesced or not)."""
    m = coo(mask)
    if tuple(self.shape) != m.shape:
        raise RuntimeError(
            f"sparse_mask(): operands have incompatible sizes; self has size "
            f"{list(self.shape)} but mask has size {list(m.shape)}"
        )
    if type(self._edata) is SparseCOO:
        values = lookup(coo(self), m.indices)
    else:
        values = array(self, "sparse_mask")[tuple(m.indices)]
    return make(m.indices.copy(), values, m.shape, m.coalesced)


@impl(aten._sparse_mask_projection.default, SPARSE)
def sparse_mask_projection(self: Tensor, mask: Tensor, accumulate_matches: bool = False) -> Tensor:
    """The values of sparse ``self`` at each of ``mask``'s indices, as a sparse tensor with
    ``mask``'s indices (what a gradient of a sparse constructor's values reads)."""
    if accumulate_matches:
        raise RuntimeError("_sparse_mask_projection: accumulate_matches=True is not supported")
    m = coo(mask)
    return make(m.indices.copy(), lookup(coo(self), m.indices), m.shape, m.coalesced)


# --------------------------------------------------------------------------- copies


@impl(aten.clone.default, SPARSE)
def clone(self: Tensor, *, memory_format: Any = None) -> Tensor:
    c = coo(self)
    return make(c.indices.copy(), c.values.copy(), c.shape, c.coalesced)


@impl(aten.detach.default, SPARSE)
def detach(self: Tensor) -> Tensor:
    c = coo(self)
    return make(c.indices, c.values, c.shape, c.coalesced)


@impl(aten._to_copy.default, SPARSE)
def to_copy(self: Tensor, *, dtype: Any = None, layout: Any = None, device: Any = None,
            pin_memory: Any = None, non_blocking: bool = False,
            memory_format: Any = None) -> Tensor:  # fmt: skip
    c = coo(self)
    if device is not None and str(device).partition(":")[0] != "cpu":
        raise RuntimeError(
            f"to: ember's sparse COO tensors live on the cpu device only, got '{device}'"
        )
    if layout is not None and layout is not c.layout:
        raise RuntimeError(f"to: a sparse COO tensor cannot change layout to {layout}; use "
                           "to_dense()")  # fmt: skip
    values = c.values.astype(c.dtype if dtype is None else dtype.np, copy=True)
    return make(c.indices.copy(), values, c.shape, c.coalesced)


@impl(aten.zeros_like.default, SPARSE)
def zeros_like(self: Tensor, *, dtype: Any = None, layout: Any = None, device: Any = None,
               pin_memory: Any = None, memory_format: Any = None) -> Tensor:  # fmt: skip
    c = coo(self)
    npdt = c.dtype if dtype is None else dtype.np
    return make(np.zeros((c.sparse_dim, 0), INDEX), np.zeros((0, *c.values.shape[1:]), npdt),
                c.shape, True)  # fmt: skip


@impl(aten.zero_.default, SPARSE)
def zero_(self: Tensor) -> Tensor:
    """No entries left (PyTorch's ``zero_`` of a sparse tensor: what ``zero_grad(
    set_to_none=False)`` runs on a sparse gradient)."""
    c = coo(self)
    empty = np.zeros((0, *c.values.shape[1:]), c.dtype)
    self._edata = SparseCOO(np.zeros((c.sparse_dim, 0), INDEX), empty, c.shape, True)
    self._bump_version()
    return self
