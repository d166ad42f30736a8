"""Meta rules of the fft ops: shapes, strides (NOTE [fft result layout]) and dtypes from the
checks the CPU kernels share (``ember/ops/native/fft.py``)."""

from __future__ import annotations

from typing import Any

from ember._shape_only import ShapeOnlyArray
from ember._tensor import Tensor, wrap_shape_only
from ember.dispatch.keys import DispatchKey
from ember.library import impl
from ember.ops.native.fft import c2c_plan, c2r_plan, fftfreq_plan, r2c_plan
from ember.ops.registry import ops

aten = ops.aten
Meta = DispatchKey.Meta


@impl(aten._fft_c2c.default, Meta)
def _fft_c2c(self: Tensor, dim: list[int], normalization: int, forward: bool) -> Tensor:
    shape, strides, d = c2c_plan(self, dim)
    return wrap_shape_only(ShapeOnlyArray(shape, d.np, strides))


@impl(aten._fft_r2c.default, Meta)
def _fft_r2c(self: Tensor, dim: list[int], normalization: int, onesided: bool) -> Tensor:
    shape, strides, d = r2c_plan(self, dim, onesided)
    return wrap_shape_only(ShapeOnlyArray(shape, d.np, strides))


@impl(aten._fft_c2r.default, Meta)
def _fft_c2r(self: Tensor, dim: list[int], normalization: int, last_dim_size: int) -> Tensor:
    shape, strides, d = c2r_plan(self, dim, last_dim_size)
    return wrap_shape_only(ShapeOnlyArray(shape, d.np, strides))


@impl(aten.fft_fftfreq.default, Meta)
def fft_fftfreq(n: int, d: float = 1.0, **options: Any) -> Tensor:
    return wrap_shape_only(ShapeOnlyArray((n,), fftfreq_plan(n, "fftfreq", options).np))


@impl(aten.fft_rfftfreq.default, Meta)
def fft_rfftfreq(n: int, d: float = 1.0, **options: Any) -> Tensor:
    shape = (n // 2 + 1,)  # (n = 0 gives one NaN, as in PyTorch)
    return wrap_shape_only(ShapeOnlyArray(shape, fftfreq_plan(n, "rfftfreq", options).np))
