"""Meta rules of the activation ops that are not pointwise (the pointwise ones get theirs from
``ember/backends/meta/pointwise.py``): shapes and dtypes from the checks the CPU kernels run."""

from __future__ import annotations

from collections.abc import Sequence

from ember._shape_only import ShapeOnlyArray
from ember._tensor import Tensor, wrap_shape_only
from ember.dispatch.keys import DispatchKey
from ember.dtypes import dtype
from ember.library import impl
from ember.ops.native.activation import check_floating, glu_dim
from ember.ops.native.promotion import POINTWISE, pointwise_dtypes
from ember.ops.registry import ops
from ember.ops.shapes import broadcast_shapes

aten = ops.aten
Meta = DispatchKey.Meta


def _new(shape: Sequence[int], d: dtype) -> Tensor:
    return wrap_shape_only(ShapeOnlyArray(tuple(shape), d.np))


@impl(aten.log_sigmoid_forward.default, Meta)
def log_sigmoid_forward(self: Tensor) -> tuple[Tensor, Tensor]:
    check_floating("log_sigmoid_forward", self.dtype)
    return _new(self.shape, self.dtype), _new(self.shape, self.dtype)


@impl(aten.glu.default, Meta)
def glu(self: Tensor, dim: int = -1) -> Tensor:
    d = glu_dim(tuple(self.shape), dim)
    check_floating("glu", self.dtype)
    shape = list(self.shape)
    shape[d] //= 2
    return _new(shape, self.dtype)


@impl(aten.glu_backward.default, Meta)
def glu_backward(grad_output: Tensor, self: Tensor, dim: int) -> Tensor:
    glu_dim(tuple(self.shape), dim)
    check_floating("glu_backward", self.dtype)
    return _new(self.shape, self.dtype)


@impl(aten._prelu_kernel_backward.default, Meta)
def _prelu_kernel_backward(
    grad_output: Tensor, self: Tensor, weight: Tensor
) -> tuple[Tensor, Tensor]:
    _, r = pointwise_dtypes("_prelu_kernel.default", POINTWISE["_prelu_kernel.default"],
                            (self, weight))  # fmt: skip
    shape = broadcast_shapes(grad_output.shape, self.shape, weight.shape, op="_prelu_kernel")
    return _new(shape, r), _new(shape, r)
