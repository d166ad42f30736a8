"""The sparse COO layout's ops: PyTorch's schemas, and the compositions PyTorch writes as
CompositeImplicitAutograd (``to_dense``, ``to_sparse``, ``coalesce``, ``_sparse_mm``,
``embedding_sparse_backward``, the ``sparse_coo_tensor`` overloads). Kernels are in
``ember/backends/sparse/`` (NOTE [sparse layout] in ``coo.py`` there)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ember._layout import sparse_coo, strided
from ember.dispatch.keys import DispatchKey
from ember.dtypes import int64
from ember.ops.native._define import define
from ember.ops.registry import impl, ops

if TYPE_CHECKING:
    from ember._tensor import Tensor

aten = ops.aten
_CIA = DispatchKey.CompositeImplicitAutograd
M = ("method",)
_OPTIONS = (
    "*, ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
    "bool? pin_memory=None, bool? is_coalesced=None"
)

define("_sparse_coo_tensor_with_dims_and_tensors(int sparse_dim, int dense_dim, SymInt[] size, "
       "Tensor indices, Tensor values, *, ScalarType? dtype=None, Layout? layout=None, "
       "Device? device=None, bool? pin_memory=False, bool? is_coalesced=None) -> Tensor",
       variants=())  # fmt: skip
define(f"sparse_coo_tensor.indices(Tensor indices, Tensor values, {_OPTIONS}) -> Tensor",
       variants=())  # fmt: skip
define(f"sparse_coo_tensor.indices_size(Tensor indices, Tensor values, int[] size, {_OPTIONS}) "
       "-> Tensor", variants=())  # fmt: skip
define("_to_dense(Tensor self, ScalarType? dtype=None, bool? masked_grad=None) -> Tensor",
       variants=M)  # fmt: skip
define("to_dense(Tensor self, ScalarType? dtype=None, *, bool? masked_grad=None) -> Tensor",
       variants=M)  # fmt: skip
_SPARSE_OPTIONS = "*, Layout? layout=None, int[2]? blocksize=None, int? dense_dim=None"
define(f"_to_sparse(Tensor self, {_SPARSE_OPTIONS}) -> Tensor", variants=M)
define("_to_sparse.sparse_dim(Tensor self, int sparse_dim) -> Tensor", variants=M)
define(f"to_sparse(Tensor self, {_SPARSE_OPTIONS}) -> Tensor", variants=M)
define("to_sparse.sparse_dim(Tensor self, int sparse_dim) -> Tensor", variants=M)
define("coalesce(Tensor(a) self) -> Tensor(a)", variants=M)
define("_coalesce(Tensor self) -> Tensor", variants=())
define("is_coalesced(Tensor self) -> bool", variants=M)
for _name in ("indices", "values", "_indices", "_values"):
    define(f"{_name}(Tensor(a) self) -> Tensor(a)", variants=M)
for _name in ("sparse_dim", "dense_dim", "_nnz"):
    define(f"{_name}(Tensor self) -> int", variants=M)
define("sparse_mask(Tensor self, Tensor mask) -> Tensor", variants=M)
define("_sparse_mask_projection(Tensor self, Tensor mask, bool accumulate_matches=False) "
       "-> Tensor", variants=())  # fmt: skip
define("_sparse_mm(Tensor sparse, Tensor dense) -> Tensor", variants=())
define("_sparse_addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) "
       "-> Tensor", variants=())  # fmt: skip
define("_sparse_sum(Tensor self) -> Tensor", variants=())
define("_sparse_sum.dim(Tensor self, int[1] dim) -> Tensor", variants=())
define("embedding_sparse_backward(Tensor grad, Tensor indices, int num_weights, "
       "int padding_idx, bool scale_grad_by_freq) -> Tensor", variants=())  # fmt: skip


# --------------------------------------------------------------------------- construction


def inferred_size(indices: Tensor, values: Tensor) -> list[int]:
    """``sparse_coo_tensor``'s size when none is given: one past the largest index of each
    sparse dim (0 without entries), then the values' dense sizes."""
    if indices.ndim != 2:
        raise RuntimeError(
            f"sparse_coo_tensor: indices must be sparse_dim x nnz, but got: {list(indices.shape)}"
        )
    if indices.shape[1]:
        sparse = [int(m) + 1 for m in indices.amax(1).tolist()]  # type: ignore[attr-defined]
    else:
        sparse = [0] * indices.shape[0]
    return sparse + list(values.shape[1:])


def _construct(
    indices: Tensor, values: Tensor, size: Sequence[int], dtype: Any, device: Any,
    is_coalesced: bool | None,
) -> Tensor:  # fmt: skip
    if device is not None and str(device).partition(":")[0] not in ("cpu",):
        raise RuntimeError(
            f"sparse_coo_tensor: ember's sparse COO tensors live on the cpu device only, got "
            f"device='{device}'"
        )
    if indices.dtype is not int64:
        if indices.dtype.is_floating_point or indices.dtype.is_complex:
            raise RuntimeError(
                f"sparse_coo_tensor: indices must be an int64 tensor, got {indices.dtype}"
            )
        indices = indices.long()  # type: ignore[attr-defined]
    sparse_dim = indices.shape[0] if indices.ndim == 2 else 0
    return aten._sparse_coo_tensor_with_dims_and_tensors.default(  # type: ignore[no-any-return]
        sparse_dim, values.ndim - 1, list(size), indices, values, dtype=dtype,
        is_coalesced=is_coalesced,
    )  # fmt: skip


@impl(aten.sparse_coo_tensor.indices, _CIA)
def sparse_coo_tensor_indices(
    indices: Tensor, values: Tensor, *, dtype: Any = None, layout: Any = None,
    device: Any = None, pin_memory: bool | None = None, is_coalesced: bool | None = None,
) -> Tensor:  # fmt: skip
    return _construct(indices, values, inferred_size(indices, values), dtype, device,
                      is_coalesced)  # fmt: skip


