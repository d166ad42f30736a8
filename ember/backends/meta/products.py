"""Meta rules of the pairwise distances: shapes and dtypes from ``cdist_plan``, which the CPU
kernels check too (``ember/ops/native/products.py``)."""

from __future__ import annotations

from ember._shape_only import ShapeOnlyArray
from ember._tensor import Tensor, wrap_shape_only
from ember.dispatch.keys import DispatchKey
from ember.library import impl
from ember.ops.native.products import cdist_plan, euclidean_shape, pdist_half_check
from ember.ops.registry import ops
from ember.ops.shapes import broadcast_shapes

aten = ops.aten
Meta = DispatchKey.Meta


@impl(aten._cdist_forward.default, Meta)
def cdist_forward(x1: Tensor, x2: Tensor, p: float, compute_mode: int | None) -> Tensor:
    shape, _ = cdist_plan(x1, x2, p, compute_mode)
    return wrap_shape_only(ShapeOnlyArray(shape, x1._edata.dtype))


@impl(aten._cdist_backward.default, Meta)
def cdist_backward(grad: Tensor, x1: Tensor, x2: Tensor, p: float, cdist: Tensor) -> Tensor:
    batch = broadcast_shapes(tuple(x1.shape[:-2]), tuple(x2.shape[:-2]), op="_cdist_backward")
    return wrap_shape_only(ShapeOnlyArray((*batch, *x1.shape[-2:]), x1._edata.dtype))


@impl(aten._euclidean_dist.default, Meta)
def euclidean_dist(x1: Tensor, x2: Tensor) -> Tensor:
    shape, d = euclidean_shape(x1, x2)
    return wrap_shape_only(ShapeOnlyArray(shape, d.np))


@impl(aten._pdist_forward.default, Meta)
def pdist_forward(self: Tensor, p: float = 2) -> Tensor:
    pdist_half_check(self)
    n = self.shape[0]
    return wrap_shape_only(ShapeOnlyArray((n * (n - 1) // 2,), self._edata.dtype))


@impl(aten._pdist_backward.default, Meta)
def pdist_backward(grad: Tensor, self: Tensor, p: float, pdist: Tensor) -> Tensor:
    pdist_half_check(self)
    return wrap_shape_only(ShapeOnlyArray(tuple(self.shape), self._edata.dtype))
