"""Meta rules of the creation ops: the CPU kernels' shapes, dtypes and checks, no data.

Factories reach these with ``device='meta'``; ``*_like``/``new_*`` ops with a meta ``self``.
Random rules draw nothing, so they leave the generator's state alone.
"""

from __future__ import annotations

from typing import Any

from ember import dtypes
from ember._shape_only import ShapeOnlyArray
from ember._tensor import Tensor, wrap_shape_only
from ember.dispatch.keys import DispatchKey
from ember.library import impl
from ember.ops.native.creation import (
    arange_plan,
    check_eye,
    check_fill,
    check_layout,
    check_memory_format,
    check_randint,
    check_steps,
    check_uniform,
    dtype_of,
    like_strides,
    scalar_dtype,
    size_of,
    strided_extent,
)
from ember.ops.registry import ops

aten = ops.aten
Meta = DispatchKey.Meta
_Opt = Any


def _meta(
    shape: tuple[int, ...], d: dtypes.dtype, strides: tuple[int, ...] | None = None
) -> Tensor:
    return wrap_shape_only(ShapeOnlyArray(shape, d.np, strides))


def _sized(op: str, check: Any = None) -> Any:
    """The rule of a factory whose result is ``size`` in ``dtype`` (default dtype if None)."""

    def rule(
        size: Any,
        *,
        dtype: _Opt = None,
        layout: _Opt = None,
        device: _Opt = None,
        pin_memory: _Opt = None,
        generator: Any = None,
        memory_format: _Opt = None,
    ) -> Tensor:
        check_layout(layout, op)
        d = dtype_of(dtype, dtypes.get_default_dtype())
        if check is not None:
            check(d)
        if op == "empty":
            check_memory_format(memory_format, op)
        return _meta(size_of(size, op), d)

    rule.__name__ = op
    return rule


def _uniform(d: dtypes.dtype) -> None:
    check_uniform(d, "check_uniform_bounds")


def _normal(d: dtypes.dtype) -> None:
    check_uniform(d, "normal_kernel_cpu")


impl(aten.zeros.default, Meta, _sized("zeros"))
impl(aten.ones.default, Meta, _sized("ones"))
impl(aten.empty.memory_format, Meta, _sized("empty"))
impl(aten.rand.default, Meta, _sized("rand", _uniform))
impl(aten.rand.generator, Meta, _sized("rand", _uniform))
impl(aten.randn.default, Meta, _sized("randn", _normal))
impl(aten.randn.generator, Meta, _sized("randn", _normal))


@impl(aten.full.default, Meta)
def full(
    size: Any,
    fill_value: Any,
    *,
    dtype: _Opt = None,
    layout: _Opt = None,
    device: _Opt = None,
    pin_memory: _Opt = None,
) -> Tensor:
    check_layout(layout, "full")
    d = dtype_of(dtype, scalar_dtype(fill_value))
    check_fill(fill_value, d, "full")
    return _meta(size_of(size, "full"), d)


@impl(aten.empty_strided.default, Meta)
def empty_strided(
    size: Any,
    stride: Any,
    *,
    dtype: _Opt = None,
    layout: _Opt = None,
    device: _Opt = None,
    pin_memory: _Opt = None,
) -> Tensor:
    check_layout(layout, "empty_strided")
    shape = size_of(size, "empty_strided")
    strided_extent(shape, stride, "empty_strided")
    d = dtype_of(dtype, dtypes.get_default_dtype())
    return _meta(shape, d, tuple(int(s) for s in stride))


@impl(aten.scalar_tensor.default, Meta)
def scalar_tensor(
    s: Any, *, dtype: _Opt = None, layout: _Opt = None, device: _Opt = None, pin_memory: _Opt = None
) -> Tensor:
    check_layout(layout, "scalar_tensor")
    d = dtype_of(dtype, dtypes.get_default_dtype())
    check_fill(s, d, "scalar_tensor")
    return _meta((), d)


def _arange(start: Any, end: Any, step: Any, dtype: _Opt, layout: _Opt) -> Tensor:
    check_layout(layout, "arange")
    n, d, _, _ = arange_plan(start, end, step, dtype)
    return _meta((n,), d)


@impl(aten.arange.default, Meta)
def arange(
    end: Any,
    *,
    dtype: _Opt = None,
    layout: _Opt = None,
    device: _Opt = None,
    pin_memory: _Opt = None,
) -> Tensor:
    return _arange(0, end, 1, dtype, layout)


@impl(aten.arange.start, Meta)
def arange_start(
    start: Any,
    end: Any,
    *,
    dtype: _Opt = None,
    layout: _Opt = None,
    device: _Opt = None,
    pin_memory: _Opt = None,
) -> Tensor:
    return _arange(start, end, 1, dtype, layout)


@impl(aten.arange.start_step, Meta)
def arange_start_step(
    start: Any,
    end: Any,
    step: Any = 1,
    *,
    dtype: _Opt = None,
    layout: _Opt = None,
    device: _Opt = None,
    pin_memory: _Opt = None,
) -> Tensor:
    return _arange(start, end, step, dtype, layout)


@impl(aten.linspace.default, Meta)
def linspace(
    start: Any,
    end: Any,
    steps: int,
    *,
    dtype: _Opt = None,
    layout: _Opt = None,
    device: _Opt = None,
    pin_memory: _Opt = None,
) -> Tensor:
    check_layout(layout, "linspace")
    check_steps(steps)
    return _meta((steps,), dtype_of(dtype, dtypes.get_default_dtype()))


