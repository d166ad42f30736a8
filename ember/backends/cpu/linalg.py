"""CPU kernels of the linear algebra ops: ``np.matmul`` (BLAS for float and complex) and
``np.einsum``. The checks are shared with the Meta rules (``ember/ops/native/linalg.py``).

float16 products accumulate in float32 and are cast back, as PyTorch does on CPU; integer
products use NumPy's integer loops (wrapping on overflow, as PyTorch's do).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ember import dtypes
from ember.backends.cpu._util import ERRSTATE, IGNORE, Tensor, quiet_block, wrap
from ember.backends.cpu.shell_dtypes import check_product
from ember.dispatch.keys import DispatchKey
from ember.library import impl
from ember.ops.native.linalg import (
    addbmm_shape,
    addmm_shape,
    addmv_shape,
    addr_shape,
    baddbmm_shape,
    bmm_shape,
    dot_shape,
    einsum_dtype,
    einsum_shape,
    mm_shape,
    mv_shape,
    vdot_shape,
)
from ember.ops.registry import ops

aten = ops.aten
CPU = DispatchKey.CPU

_matmul = np.matmul
_F16 = np.dtype(np.float16)
_F32 = np.dtype(np.float32)
_HALF = dtypes.HALF_NP
#: dtypes np.matmul handles directly (BLAS, or NumPy's integer loops)
_DIRECT = frozenset(np.dtype(t) for t in (
    np.float32, np.float64, np.complex64, np.complex128,
    np.uint8, np.int8, np.int16, np.int32, np.int64,
))  # fmt: skip


def _product(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a @ b`` in ``a``'s dtype (float16 and bfloat16 through float32)."""
    check_product(a, b)
    token = ERRSTATE.set(IGNORE)  # inf * 0 in a product: nan, silently (quiet(), inlined)
    try:
        if a.dtype in _HALF:
            return np.asarray(_matmul(a.astype(_F32), b.astype(_F32))).astype(a.dtype)
        if a.ndim == 2 == b.ndim:
            return _mm2(a, b)
        if a.ndim == 3 == b.ndim and a.shape[2] == 1 and b.shape[1] == 1:
            return _outer_stack(a, b)
        r = _matmul(a, b)
        return r if type(r) is np.ndarray else np.asarray(r)
    finally:
        ERRSTATE.reset(token)


