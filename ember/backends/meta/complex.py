"""Meta rules of ``complex``, ``polar`` and ``view_as_complex``: the CPU kernels' checks,
shapes, dtypes and the view's strides."""

from __future__ import annotations

from ember._shape_only import ShapeOnlyArray
from ember._tensor import Tensor, wrap_shape_only, wrap_view
from ember.backends.meta.views import layout
from ember.dispatch.keys import DispatchKey
from ember.library import impl
from ember.ops.native.complex import parts_plan, view_as_complex_layout
from ember.ops.registry import ops

aten = ops.aten
Meta = DispatchKey.Meta


@impl(aten.complex.default, Meta)
def complex_(real: Tensor, imag: Tensor) -> Tensor:
    shape, d = parts_plan(real, imag, "complex")
    return wrap_shape_only(ShapeOnlyArray(shape, d.np))


@impl(aten.polar.default, Meta)
def polar(abs: Tensor, angle: Tensor) -> Tensor:
    shape, d = parts_plan(abs, angle, "polar")
    return wrap_shape_only(ShapeOnlyArray(shape, d.np))


@impl(aten.view_as_complex.default, Meta)
def view_as_complex(self: Tensor) -> Tensor:
    shape, strides, offset = view_as_complex_layout(layout(self), self.dtype)
    d = self._edata
    arr = ShapeOnlyArray(shape, self.dtype.to_complex().np, strides, offset, d.device)
    return wrap_view(self, arr)
