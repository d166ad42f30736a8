"""``ember.sparse_coo_tensor``: PyTorch's constructor of a sparse COO tensor (NOTE [sparse
layout] in ``ember/backends/sparse/coo.py``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ember._factory import tensor as _tensor
from ember._tensor import Tensor
from ember.dtypes import int64
from ember.ops.registry import ops
from ember.overrides import guard_function

aten = ops.aten


@guard_function  # PyTorch binds it in C++: the C++ route of __torch_function__
def sparse_coo_tensor(
    indices: Any,
    values: Any,
    size: Sequence[int] | None = None,
    *,
    dtype: Any = None,
    device: Any = None,
    pin_memory: bool = False,
    requires_grad: bool = False,
    check_invariants: bool | None = None,
    is_coalesced: bool | None = None,
) -> Tensor:
    """A sparse COO tensor with ``values[k]`` at ``indices[:, k]`` (duplicates allowed until
    ``coalesce()``); ``size`` defaults to one past the largest index of each sparse dim, then
    the values' trailing sizes. Indices are always checked against ``size``.

    >>> s = ember.sparse_coo_tensor([[0, 1, 1], [2, 0, 2]], [3.0, 4.0, 5.0], (2, 3))
    >>> s.to_dense()
    tensor([[0., 0., 3.],
            [4., 0., 5.]])
    >>> s.layout, s._nnz(), s.is_coalesced()
    (ember.sparse_coo, 3, False)
    """
    if not isinstance(indices, Tensor):
        indices = _tensor(indices, dtype=int64)
    if not isinstance(values, Tensor):
        values = _tensor(values, dtype=dtype)
    if size is None:
        out = aten.sparse_coo_tensor.indices(
            indices, values, dtype=dtype, device=device, is_coalesced=is_coalesced
        )
    else:
        out = aten.sparse_coo_tensor.indices_size(
            indices, values, list(size), dtype=dtype, device=device, is_coalesced=is_coalesced
        )
    if requires_grad:
        out.requires_grad_(True)
    return out  # type: ignore[no-any-return]