def _mm2(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a @ b`` for matrices, C-contiguous.

    # NOTE [transposed weights]
    ``x @ W.t()`` (every Linear layer) multiplies by a column-major matrix. OpenBLAS's kernel
    for that layout is 15-25% slower on layer-sized matrices than the row-major one, so
    compute ``(W @ x.t()).t()`` and copy it to row-major: the copy costs less than it saves.
    """
    if a.shape[0] * b.size > 65536 and b.flags.f_contiguous and not b.flags.c_contiguous:
        with quiet_block():  # inf * 0 in a product: nan, silently
            return np.ascontiguousarray(_matmul(b.T, a.T).T)
    with quiet_block():
        return _matmul(a, b)


#: products from this many elements go to the compiled loop (NOTE [stacked outer products])
_OUTER_MIN = 16384
_FLOATS = (_F32, np.dtype(np.float64))
_outer: list[Any] = []


def _outer_stack(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a @ b`` for stacks of columns ``a`` (B, n, 1) and rows ``b`` (B, 1, m): outer
    products, by NumPy's multiply or, when large, one compiled loop (NOTE [stacked outer
    products])."""
    batch = max(a.shape[0], b.shape[0])
    if a.dtype is b.dtype and a.dtype in _FLOATS and batch * a.shape[1] * b.shape[2] >= _OUTER_MIN:
        if not _outer:
            from ember.backends.cpu.outer_kernel import outer  # NOTE [numba on first use]

            _outer.append(outer)
        a2, b2 = a[:, :, 0], b[:, 0, :]
        if a.shape[0] != b.shape[0]:  # one side's batch of 1 broadcasts
            a2 = np.broadcast_to(a2, (batch, a.shape[1]))
            b2 = np.broadcast_to(b2, (batch, b.shape[2]))
        return _outer[0](a2, b2)
    return np.multiply(a, b)


@impl(aten.mm.default, CPU)
def mm(self: Tensor, mat2: Tensor) -> Tensor:
    a, b = self._edata, mat2._edata
    # fast path: 2-D operands of one dtype NumPy multiplies directly (np.matmul checks the
    # inner sizes); anything else goes through mm_shape for PyTorch's errors
    d = a.dtype
    if d is b.dtype and (d is _F32 or d in _DIRECT) and a.ndim == 2 == b.ndim:
        token = ERRSTATE.set(IGNORE)  # inf * 0 in a product: nan, silently (quiet(), inlined)
        try:
            r = _matmul(a, b) if b.size <= 4096 else _mm2(a, b)  # small: no layout test
        except ValueError:
            r = None
        finally:
            ERRSTATE.reset(token)
        if r is not None:
            return wrap(r)
    mm_shape(a.shape, b.shape, self.dtype, mat2.dtype)
    return wrap(_product(a, b))


@impl(aten.bmm.default, CPU)
def bmm(self: Tensor, mat2: Tensor) -> Tensor:
    bmm_shape(self.shape, mat2.shape, self.dtype, mat2.dtype)
    return wrap(_product(self._edata, mat2._edata))


@impl(aten.mv.default, CPU)
def mv(self: Tensor, vec: Tensor) -> Tensor:
    mv_shape(self.shape, vec.shape, self.dtype, vec.dtype)
    return wrap(_product(self._edata, vec._edata))


@impl(aten.dot.default, CPU)
def dot(self: Tensor, tensor: Tensor) -> Tensor:
    dot_shape(self.shape, tensor.shape, self.dtype, tensor.dtype)
    return wrap(_product(self._edata, tensor._edata))


@impl(aten.vdot.default, CPU)
def vdot(self: Tensor, other: Tensor) -> Tensor:
    vdot_shape(self.shape, other.shape, self.dtype, other.dtype)
    a = self._edata
    if a.dtype.kind == "c":
        a = np.conj(a)
    return wrap(_product(a, other._edata))


@impl(aten.addmm.default, CPU)
def addmm(self: Tensor, mat1: Tensor, mat2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
    if beta == 1 and alpha == 1:  # a Linear layer: bias + x @ W.t(), summed in place
        r = _addmm_fast(self._edata, mat1._edata, mat2._edata)
        if r is not None:
            return wrap(r)
    shape = addmm_shape(self.shape, mat1.shape, mat2.shape, self.dtype, mat1.dtype, mat2.dtype)
    prod = _product(mat1._edata, mat2._edata)
    t = prod.dtype.type
    if alpha != 1:
        prod = prod * t(alpha)
    if beta == 0:  # self is ignored, NaNs and all (a writable result: never the broadcast)
        return wrap(prod if prod.shape == tuple(shape) else np.broadcast_to(prod, shape).copy())
    s = self._edata if beta == 1 else self._edata * t(beta)
    with quiet_block():
        return wrap((s + prod).astype(prod.dtype, copy=False))


def _as(x: Any, res: np.dtype[Any]) -> Any:
    """A Python scalar as an integer result's dtype (wrapping, as PyTorch's cast does), as
    itself otherwise (NumPy keeps the array's dtype)."""
    return np.array(x).astype(res) if res.kind in "iu" else x


def _scaled_sum(
    self: Tensor, prod: np.ndarray, shape: Any, beta: Any, alpha: Any, res: np.dtype[Any]
) -> Tensor:
    """``beta * self + alpha * prod`` in ``res``, laid out as the product; ``beta == 0``
    ignores ``self``, NaNs and all (PyTorch's rule for the add* products)."""
    with quiet_block():
        if alpha != 1:
            prod = (prod * _as(alpha, res)).astype(res, copy=False)
        if beta == 0:
            return wrap(np.broadcast_to(prod, shape).astype(res, copy=True))
        s = self._edata.astype(res, copy=False)
        if beta != 1:
            s = (s * _as(beta, res) if res.kind != "b" else s & bool(beta)).astype(res, copy=False)
        return wrap(np.asarray(s + prod).astype(res, copy=False))


@impl(aten.baddbmm.default, CPU)
def baddbmm(
    self: Tensor, batch1: Tensor, batch2: Tensor, *, beta: Any = 1, alpha: Any = 1
) -> Tensor:
    shape = baddbmm_shape(
        self.shape, batch1.shape, batch2.shape, self.dtype, batch1.dtype, batch2.dtype
    )
    prod = _product(batch1._edata, batch2._edata)
    return _scaled_sum(self, prod, shape, beta, alpha, prod.dtype)


@impl(aten.addbmm.default, CPU)
def addbmm(
    self: Tensor, batch1: Tensor, batch2: Tensor, *, beta: Any = 1, alpha: Any = 1
) -> Tensor:
    shape = addbmm_shape(
        self.shape, batch1.shape, batch2.shape, self.dtype, batch1.dtype, batch2.dtype
    )
    a, b = batch1._edata, batch2._edata
    n = a.shape[0]
    # the batches side by side: one matrix product of (n1, b*k) by (b*k, p)
    flat_a = np.moveaxis(a, 0, 1).reshape(a.shape[1], n * a.shape[2])
    prod = _product(flat_a, b.reshape(n * b.shape[1], b.shape[2]))
    return _scaled_sum(self, prod, shape, beta, alpha, prod.dtype)


@impl(aten.addmv.default, CPU)
def addmv(self: Tensor, mat: Tensor, vec: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
    shape = addmv_shape(self.shape, mat.shape, vec.shape, self.dtype, mat.dtype, vec.dtype)
    prod = _product(mat._edata, vec._edata)
    return _scaled_sum(self, prod, shape, beta, alpha, prod.dtype)


@impl(aten.addr.default, CPU)
def addr(self: Tensor, vec1: Tensor, vec2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
    shape, d = addr_shape(
        self.shape, vec1.shape, vec2.shape, self.dtype, vec1.dtype, vec2.dtype, beta, alpha
    )
    res = d.np
    with quiet_block():
        v1, v2 = vec1._edata.astype(res, copy=False), vec2._edata.astype(res, copy=False)
        if res.kind == "b":
            prod = np.logical_and.outer(v1, v2) & bool(alpha)
            s = self._edata & bool(beta)
            return wrap(np.broadcast_to(s | prod, shape).copy())
        prod = np.multiply.outer(v1, v2).astype(res, copy=False)
    return _scaled_sum(self, prod, shape, beta, alpha, res)


def _addmm_fast(s: Any, a: Any, b: Any) -> np.ndarray | None:
    """``s + a @ b`` for float32/float64 operands of one dtype, ``s`` a row or a full matrix;
    None for anything else (the general path checks and raises)."""
    d = a.dtype
    if d.kind != "f" or d.itemsize < 4 or not (d is b.dtype is s.dtype):
        return None
    if type(s) is not np.ndarray or a.ndim != 2 or b.ndim != 2:
        return None
    n = b.shape[1]
    if a.shape[1] != b.shape[0] or not (s.shape == (n,) or s.shape == (a.shape[0], n)):
        return None
    r = _mm2(a, b)
    token = ERRSTATE.set(IGNORE)
    try:
        np.add(r, s, out=r)
    finally:
        ERRSTATE.reset(token)
    return r


@impl(aten.einsum.default, CPU)
def einsum(equation: str, tensors: list[Tensor], *, path: Any = None) -> Tensor:
    dts = [t.dtype for t in tensors]
    einsum_shape(equation, [t.shape for t in tensors], dts)
    res = einsum_dtype(equation, [t.shape for t in tensors], dts).np  # NOTE [einsum dtypes]
    arrays = [t._edata for t in tensors]
    work = _F32 if res in _HALF else res
    # a complex operand of a real result (PyTorch's empty contraction: all zeros) drops its
    # imaginary part explicitly, without NumPy's ComplexWarning
    arrays = [
        a if a.dtype is work else (a.real if a.dtype.kind == "c" != work.kind else a).astype(work)
        for a in arrays
    ]
    eq = equation.replace(" ", "")
    lhs, arrow, out = eq.partition("->")
    dropped = 0  # ellipsis dims the output leaves out: summed, as in PyTorch (NumPy refuses)
    if arrow and "..." in lhs and "..." not in out:
        dropped = max(
            a.ndim - len(term.replace("...", ""))
            for a, term in zip(arrays, lhs.split(","), strict=True)
            if "..." in term
        )
        eq = f"{lhs}->...{out}"
    r = np.einsum(eq, *arrays)
    if dropped:
        r = r.sum(axis=tuple(range(dropped)))
    r = np.asarray(r, dtype=res)
    # NumPy returns a view of the operand for a pure permutation or diagonal ('ij->ji',
    # 'ii->i'); ember's einsum is one op, whose result is its own storage (PyTorch's,
    # composite, returns a view there: a documented deviation in docs/design.md)
    if not r.flags.c_contiguous or any(np.may_share_memory(r, a) for a in arrays):
        r = np.array(r, order="C")
    return wrap(r)
