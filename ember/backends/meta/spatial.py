"""Meta rules of the spatial nn ops: result shapes and dtypes from the same checks the CPU
kernels run (``ember/ops/native/spatial.py``), so both raise the same errors."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ember import dtypes
from ember._tensor import Tensor
from ember.backends.meta._derive import like, meta_rule, new
from ember.backends.meta.nn import register_pooling_rules
from ember.dispatch.keys import DispatchKey
from ember.library import impl
from ember.ops.native import nn_geometry
from ember.ops.native.spatial import (
    UPSAMPLE,
    adaptive_output,
    check_channel_shuffle,
    check_floating,
    check_fractional_backward,
    check_grad_output,
    check_not_bool,
    check_upsample_dtype,
    fractional_output,
    pad_output,
    pixel_shuffle_shape,
    upsample_check,
)
from ember.ops.registry import ops

aten = ops.aten
Meta = DispatchKey.Meta


g = nn_geometry
register_pooling_rules(3)
meta_rule(aten.native_group_norm.default, g.native_group_norm)
meta_rule(aten.native_group_norm_backward.default, g.native_group_norm_backward)


def _register_adaptive(n: int) -> None:
    avg, mx = f"adaptive_avg_pool{n}d", f"adaptive_max_pool{n}d"

    def avg_forward(self: Tensor, output_size: Sequence[int]) -> Tensor:
        shape = adaptive_output(self.shape, output_size, n, avg)
        check_floating(self, avg)
        return new(shape, self.dtype)

    def avg_backward(grad_output: Tensor, self: Tensor) -> Tensor:
        shape = adaptive_output(self.shape, grad_output.shape[-n:], n, avg + "_backward")
        check_grad_output(grad_output, shape, avg + "_backward")
        return like(self)

    def max_forward(self: Tensor, output_size: Sequence[int]) -> tuple[Tensor, Tensor]:
        shape = adaptive_output(self.shape, output_size, n, mx)
        check_floating(self, mx)
        return new(shape, self.dtype), new(shape, dtypes.int64)

    def max_backward(grad_output: Tensor, self: Tensor, indices: Tensor) -> Tensor:
        check_grad_output(grad_output, indices.shape, mx + "_backward")
        return like(self)

    impl(getattr(aten, "_" + avg).default, Meta, avg_forward)
    impl(getattr(aten, "_" + avg + "_backward").default, Meta, avg_backward)
    impl(getattr(aten, mx).default, Meta, max_forward)
    impl(getattr(aten, mx + "_backward").default, Meta, max_backward)


for _n in (2, 3):
    _register_adaptive(_n)


def _register_fractional(n: int) -> None:
    name = f"fractional_max_pool{n}d"

    def forward(
        self: Tensor, kernel_size: Sequence[int], output_size: Sequence[int], random_samples: Tensor
    ) -> tuple[Tensor, Tensor]:
        shape = fractional_output(self, kernel_size, output_size, random_samples, n)
        check_floating(self, name)
        return new(shape, self.dtype), new(shape, dtypes.int64)

    def backward(
        grad_output: Tensor,
        self: Tensor,
        kernel_size: Sequence[int],
        output_size: Sequence[int],
        indices: Tensor,
    ) -> Tensor:
        check_fractional_backward(grad_output, self, indices, name)
        return like(self)

    impl(getattr(aten, name).default, Meta, forward)
    impl(getattr(aten, name + "_backward").default, Meta, backward)


for _n in (2, 3):
    _register_fractional(_n)


def _register_pad(n: int, reflect: bool) -> None:
    name = f"{'reflection' if reflect else 'replication'}_pad{n}d"

    def forward(self: Tensor, padding: Sequence[int]) -> Tensor:
        shape = pad_output(self.shape, padding, n, name, reflect)
        check_not_bool(self, name)
        return new(shape, self.dtype)

    def backward(grad_output: Tensor, self: Tensor, padding: Sequence[int]) -> Tensor:
        shape = pad_output(self.shape, padding, n, name + "_backward", reflect)
        check_grad_output(grad_output, shape, name + "_backward")
        return like(self)

    impl(getattr(aten, name).default, Meta, forward)
    impl(getattr(aten, name + "_backward").default, Meta, backward)


for _n in (1, 2, 3):
    for _reflect in (True, False):
        _register_pad(_n, _reflect)


def _register_upsample(name: str, n: int, kind: str) -> None:
    def forward(self: Tensor, output_size: Sequence[int], *rest: Any) -> Tensor:
        shape = upsample_check(self.shape, output_size, n, name)
        check_upsample_dtype(self, kind, name)
        return new(shape, self.dtype)

    def backward(
        grad_output: Tensor, output_size: Sequence[int], input_size: Sequence[int], *rest: Any
    ) -> Tensor:
        shape = upsample_check(input_size, output_size, n, name + "_backward")
        check_grad_output(grad_output, shape, name + "_backward")
        return new(tuple(input_size), grad_output.dtype)

    impl(getattr(aten, name).default, Meta, forward)
    impl(getattr(aten, name + "_backward").default, Meta, backward)


for _name, _n, _kind in UPSAMPLE:
    _register_upsample(_name, _n, _kind)


for _n in (2, 3):
    meta_rule(getattr(aten, f"grid_sampler_{_n}d").default, g.grid_sampler(_n))
    meta_rule(getattr(aten, f"grid_sampler_{_n}d_backward").default, g.grid_sampler_backward(_n))
meta_rule(aten.im2col.default, g.im2col)
meta_rule(aten.col2im.default, g.col2im)


@impl(aten.channel_shuffle.default, Meta)
def channel_shuffle(self: Tensor, groups: int) -> Tensor:
    check_channel_shuffle(self.shape, groups)
    return new(tuple(self.shape), self.dtype)


@impl(aten.pixel_shuffle.default, Meta)
def pixel_shuffle(self: Tensor, upscale_factor: int) -> Tensor:
    return new(pixel_shuffle_shape(self.shape, upscale_factor, "pixel_shuffle", True), self.dtype)


@impl(aten.pixel_unshuffle.default, Meta)
def pixel_unshuffle(self: Tensor, downscale_factor: int) -> Tensor:
    shape = pixel_shuffle_shape(self.shape, downscale_factor, "pixel_unshuffle", False)
    return new(shape, self.dtype)
