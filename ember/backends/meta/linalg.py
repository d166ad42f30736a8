"""Meta rules of the linear algebra ops: shapes and dtypes from the checks the CPU kernels
share (``ember/ops/native/linalg.py``). ``matmul`` and ``outer`` decompose, so need none."""

from __future__ import annotations

from typing import Any

from ember._shape_only import ShapeOnlyArray
from ember._tensor import Tensor, wrap_shape_only
from ember.dispatch.keys import DispatchKey
from ember.library import impl
from ember.ops.native import linalg as plans
from ember.ops.registry import ops

aten = ops.aten
Meta = DispatchKey.Meta


def _binary(shape_of: Any) -> Any:
    def rule(self: Tensor, other: Tensor) -> Tensor:
        shape = shape_of(tuple(self.shape), tuple(other.shape), self.dtype, other.dtype)
        return wrap_shape_only(ShapeOnlyArray(shape, self.dtype.np))

    return rule


impl(aten.mm.default, Meta, _binary(plans.mm_shape))
impl(aten.bmm.default, Meta, _binary(plans.bmm_shape))
impl(aten.mv.default, Meta, _binary(plans.mv_shape))
impl(aten.dot.default, Meta, _binary(plans.dot_shape))
impl(aten.vdot.default, Meta, _binary(plans.vdot_shape))


@impl(aten.addmm.default, Meta)
def addmm(self: Tensor, mat1: Tensor, mat2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
    shape = plans.addmm_shape(
        self.shape, mat1.shape, mat2.shape, self.dtype, mat1.dtype, mat2.dtype
    )
    return wrap_shape_only(ShapeOnlyArray(shape, self.dtype.np))


def _scaled(check: Any) -> Any:
    def rule(self: Tensor, a: Tensor, b: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
        shape = check(self.shape, a.shape, b.shape, self.dtype, a.dtype, b.dtype)
        return wrap_shape_only(ShapeOnlyArray(shape, a.dtype.np))

    return rule


impl(aten.baddbmm.default, Meta, _scaled(plans.baddbmm_shape))
impl(aten.addbmm.default, Meta, _scaled(plans.addbmm_shape))
impl(aten.addmv.default, Meta, _scaled(plans.addmv_shape))


@impl(aten.addr.default, Meta)
def addr(self: Tensor, vec1: Tensor, vec2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
    shape, d = plans.addr_shape(
        self.shape, vec1.shape, vec2.shape, self.dtype, vec1.dtype, vec2.dtype, beta, alpha
    )
    return wrap_shape_only(ShapeOnlyArray(shape, d.np))


@impl(aten.einsum.default, Meta)
def einsum(equation: str, tensors: list[Tensor], *, path: Any = None) -> Tensor:
    dts = [t.dtype for t in tensors]
    shape = plans.einsum_shape(equation, [tuple(t.shape) for t in tensors], dts)
    res = plans.einsum_dtype(equation, [tuple(t.shape) for t in tensors], dts)
    return wrap_shape_only(ShapeOnlyArray(shape, res.np))
