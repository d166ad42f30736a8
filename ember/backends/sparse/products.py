"""SparseCPU kernels of the matrix products: a 2-d sparse tensor times a dense or sparse
matrix through SciPy's CSR arrays (``mm``, ``addmm``, ``_sparse_addmm``, ``mv``), and a
dense matrix times a sparse one through the transposes."""

from __future__ import annotations

from typing import Any

import numpy as np

from ember import dtypes
from ember._tensor import Tensor, wrap
from ember.backends.sparse.coo import INDEX, SparseCOO, scipy_csr
from ember.backends.sparse.creation import array, make
from ember.dispatch.keys import DispatchKey
from ember.ops.registry import impl, ops

aten = ops.aten
SPARSE = DispatchKey.SparseCPU


def _matrix(x: Tensor, op: str, name: str) -> Any:
    """A sparse operand as a CSR array, a dense one as its ndarray; PyTorch's errors."""
    if x.ndim != 2:
        raise RuntimeError(f"{op}: {name} must be a matrix, got a {x.ndim}-D tensor")
    d = x._edata
    if type(d) is SparseCOO:
        if d.dense_dim:
            raise RuntimeError(
                f"{op}: a sparse {name} with dense dims (hybrid, dense_dim={d.dense_dim}) is "
                "not supported; use to_dense() or a sparse tensor without dense dims"
            )
        return scipy_csr(d)
    return array(x, op)


def _product(op: str, a: Tensor, b: Tensor) -> tuple[Any, Any]:
    """``a @ b`` (a SciPy array or an ndarray) and the result's dtype."""
    ma, mb = _matrix(a, op, "self"), _matrix(b, op, "mat2")
    if a.shape[1] != b.shape[0]:
        raise RuntimeError(
            f"{op}: mat1 and mat2 shapes cannot be multiplied ({a.shape[0]}x{a.shape[1]} and "
            f"{b.shape[0]}x{b.shape[1]})"
        )
    if a.dtype is not b.dtype:
        raise RuntimeError(
            f"{op}: expected mat1 and mat2 to have the same dtype, but got: {a.dtype} != {b.dtype}"
        )
    return ma @ mb, a.dtype.np


def _from_scipy(r: Any, shape: tuple[int, int], npdt: Any) -> Tensor:
    """A SciPy sparse result as a coalesced COO tensor, or a dense one as a tensor."""
    if isinstance(r, np.ndarray):
        return wrap(np.ascontiguousarray(r, dtype=npdt))
    c = r.tocoo()
    c.sum_duplicates()  # sorted row-major, duplicates summed: coalesced
    indices = np.stack([c.row, c.col]).astype(INDEX)
    return make(indices, c.data.astype(npdt, copy=False), shape, True)


@impl(aten.mm.default, SPARSE)
def mm(self: Tensor, mat2: Tensor) -> Tensor:
    r, npdt = _product("mm", self, mat2)
    return _from_scipy(r, (self.shape[0], mat2.shape[1]), npdt)


@impl(aten.mv.default, SPARSE)
def mv(self: Tensor, vec: Tensor) -> Tensor:
    if vec.ndim != 1 or type(vec._edata) is not np.ndarray:
        raise RuntimeError(f"mv: vec must be a dense 1-D tensor, got shape {list(vec.shape)}")
    r, npdt = _product("mv", self, vec.unsqueeze(1))  # type: ignore[attr-defined]
    return wrap(np.ascontiguousarray(r, dtype=npdt).reshape(-1))


def _addmm(op: str, self: Tensor, mat1: Tensor, mat2: Tensor, beta: Any, alpha: Any) -> Tensor:
    r, npdt = _product(op, mat1, mat2)
    if not isinstance(r, np.ndarray):
        r = r.toarray()
    out = r if alpha == 1 else r * alpha
    if beta != 0:
        if type(self._edata) is SparseCOO:
            base = aten._to_dense.default(self)._edata
        else:
            base = np.broadcast_to(array(self, op), out.shape)
        out = out + (base if beta == 1 else base * beta)
    npdt = dtypes.promote_types(self.dtype, mat1.dtype).np
    return wrap(np.ascontiguousarray(out, dtype=npdt))


@impl(aten.addmm.default, SPARSE)
def addmm(self: Tensor, mat1: Tensor, mat2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
    return _addmm("addmm", self, mat1, mat2, beta, alpha)


@impl(aten._sparse_addmm.default, SPARSE)
def sparse_addmm(
    self: Tensor, mat1: Tensor, mat2: Tensor, *, beta: Any = 1, alpha: Any = 1
) -> Tensor:
    return _addmm("sparse.mm", self, mat1, mat2, beta, alpha)


@impl(aten._sparse_addmm.default, DispatchKey.CPU)
def sparse_addmm_dense(
    self: Tensor, mat1: Tensor, mat2: Tensor, *, beta: Any = 1, alpha: Any = 1
) -> Tensor:
    raise RuntimeError(
        "sparse.mm: expected the first matrix to be sparse (layout=ember.sparse_coo), got a "
        "strided tensor; use ember.mm for dense matrices"
    )
