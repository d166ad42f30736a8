"""CPU kernels of the creation ops: NumPy allocations, ranges and random draws.

Checks that need no values live in ``ember/ops/native/creation.py`` and are shared with the
Meta rules. Random kernels draw from an ``ember.random.Generator`` (the default one when
``generator`` is None); see ``ember/random.py`` for what is and is not reproduced.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ember import dtypes
from ember.backends.cpu._util import Tensor, wrap
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
from ember.random import Generator, _generator

aten = ops.aten
CPU = DispatchKey.CPU
_Opt = Any  # dtype / layout / device / pin_memory / memory_format options


def _default() -> dtypes.dtype:
    return dtypes.get_default_dtype()


def _strided(shape: tuple[int, ...], strides: tuple[int, ...], arr: np.ndarray) -> np.ndarray:
    """``arr`` (a flat buffer) seen with ``shape`` and element ``strides``."""
    item = arr.itemsize
    return np.lib.stride_tricks.as_strided(arr, shape, tuple(s * item for s in strides))


# --------------------------------------------------------------------------- from a size


def _filled(op: str, size: Any, value: Any, dtype: _Opt, layout: _Opt) -> Tensor:
    check_layout(layout, op)
    d = dtype_of(dtype, _default())
    return wrap(np.full(size_of(size, op), value, d.np))


@impl(aten.zeros.default, CPU)
def zeros(
    size: Any,
    *,
    dtype: _Opt = None,
    layout: _Opt = None,
    device: _Opt = None,
    pin_memory: _Opt = None,
) -> Tensor:
    check_layout(layout, "zeros")
    return wrap(np.zeros(size_of(size, "zeros"), dtype_of(dtype, _default()).np))


@impl(aten.ones.default, CPU)
def ones(
    size: Any,
    *,
    dtype: _Opt = None,
    layout: _Opt = None,
    device: _Opt = None,
    pin_memory: _Opt = None,
) -> Tensor:
    check_layout(layout, "ones")
    return wrap(np.ones(size_of(size, "ones"), dtype_of(dtype, _default()).np))


@impl(aten.full.default, CPU)
def full(
    size: Any,
    fill_value: Any,
    *,
    dtype: _Opt = None,
    layout: _Opt = None,
    device: _Opt = None,
    pin_memory: _Opt = None,
) -> Tensor:
    d = dtype_of(dtype, scalar_dtype(fill_value))
    return _filled("full", size, check_fill(fill_value, d, "full"), d, layout)


@impl(aten.empty.memory_format, CPU)
def empty(
    size: Any,
    *,
    dtype: _Opt = None,
    layout: _Opt = None,
    device: _Opt = None,
    pin_memory: _Opt = None,
    memory_format: _Opt = None,
) -> Tensor:
    check_layout(layout, "empty")
    check_memory_format(memory_format, "empty")
    return wrap(np.empty(size_of(size, "empty"), dtype_of(dtype, _default()).np))


@impl(aten.empty_strided.default, CPU)
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
    n = strided_extent(shape, stride, "empty_strided")
    buf = np.empty(max(n, 1), dtype_of(dtype, _default()).np)
    return wrap(_strided(shape, tuple(int(s) for s in stride), buf))


@impl(aten.scalar_tensor.default, CPU)
def scalar_tensor(
    s: Any, *, dtype: _Opt = None, layout: _Opt = None, device: _Opt = None, pin_memory: _Opt = None
) -> Tensor:
    d = dtype_of(dtype, _default())
    return _filled("scalar_tensor", (), check_fill(s, d, "scalar_tensor"), d, layout)


# --------------------------------------------------------------------------- ranges


def _arange(start: Any, end: Any, step: Any, dtype: _Opt, layout: _Opt) -> Tensor:
    check_layout(layout, "arange")
    n, d, start, step = arange_plan(start, end, step, dtype)
    if d.category == dtypes.INTEGRAL:
        r = start + step * np.arange(n, dtype=np.int64)
    else:
        r = start + step * np.arange(n, dtype=np.float64)  # PyTorch's accumulate type
    return wrap(r.astype(d.np))


@impl(aten.arange.default, CPU)
def arange(
    end: Any,
    *,
    dtype: _Opt = None,
    layout: _Opt = None,
    device: _Opt = None,
    pin_memory: _Opt = None,
) -> Tensor:
    return _arange(0, end, 1, dtype, layout)


@impl(aten.arange.start, CPU)
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


@impl(aten.arange.start_step, CPU)
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


@impl(aten.linspace.default, CPU)
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
    """Symmetric formula: the first half counts up from ``start``, the second half down from
    ``end``, so both endpoints are exact (PyTorch's CPU kernel does the same)."""
    check_layout(layout, "linspace")
    check_steps(steps)
    d = dtype_of(dtype, _default())
    start, end = _num(start), _num(end)
    if d.category == dtypes.COMPLEX:
        ct = d.np
    elif d.category == dtypes.FLOATING:
        ct = d.np
    else:  # integers: truncate the endpoints, step in double precision
        start, end, ct = int(_real(start)), int(_real(end)), np.dtype(np.float64)
    if d.category < dtypes.COMPLEX:
        start, end = _real(start), _real(end)
    if steps == 1:
        return wrap(np.full((1,), start, ct).astype(d.np))
    i = np.arange(steps)
    s, e = np.asarray(start, ct), np.asarray(end, ct)
    step = (e - s) / np.asarray(max(steps - 1, 1), ct)
    with np.errstate(all="ignore"):
        r = np.where(i < steps // 2, s + step * i.astype(ct), e - step * (steps - 1 - i).astype(ct))
    if d.category == dtypes.INTEGRAL or d is dtypes.bool_:
        r = np.trunc(r)
    return wrap(np.asarray(r).astype(d.np))


def _num(x: Any) -> Any:
    return x.item() if isinstance(x, Tensor) else x


def _real(x: Any) -> Any:
    return x.real if isinstance(x, complex) else x


def _eye(n: int, m: int, dtype: _Opt, layout: _Opt) -> Tensor:
    check_layout(layout, "eye")
    check_eye(n, m)
    return wrap(np.eye(n, m, dtype=dtype_of(dtype, _default()).np))


@impl(aten.eye.default, CPU)
def eye(
    n: int, *, dtype: _Opt = None, layout: _Opt = None, device: _Opt = None, pin_memory: _Opt = None
) -> Tensor:
    return _eye(n, n, dtype, layout)


@impl(aten.eye.m, CPU)
def eye_m(
    n: int,
    m: int,
    *,
    dtype: _Opt = None,
    layout: _Opt = None,
    device: _Opt = None,
    pin_memory: _Opt = None,
) -> Tensor:
    return _eye(n, m, dtype, layout)


# --------------------------------------------------------------------------- random draws


def uniform_array(shape: tuple[int, ...], d: dtypes.dtype, rng: np.random.Generator) -> np.ndarray:
    """Uniform in [0, 1) with every value exactly representable in ``d`` (never 1.0)."""
    if d.category == dtypes.COMPLEX:
        real = d.to_real()
        return uniform_array(shape, real, rng) + 1j * uniform_array(shape, real, rng)
    if d is dtypes.float16:  # 11 random bits, so rounding to half can't reach 1.0
        return (rng.integers(0, 2**11, shape) * 2.0**-11).astype(np.float16)
    return rng.random(shape, dtype=d.np)


def normal_array(shape: tuple[int, ...], d: dtypes.dtype, rng: np.random.Generator) -> np.ndarray:
    """Standard normal; complex draws have variance 1 split evenly between the parts."""
    if d.category == dtypes.COMPLEX:
        real = d.to_real()
        parts = normal_array(shape, real, rng) + 1j * normal_array(shape, real, rng)
        return (parts * np.sqrt(0.5)).astype(d.np)
    if d is dtypes.float16:
        return rng.standard_normal(shape, dtype=np.float32).astype(np.float16)
    return rng.standard_normal(shape, dtype=d.np)


def _rand(op: str, size: Any, generator: Generator | None, dtype: _Opt, layout: _Opt) -> Tensor:
    check_layout(layout, op)
    d = dtype_of(dtype, _default())
    check_uniform(d, "check_uniform_bounds")
    return wrap(uniform_array(size_of(size, op), d, _generator(generator)))


def _randn(op: str, size: Any, generator: Generator | None, dtype: _Opt, layout: _Opt) -> Tensor:
    check_layout(layout, op)
    d = dtype_of(dtype, _default())
    check_uniform(d, "normal_kernel_cpu")
    return wrap(normal_array(size_of(size, op), d, _generator(generator)))


def _randint(
    op: str, low: int, high: int, size: Any, generator: Generator | None, dtype: _Opt, layout: _Opt
) -> Tensor:
    check_layout(layout, op)
    d = dtype_of(dtype, dtypes.int64)
    check_randint(low, high, d, op)
    r = _generator(generator).integers(low, high, size_of(size, op), dtype=np.int64)
    return wrap(r.astype(d.np))


@impl(aten.rand.default, CPU)
def rand(
    size: Any,
    *,
    dtype: _Opt = None,
    layout: _Opt = None,
    device: _Opt = None,
    pin_memory: _Opt = None,
) -> Tensor:
    return _rand("rand", size, None, dtype, layout)


@impl(aten.rand.generator, CPU)
def rand_generator(
    size: Any,
    *,
    generator: Generator | None,
    dtype: _Opt = None,
    layout: _Opt = None,
    device: _Opt = None,
    pin_memory: _Opt = None,
) -> Tensor:
    return _rand("rand", size, generator, dtype, layout)


@impl(aten.randn.default, CPU)
def randn(
    size: Any,
    *,
    dtype: _Opt = None,
    layout: _Opt = None,
    device: _Opt = None,
    pin_memory: _Opt = None,
) -> Tensor:
    return _randn("randn", size, None, dtype, layout)


@impl(aten.randn.generator, CPU)
def randn_generator(
    size: Any,
    *,
    generator: Generator | None,
    dtype: _Opt = None,
    layout: _Opt = None,
    device: _Opt = None,
    pin_memory: _Opt = None,
) -> Tensor:
    return _randn("randn", size, generator, dtype, layout)


@impl(aten.randint.default, CPU)
def randint(
    high: int,
    size: Any,
    *,
    dtype: _Opt = "long",
    layout: _Opt = None,
    device: _Opt = None,
    pin_memory: _Opt = None,
) -> Tensor:
    return _randint("randint", 0, high, size, None, dtype, layout)


@impl(aten.randint.generator, CPU)
def randint_generator(
    high: int,
    size: Any,
    *,
    generator: Generator | None,
    dtype: _Opt = "long",
    layout: _Opt = None,
    device: _Opt = None,
    pin_memory: _Opt = None,
) -> Tensor:
    return _randint("randint", 0, high, size, generator, dtype, layout)


@impl(aten.randint.low, CPU)
def randint_low(
    low: int,
    high: int,
    size: Any,
    *,
    dtype: _Opt = "long",
    layout: _Opt = None,
    device: _Opt = None,
    pin_memory: _Opt = None,
) -> Tensor:
    return _randint("randint", low, high, size, None, dtype, layout)


@impl(aten.randint.low_generator, CPU)
def randint_low_generator(
    low: int,
    high: int,
    size: Any,
    *,
    generator: Generator | None,
    dtype: _Opt = "long",
    layout: _Opt = None,
    device: _Opt = None,
    pin_memory: _Opt = None,
) -> Tensor:
    return _randint("randint", low, high, size, generator, dtype, layout)


# --------------------------------------------------------------------------- *_like


def _like(
    self: Tensor, op: str, dtype: _Opt, layout: _Opt, memory_format: _Opt, values: Any
) -> Tensor:
    """A new tensor shaped like ``self``; ``values(shape, dtype)`` gives its contents."""
    check_layout(layout, op)
    d = dtype_of(dtype, self.dtype)
    shape = tuple(self.shape)
    strides = like_strides(shape, self.stride(), memory_format, op)
    arr = np.asarray(values(shape, d), d.np)
    if strides == tuple(s // arr.itemsize for s in arr.strides) or arr.size <= 1:
        return wrap(arr)
    # same values, laid out in self's dimension order (preserve_format)
    order = sorted(range(len(shape)), key=lambda i: -strides[i])
    buf = np.ascontiguousarray(arr.transpose(order)).reshape(-1)
    return wrap(_strided(shape, strides, buf))


def _const(value: Any) -> Any:
    return lambda shape, d: np.full(shape, value, d.np)


@impl(aten.zeros_like.default, CPU)
def zeros_like(
    self: Tensor,
    *,
    dtype: _Opt = None,
    layout: _Opt = None,
    device: _Opt = None,
    pin_memory: _Opt = None,
    memory_format: _Opt = None,
) -> Tensor:
    return _like(self, "zeros_like", dtype, layout, memory_format, _const(0))


@impl(aten.ones_like.default, CPU)
def ones_like(
    self: Tensor,
    *,
    dtype: _Opt = None,
    layout: _Opt = None,
    device: _Opt = None,
    pin_memory: _Opt = None,
    memory_format: _Opt = None,
) -> Tensor:
    return _like(self, "ones_like", dtype, layout, memory_format, _const(1))


@impl(aten.empty_like.default, CPU)
def empty_like(
    self: Tensor,
    *,
    dtype: _Opt = None,
    layout: _Opt = None,
    device: _Opt = None,
    pin_memory: _Opt = None,
    memory_format: _Opt = None,
) -> Tensor:
    return _like(self, "empty_like", dtype, layout, memory_format, lambda s, d: np.empty(s, d.np))


@impl(aten.full_like.default, CPU)
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
    value = check_fill(fill_value, dtype_of(dtype, self.dtype), "full_like")
    return _like(self, "full_like", dtype, layout, memory_format, _const(value))


def _rand_like(
    self: Tensor,
    op: str,
    generator: Generator | None,
    dtype: _Opt,
    layout: _Opt,
    memory_format: _Opt,
) -> Tensor:
    check_uniform(dtype_of(dtype, self.dtype), "check_uniform_bounds")
    rng = _generator(generator)
    return _like(self, op, dtype, layout, memory_format, lambda s, d: uniform_array(s, d, rng))


def _randn_like(
    self: Tensor,
    op: str,
    generator: Generator | None,
    dtype: _Opt,
    layout: _Opt,
    memory_format: _Opt,
) -> Tensor:
    check_uniform(dtype_of(dtype, self.dtype), "normal_kernel_cpu")
    rng = _generator(generator)
    return _like(self, op, dtype, layout, memory_format, lambda s, d: normal_array(s, d, rng))


def _randint_like(
    self: Tensor,
    low: int,
    high: int,
    generator: Generator | None,
    dtype: _Opt,
    layout: _Opt,
    memory_format: _Opt,
) -> Tensor:
    check_randint(low, high, dtype_of(dtype, self.dtype), "randint_like")
    rng = _generator(generator)
    return _like(
        self,
        "randint_like",
        dtype,
        layout,
        memory_format,
        lambda s, d: rng.integers(low, high, s, dtype=np.int64),
    )


@impl(aten.rand_like.default, CPU)
def rand_like(
    self: Tensor,
    *,
    dtype: _Opt = None,
    layout: _Opt = None,
    device: _Opt = None,
    pin_memory: _Opt = None,
    memory_format: _Opt = None,
) -> Tensor:
    return _rand_like(self, "rand_like", None, dtype, layout, memory_format)


@impl(aten.rand_like.generator, CPU)
def rand_like_generator(
    self: Tensor,
    *,
    generator: Generator | None,
    dtype: _Opt = None,
    layout: _Opt = None,
    device: _Opt = None,
    pin_memory: _Opt = None,
    memory_format: _Opt = None,
) -> Tensor:
    return _rand_like(self, "rand_like", generator, dtype, layout, memory_format)


@impl(aten.randn_like.default, CPU)
def randn_like(
    self: Tensor,
    *,
    dtype: _Opt = None,
    layout: _Opt = None,
    device: _Opt = None,
    pin_memory: _Opt = None,
    memory_format: _Opt = None,
) -> Tensor:
    return _randn_like(self, "randn_like", None, dtype, layout, memory_format)


@impl(aten.randn_like.generator, CPU)
def randn_like_generator(
    self: Tensor,
    *,
    generator: Generator | None,
    dtype: _Opt = None,
    layout: _Opt = None,
    device: _Opt = None,
    pin_memory: _Opt = None,
    memory_format: _Opt = None,
) -> Tensor:
    return _randn_like(self, "randn_like", generator, dtype, layout, memory_format)


@impl(aten.randint_like.default, CPU)
def randint_like(
    self: Tensor,
    high: int,
    *,
    dtype: _Opt = None,
    layout: _Opt = None,
    device: _Opt = None,
    pin_memory: _Opt = None,
    memory_format: _Opt = None,
) -> Tensor:
    return _randint_like(self, 0, high, None, dtype, layout, memory_format)


@impl(aten.randint_like.low_dtype, CPU)
def randint_like_low(
    self: Tensor,
    low: int,
    high: int,
    *,
    dtype: _Opt = None,
    layout: _Opt = None,
    device: _Opt = None,
    pin_memory: _Opt = None,
    memory_format: _Opt = None,
) -> Tensor:
    return _randint_like(self, low, high, None, dtype, layout, memory_format)


@impl(aten.randint_like.generator, CPU)
def randint_like_generator(
    self: Tensor,
    high: int,
    *,
    generator: Generator | None,
    dtype: _Opt = None,
    layout: _Opt = None,
    device: _Opt = None,
    pin_memory: _Opt = None,
    memory_format: _Opt = None,
) -> Tensor:
    return _randint_like(self, 0, high, generator, dtype, layout, memory_format)


@impl(aten.randint_like.low_generator_dtype, CPU)
def randint_like_low_generator(
    self: Tensor,
    low: int,
    high: int,
    *,
    generator: Generator | None,
    dtype: _Opt = None,
    layout: _Opt = None,
    device: _Opt = None,
    pin_memory: _Opt = None,
    memory_format: _Opt = None,
) -> Tensor:
    return _randint_like(self, low, high, generator, dtype, layout, memory_format)


# --------------------------------------------------------------------------- new_*


@impl(aten.new_zeros.default, CPU)
def new_zeros(
    self: Tensor,
    size: Any,
    *,
    dtype: _Opt = None,
    layout: _Opt = None,
    device: _Opt = None,
    pin_memory: _Opt = None,
) -> Tensor:
    return zeros(size, dtype=dtype_of(dtype, self.dtype), layout=layout)


@impl(aten.new_ones.default, CPU)
def new_ones(
    self: Tensor,
    size: Any,
    *,
    dtype: _Opt = None,
    layout: _Opt = None,
    device: _Opt = None,
    pin_memory: _Opt = None,
) -> Tensor:
    return ones(size, dtype=dtype_of(dtype, self.dtype), layout=layout)


@impl(aten.new_full.default, CPU)
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
    return full(size, fill_value, dtype=dtype_of(dtype, self.dtype), layout=layout)


@impl(aten.new_empty.default, CPU)
def new_empty(
    self: Tensor,
    size: Any,
    *,
    dtype: _Opt = None,
    layout: _Opt = None,
    device: _Opt = None,
    pin_memory: _Opt = None,
) -> Tensor:
    return empty(size, dtype=dtype_of(dtype, self.dtype), layout=layout)
