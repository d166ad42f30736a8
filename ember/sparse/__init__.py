"""``ember.sparse``: PyTorch's ``torch.sparse`` functions on sparse COO tensors (NOTE
[sparse layout] in ``ember/backends/sparse/coo.py``; ``docs/sparse.md``).

>>> a = ember.tensor([[0.0, 2.0], [1.0, 0.0]]).to_sparse()
>>> ember.sparse.mm(a, ember.ones(2, 3))
tensor([[2., 2., 2.],
        [1., 1., 1.]])
>>> ember.sparse.sum(a)
tensor(3.)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ember._tensor import Tensor
from ember.ops.registry import ops
from ember.sparse._coo_tensor import sparse_coo_tensor

__all__ = ["addmm", "mm", "sparse_coo_tensor", "sum"]

aten = ops.aten


def mm(mat1: Tensor, mat2: Tensor) -> Tensor:
    """``mat1 @ mat2`` for a sparse ``mat1``: dense for a dense ``mat2``, sparse for a sparse
    one; the gradient of ``mat1`` keeps to its pattern (PyTorch's ``torch.sparse.mm``)."""
    return aten._sparse_mm.default(mat1, mat2)  # type: ignore[no-any-return]


def addmm(mat: Tensor, mat1: Tensor, mat2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
    """``beta * mat + alpha * (mat1 @ mat2)`` for a sparse ``mat1`` (``torch.sparse.addmm``)."""
    return aten._sparse_addmm.default(mat, mat1, mat2, beta=beta, alpha=alpha)  # type: ignore[no-any-return]


def sum(  # noqa: A001 - PyTorch's name
    input: Tensor, dim: int | Sequence[int] | None = None, dtype: Any = None
) -> Tensor:
    """The sum of a sparse tensor: a dense 0-d tensor over everything; over ``dim`` a sparse
    tensor while a sparse dim is left, else dense (``torch.sparse.sum``).

    >>> s = ember.sparse_coo_tensor([[0, 1, 1], [2, 0, 2]], [3.0, 4.0, 5.0], (2, 3))
    >>> ember.sparse.sum(s, 1).to_dense()
    tensor([3., 9.])
    """
    x = input if dtype is None else input.to(dtype)  # type: ignore[attr-defined]
    if dim is None:
        return aten._sparse_sum.default(x)  # type: ignore[no-any-return]
    dims = [dim] if isinstance(dim, int) else list(dim)
    return aten._sparse_sum.dim(x, dims)  # type: ignore[no-any-return]