@impl(aten.eye.default, Meta)
def eye(
    n: int, *, dtype: _Opt = None, layout: _Opt = None, device: _Opt = None, pin_memory: _Opt = None
) -> Tensor:
    return eye_m(n, n, dtype=dtype, layout=layout)


@impl(aten.eye.m, Meta)
def eye_m(
    n: int,
    m: int,
    *,
    dtype: _Opt = None,
    layout: _Opt = None,
    device: _Opt = None,
    pin_memory: _Opt = None,
) -> Tensor:
    check_layout(layout, "eye")
    check_eye(n, m)
    return _meta((n, m), dtype_of(dtype, dtypes.get_default_dtype()))


def _randint(low: int, high: int, size: Any, dtype: _Opt, layout: _Opt) -> Tensor:
    check_layout(layout, "randint")
    d = dtype_of(dtype, dtypes.int64)
    check_randint(low, high, d)
    return _meta(size_of(size, "randint"), d)


@impl(aten.randint.default, Meta)
@impl(aten.randint.generator, Meta)
def randint(
    high: int,
    size: Any,
    *,
    generator: Any = None,
    dtype: _Opt = "long",
    layout: _Opt = None,
    device: _Opt = None,
    pin_memory: _Opt = None,
) -> Tensor:
    return _randint(0, high, size, dtype, layout)


@impl(aten.randint.low, Meta)
@impl(aten.randint.low_generator, Meta)
def randint_low(
    low: int,
    high: int,
    size: Any,
    *,
    generator: Any = None,
    dtype: _Opt = "long",
    layout: _Opt = None,
    device: _Opt = None,
    pin_memory: _Opt = None,
) -> Tensor:
    return _randint(low, high, size, dtype, layout)


# --------------------------------------------------------------------------- *_like, new_*


def _like(self: Tensor, op: str, dtype: _Opt, layout: _Opt, memory_format: _Opt) -> Tensor:
    check_layout(layout, op)
    d = dtype_of(dtype, self.dtype)
    shape = tuple(self.shape)
    return _meta(shape, d, like_strides(shape, self.stride(), memory_format, op))


def _like_rule(op: str, check: Any = None) -> Any:
    def rule(
        self: Tensor,
        *,
        generator: Any = None,
        dtype: _Opt = None,
        layout: _Opt = None,
        device: _Opt = None,
        pin_memory: _Opt = None,
        memory_format: _Opt = None,
    ) -> Tensor:
        if check is not None:
            check(dtype_of(dtype, self.dtype))
        return _like(self, op, dtype, layout, memory_format)

    rule.__name__ = op
    return rule


impl(aten.zeros_like.default, Meta, _like_rule("zeros_like"))
impl(aten.ones_like.default, Meta, _like_rule("ones_like"))
impl(aten.empty_like.default, Meta, _like_rule("empty_like"))
impl(aten.rand_like.default, Meta, _like_rule("rand_like", _uniform))
impl(aten.rand_like.generator, Meta, _like_rule("rand_like", _uniform))
impl(aten.randn_like.default, Meta, _like_rule("randn_like", _normal))
impl(aten.randn_like.generator, Meta, _like_rule("randn_like", _normal))


@impl(aten.full_like.default, Meta)
def full_like(
    self: Tensor,
    fill_value: Any,
    *,
    dtype: _Opt = None,
    layout: _Opt = None,
    device: _Opt = None,
    pin_memory: _Opt = None,
    memory_format: _Opt = None,
) -> Tensor:
    check_fill(fill_value, dtype_of(dtype, self.dtype), "full_like")
    return _like(self, "full_like", dtype, layout, memory_format)


@impl(aten.randint_like.default, Meta)
@impl(aten.randint_like.generator, Meta)
def randint_like(
    self: Tensor,
    high: int,
    *,
    generator: Any = None,
    dtype: _Opt = None,
    layout: _Opt = None,
    device: _Opt = None,
    pin_memory: _Opt = None,
    memory_format: _Opt = None,
) -> Tensor:
    return randint_like_low(self, 0, high, dtype=dtype, layout=layout, memory_format=memory_format)


@impl(aten.randint_like.low_dtype, Meta)
@impl(aten.randint_like.low_generator_dtype, Meta)
def randint_like_low(
    self: Tensor,
    low: int,
    high: int,
    *,
    generator: Any = None,
    dtype: _Opt = None,
    layout: _Opt = None,
    device: _Opt = None,
    pin_memory: _Opt = None,
    memory_format: _Opt = None,
) -> Tensor:
    check_randint(low, high, dtype_of(dtype, self.dtype), "randint_like")
    return _like(self, "randint_like", dtype, layout, memory_format)


def _new_rule(op: str) -> Any:
    def rule(
        self: Tensor,
        size: Any,
        *,
        dtype: _Opt = None,
        layout: _Opt = None,
        device: _Opt = None,
        pin_memory: _Opt = None,
    ) -> Tensor:
        check_layout(layout, op)
        return _meta(size_of(size, op), dtype_of(dtype, self.dtype))

    rule.__name__ = op
    return rule


impl(aten.new_zeros.default, Meta, _new_rule("new_zeros"))
impl(aten.new_ones.default, Meta, _new_rule("new_ones"))
impl(aten.new_empty.default, Meta, _new_rule("new_empty"))


@impl(aten.new_full.default, Meta)
def new_full(
    self: Tensor,
    size: Any,
    fill_value: Any,
    *,
    dtype: _Opt = None,
    layout: _Opt = None,
    device: _Opt = None,
    pin_memory: _Opt = None,
) -> Tensor:
    check_layout(layout, "new_full")
    d = dtype_of(dtype, self.dtype)
    check_fill(fill_value, d, "new_full")
    return _meta(size_of(size, "new_full"), d)
