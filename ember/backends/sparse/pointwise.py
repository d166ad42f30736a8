"""SparseCPU kernels of the elementwise ops PyTorch runs on COO tensors: sums and products
of two sparse tensors, products with a scalar or a dense tensor, ``add(dense, sparse)``,
and the unary ops that keep zero at zero (their values go through the dense op, so dtypes
follow PyTorch's promotion). In-place and ``out=`` forms are derived (``variants.py``).

A linear op (``neg``, a product by a scalar) keeps a tensor uncoalesced; a non-linear one
(``sqrt``, ``abs``, ...) coalesces first, as ``f(a) + f(b) != f(a + b)``: PyTorch's rule.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ember import dtypes
from ember._tensor import Tensor, wrap
from ember.backends.sparse.coo import SparseCOO, coalesce_arrays, linear, unlinear
from ember.backends.sparse.creation import coo, make
from ember.backends.sparse.variants import write
from ember.dispatch.keys import DispatchKey
from ember.ops.registry import OpOverload, impl, ops

aten = ops.aten
SPARSE = DispatchKey.SparseCPU


def _values_op(op: OpOverload, values: np.ndarray, *args: Any, **kwargs: Any) -> np.ndarray:
    """``op`` on the values as a dense tensor (PyTorch's dtype rules), back as an array."""
    return op._dispatch(wrap(values), *args, **kwargs)._edata  # type: ignore[no-any-return]


def _check_same_shape(name: str, a: Any, b: Any) -> None:
    if tuple(a.shape) != tuple(b.shape):
        raise RuntimeError(
            f"{name}: expected sizes of 'self' and 'other' to match, but {list(a.shape)} != "
            f"{list(b.shape)}"
        )


def _is_sparse(x: Any) -> bool:
    return isinstance(x, Tensor) and type(x._edata) is SparseCOO


def _scalar(x: Any) -> Any:
    """A Python number or a 0-d dense tensor, as the number (None if neither)."""
    if isinstance(x, Tensor):
        if type(x._edata) is np.ndarray and x._edata.ndim == 0:
            return x
        return None
    return x


#: value dtypes a sum of two sparse tensors takes (PyTorch's; the numba merge's)
_MERGED = frozenset(
    np.dtype(t)
    for t in (np.float32, np.float64, np.complex64, np.complex128, np.int8, np.int16, np.int32,
              np.int64, np.uint8)
)  # fmt: skip


def _merge(a: SparseCOO, b: SparseCOO, vb: np.ndarray, npdt: Any) -> Any:
    """``a + b`` with ``b``'s values ``vb``, entry by entry as PyTorch merges them
    (``merge.py``): coalesced operands give their coalesced union."""
    va = a.values.astype(npdt, copy=False)
    vb = vb.astype(npdt, copy=False)
    coalesced = a.coalesced and b.coalesced
    if np.dtype(npdt) not in _MERGED:  # bool, float16, bfloat16: PyTorch refuses them too
        short = dtypes.FROM_NUMPY[np.dtype(npdt)]._short
        raise NotImplementedError(f"\"cadd_sparse\" not implemented for '{short}'")
    from ember.backends.sparse.merge import merge  # numba: compiled on first use

    sizes = a.shape[: a.sparse_dim]
    keys, values = merge(linear(a.indices, sizes), linear(b.indices, sizes),
                         np.ascontiguousarray(va.reshape(va.shape[0], -1)),
                         np.ascontiguousarray(vb.reshape(vb.shape[0], -1)))  # fmt: skip
    values = values.reshape(keys.shape[0], *a.values.shape[1:])
    return make(unlinear(keys, sizes), values, a.shape, coalesced)


def _add(name: str, self: Tensor, other: Tensor, alpha: Any, sign: int) -> Tensor:
    if not _is_sparse(self):
        return _dense_plus_sparse(name, self, other, alpha, sign)
    if not _is_sparse(other):
        raise RuntimeError(
            f"{name}(sparse, dense) is not supported. Use {name}(dense, sparse) instead."
            if name == "add"
            else "add(sparse, dense) is not supported. Use add(dense, sparse) instead."
        )
    a, b = coo(self), coo(other)
    _check_same_shape(name, self, other)
    if a.sparse_dim != b.sparse_dim or a.dense_dim != b.dense_dim:
        raise RuntimeError(
            f"{name}: expected both sparse tensors to have the same sparse_dim and dense_dim, "
            f"got ({a.sparse_dim}, {a.dense_dim}) and ({b.sparse_dim}, {b.dense_dim})"
        )
    npdt = dtypes.promote_types(self.dtype, other.dtype).np
    factor = sign * (1 if alpha is None else alpha)
    vb = b.values if factor == 1 else _values_op(aten.mul.Tensor, b.values, factor)
    return _merge(a, b, vb, npdt)  # type: ignore[no-any-return]


def _scaled_entries(name: str, self: Tensor, other: Tensor, alpha: Any, sign: int) -> Any:
    """The coalesced indices and ``sign * alpha``-scaled values of sparse ``other``, to add
    into dense ``self`` (PyTorch's shape check first)."""
    _check_same_shape(name, self, other)
    b = coo(other)
    indices, values = (b.indices, b.values) if b.coalesced else coalesce_arrays(b)
    factor = sign * (1 if alpha is None else alpha)
    if factor != 1:
        values = _values_op(aten.mul.Tensor, values, factor)
    return tuple(indices), values


def _dense_plus_sparse(name: str, self: Tensor, other: Tensor, alpha: Any, sign: int) -> Tensor:
    """``dense + alpha * sparse``: a dense result (``other``'s entries added at its indices;
    coalesced first, so each index is written once)."""
    index, values = _scaled_entries(name, self, other, alpha, sign)
    npdt = dtypes.promote_types(self.dtype, other.dtype).np
    out = np.array(self._edata, dtype=npdt, copy=True)
    out[index] += values.astype(npdt, copy=False)
    return wrap(out)


def _add_into(name: str, sign: int) -> Any:
    """``dense.add_(sparse)`` (``sub_``) in place, without a dense temporary: what an
    optimizer's step with a sparse gradient runs; a sparse ``self`` takes the functional
    result."""

    def kernel(self: Tensor, other: Tensor, *, alpha: Any = 1) -> Tensor:
        if _is_sparse(self):
            write(self, _add(name, self, other, alpha, sign), f"{name}_", False)
            return self
        index, values = _scaled_entries(name, self, other, alpha, sign)
        result = dtypes.promote_types(self.dtype, other.dtype)
        if not dtypes.can_cast(result, self.dtype):
            raise RuntimeError(
                f"{name}_: result type {result._short} can't be cast to the desired output "
                f"type {self.dtype._short}"
            )
        dst = self._edata
        dst[index] += values.astype(dst.dtype, copy=False)
        self._bump_version()
        return self

    return kernel


@impl(aten.add.Tensor, SPARSE)
def add(self: Tensor, other: Tensor, *, alpha: Any = 1) -> Tensor:
    return _add("add", self, other, alpha, 1)


@impl(aten.sub.Tensor, SPARSE)
def sub(self: Tensor, other: Tensor, *, alpha: Any = 1) -> Tensor:
    return _add("sub", self, other, alpha, -1)


impl(aten.add_.Tensor, SPARSE, _add_into("add", 1))
impl(aten.sub_.Tensor, SPARSE, _add_into("sub", -1))


def _times(self: Tensor, factor: Any, op: OpOverload) -> Tensor:
    c = coo(self)
    return make(c.indices, _values_op(op, c.values, factor), c.shape, c.coalesced)


@impl(aten.mul.Tensor, SPARSE)
def mul(self: Tensor, other: Any) -> Tensor:
    """sparse * sparse (the common entries, coalesced), sparse * scalar, sparse * dense and
    dense * sparse (the dense values at the sparse entries: a sparse result)."""
    if not _is_sparse(self):
        self, other = other, self
    s = _scalar(other)
    if s is not None:
        return _times(self, s, aten.mul.Tensor)
    a = coo(self)
    _check_same_shape("mul", self, other)
    if not _is_sparse(other):  # dense: its values at the sparse entries
        dense = other._edata[tuple(a.indices)]
        values = _values_op(aten.mul.Tensor, a.values, wrap(np.ascontiguousarray(dense)))
        return make(a.indices, values, a.shape, a.coalesced)
    b = coo(other)
    ai, av = (a.indices, a.values) if a.coalesced else coalesce_arrays(a)
    bi, bv = (b.indices, b.values) if b.coalesced else coalesce_arrays(b)
    sizes = a.shape[: a.sparse_dim]
    _, ia, ib = np.intersect1d(linear(ai, sizes), linear(bi, sizes), return_indices=True)
    values = _values_op(aten.mul.Tensor, av[ia], wrap(bv[ib]))
    return make(ai[:, ia], values, a.shape, True)


@impl(aten.mul.Scalar, SPARSE)
def mul_scalar(self: Tensor, other: Any) -> Tensor:
    return _times(self, other, aten.mul.Scalar)


@impl(aten.div.Tensor, SPARSE)
def div(self: Tensor, other: Any) -> Tensor:
    s = _scalar(other)
    if not _is_sparse(self) or s is None:
        raise RuntimeError(
            "Sparse division requires a scalar or zero-dim dense tensor divisor (got shape "
            f"{list(other.shape)} for divisor)"
        )
    return _times(self, s, aten.div.Tensor)


@impl(aten.div.Scalar, SPARSE)
def div_scalar(self: Tensor, other: Any) -> Tensor:
    return _times(self, other, aten.div.Scalar)


def _unary(op: OpOverload, linear_op: bool) -> None:
    def kernel(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        c = coo(self)
        if linear_op or c.coalesced:
            indices, values = c.indices, c.values
        else:
            indices, values = coalesce_arrays(c)
        out = _values_op(op, values, *args, **kwargs)
        return make(indices, out, c.shape, c.coalesced or not linear_op)

    impl(op, SPARSE, kernel)


#: the unary ops PyTorch has COO kernels for that map zero to zero; linear ones first
_LINEAR = ("neg",)
_NONLINEAR = (
    "abs", "sqrt", "sin", "sinh", "tan", "tanh", "asin", "asinh", "atan", "atanh", "expm1",
    "log1p", "ceil", "floor", "round", "trunc", "frac", "sign", "sgn", "erf", "erfinv",
    "deg2rad", "rad2deg", "relu", "square", "nan_to_num", "isnan", "isinf", "isposinf",
    "isneginf", "signbit",
)  # fmt: skip
for _name in _LINEAR:
    _unary(getattr(aten, _name).default, True)
for _name in _NONLINEAR:
    _packet = getattr(aten, _name, None)
    if _packet is not None and hasattr(_packet, "default"):
        _unary(_packet.default, False)


@impl(aten.pow.Tensor_Scalar, SPARSE)
def pow_scalar(self: Tensor, exponent: Any) -> Tensor:
    if exponent == 0:
        raise RuntimeError("pow: a sparse tensor to the power 0 would be dense (0 ** 0 == 1)")
    c = coo(self)
    indices, values = (c.indices, c.values) if c.coalesced else coalesce_arrays(c)
    return make(indices, _values_op(aten.pow.Tensor_Scalar, values, exponent), c.shape, True)