@impl(aten.sparse_coo_tensor.indices_size, _CIA)
def sparse_coo_tensor_indices_size(
    indices: Tensor, values: Tensor, size: Sequence[int], *, dtype: Any = None,
    layout: Any = None, device: Any = None, pin_memory: bool | None = None,
    is_coalesced: bool | None = None,
) -> Tensor:  # fmt: skip
    return _construct(indices, values, size, dtype, device, is_coalesced)


# --------------------------------------------------------------------------- conversions


@impl(aten.to_dense.default, _CIA)
def to_dense(self: Tensor, dtype: Any = None, *, masked_grad: bool | None = None) -> Tensor:
    if self.layout is strided:
        if dtype is not None and dtype is not self.dtype:
            raise RuntimeError("dtype argument is not supported by to_dense for strided tensors")
        return self
    return aten._to_dense.default(self, dtype, masked_grad)  # type: ignore[no-any-return]


def _to_sparse_layout(self: Tensor, layout: Any, blocksize: Any, dense_dim: int | None) -> Any:
    if layout is not None and layout is not sparse_coo:
        raise RuntimeError(f"to_sparse: ember has only the sparse_coo layout, got layout={layout}")
    if blocksize is not None:
        raise RuntimeError("to_sparse: blocksize applies to blocked layouts (BSR/BSC) only")
    if dense_dim is not None and not 0 <= dense_dim <= self.ndim:
        raise RuntimeError(
            f"to_sparse: dense_dim argument must be in [0, {self.ndim}], got {dense_dim}"
        )
    return sparse_coo


@impl(aten.to_sparse.default, _CIA)
def to_sparse(self: Tensor, *, layout: Any = None, blocksize: Any = None,
              dense_dim: int | None = None) -> Tensor:  # fmt: skip
    _to_sparse_layout(self, layout, blocksize, dense_dim)
    if self.layout is sparse_coo:
        return self
    return aten._to_sparse.default(self, dense_dim=dense_dim)  # type: ignore[no-any-return]


@impl(aten.to_sparse.sparse_dim, _CIA)
def to_sparse_dim(self: Tensor, sparse_dim: int) -> Tensor:
    if self.layout is sparse_coo:
        if sparse_dim != self.sparse_dim():  # type: ignore[attr-defined]
            raise RuntimeError(
                f"to_sparse: conversion from Sparse to Sparse with sparse_dim argument "
                f"!=self.sparse_dim() is not supported (got {sparse_dim})"
            )
        return self
    return aten._to_sparse.sparse_dim(self, sparse_dim)  # type: ignore[no-any-return]


@impl(aten.coalesce.default, _CIA)
def coalesce(self: Tensor) -> Tensor:
    if self.layout is not sparse_coo:
        raise RuntimeError("coalesce expected sparse coordinate tensor layout but got Strided")
    if self.is_coalesced():  # type: ignore[attr-defined]
        return self
    return aten._coalesce.default(self)  # type: ignore[no-any-return]


# --------------------------------------------------------------------------- products


@impl(aten._sparse_mm.default, _CIA)
def sparse_mm(sparse: Tensor, dense: Tensor) -> Tensor:
    """``torch.sparse.mm``: a sparse result for two sparse operands, else ``_sparse_addmm``
    of zeros (so its gradient is masked to the sparse operand's pattern)."""
    if sparse.layout is sparse_coo and dense.layout is sparse_coo:
        return aten.mm.default(sparse, dense)  # type: ignore[no-any-return]
    if sparse.ndim != 2 or dense.ndim != 2:
        raise RuntimeError(
            f"sparse.mm: both arguments must be matrices, got shapes {list(sparse.shape)} and "
            f"{list(dense.shape)}"
        )
    zeros = aten.zeros.default([sparse.shape[0], dense.shape[1]], dtype=dense.dtype)
    return aten._sparse_addmm.default(zeros, sparse, dense, beta=0)  # type: ignore[no-any-return]


@impl(aten._sparse_sum.default, _CIA)
def sparse_sum(self: Tensor) -> Tensor:
    """The sum of the coalesced values, so a gradient keeps to the entries (PyTorch's)."""
    if self.layout is not sparse_coo:
        return aten.sum.default(self)  # type: ignore[no-any-return]
    values = aten.values.default(aten.coalesce.default(self))
    return aten.sum.default(values)  # type: ignore[no-any-return]


# --------------------------------------------------------------------------- embedding


@impl(aten.embedding_sparse_backward.default, _CIA)
def embedding_sparse_backward(
    grad: Tensor, indices: Tensor, num_weights: int, padding_idx: int, scale_grad_by_freq: bool
) -> Tensor:
    """PyTorch's sparse gradient of ``embedding``: one row of ``grad`` per looked-up index,
    uncoalesced (repeated indices repeat), rows at ``padding_idx`` left out."""
    if scale_grad_by_freq:
        raise RuntimeError(
            "embedding_backward: scale_grad_by_freq not supported with sparse gradients"
        )
    flat = indices.reshape(-1)  # type: ignore[attr-defined]
    rows = grad.reshape(-1, grad.shape[-1])  # type: ignore[attr-defined]
    if padding_idx != -1:
        keep = flat != padding_idx
        flat, rows = flat[keep], rows[keep]
    return aten._sparse_coo_tensor_with_dims_and_tensors.default(  # type: ignore[no-any-return]
        1,
        1,
        [num_weights, grad.shape[-1]],
        flat.long().unsqueeze(0),
        rows,  # type: ignore[attr-defined]
    )
