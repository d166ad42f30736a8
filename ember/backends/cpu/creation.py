"""CPU kernels of the creation ops: NumPy allocations, ranges and random draws.

Shapes, dtypes and checks come from the plans in ``ember/ops/native/creation.py`` (NOTE
[creation plans]), shared with the Meta rules; this file computes the values a plan's
``fill`` names. Random kernels draw from an ``ember.random.Generator`` (the default one when
``generator`` is None); see ``ember/random.py`` for what is and is not reproduced.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ember import dtypes
from ember._global_settings import FLAGS
from ember._shape_only import contiguous_strides
from ember.backends.cpu import torch_stream
from ember.backends.cpu._util import Tensor, quiet_block, wrap
from ember.dispatch.keys import DispatchKey
from ember.library import impl
from ember.ops.native.creation import PLANS, Plan, kernel_of, strided_extent
from ember.ops.registry import ops
from ember.random import _source

CPU = DispatchKey.CPU


def _strided(shape: tuple[int, ...], strides: tuple[int, ...], arr: np.ndarray) -> np.ndarray:
    """``arr`` (a flat buffer) seen with ``shape`` and element ``strides``."""
    item = arr.itemsize
    return np.lib.stride_tricks.as_strided(arr, shape, tuple(s * item for s in strides))


def _make(plan: Plan) -> Tensor:
    """The tensor ``plan`` describes, with the values its ``fill`` names."""
    shape, d, fill, strides = plan
    values = _FILLS[fill[0]](shape, d, *fill[1:])
    if strides is None or strides == contiguous_strides(shape):
        return wrap(np.empty(shape, d.np) if values is None else np.asarray(values, d.np))
    # other strides (empty_strided, or *_like keeping self's dimension order): a buffer
    # seen with those strides, then the values written in
    n = strided_extent(shape, strides, "empty_strided")
    out = _strided(shape, strides, np.empty(max(n, 1), d.np))
    if values is not None:
        out[...] = values
    return wrap(out)


# --------------------------------------------------------------------------- values


def _arange(shape: tuple[int, ...], d: dtypes.dtype, start: Any, step: Any) -> np.ndarray:
    acc = np.int64 if d.category == dtypes.INTEGRAL else np.float64  # PyTorch's accumulate type
    return start + step * np.arange(shape[0], dtype=acc)


def _linspace(
    shape: tuple[int, ...], d: dtypes.dtype, start: Any, end: Any, steps: int
) -> np.ndarray:
    """Symmetric formula: the first half counts up from ``start``, the second half down from
    ``end``, so both endpoints are exact (PyTorch's CPU kernel does the same)."""
    start, end = _num(start), _num(end)
    if d.category in (dtypes.COMPLEX, dtypes.FLOATING):
        ct = d.np
    else:  # integers: truncate the endpoints, step in double precision
        start, end, ct = int(_real(start)), int(_real(end)), np.dtype(np.float64)
    if d.category < dtypes.COMPLEX:
        start, end = _real(start), _real(end)
    if steps == 1:
        return np.full((1,), start, ct)
    i = np.arange(steps)
    s, e = np.asarray(start, ct), np.asarray(end, ct)
    with quiet_block():  # float16: steps - 1 above 65504 is inf, the step 0, as PyTorch's
        step = (e - s) / np.asarray(max(steps - 1, 1), ct)
        if ct == np.float32 or ct == np.float64:  # PyTorch's kernel fuses each multiply-add
            up, down = i.astype(ct), (steps - 1 - i).astype(ct)
            r = np.where(i < steps // 2, _fma(step, up, s), _fma(-step, down, e)).astype(ct)
        else:
            r = np.where(
                i < steps // 2, s + step * i.astype(ct), e - step * (steps - 1 - i).astype(ct)
            )
    if d.category == dtypes.INTEGRAL or d is dtypes.bool_:
        r = np.trunc(r)
    return np.asarray(r)


def _fma(a: Any, b: np.ndarray, c: Any) -> np.ndarray:
    """``a * b + c`` rounded once, as the fused multiply-add PyTorch's compiled linspace
    kernel runs: float32 through float64 (which holds the product exactly), float64 with
    the exact product's error term (Dekker's split) and the sum's (Knuth's two-sum)."""
    if b.dtype == np.float32:
        return np.float64(a) * b.astype(np.float64) + np.float64(c)
    a, c = np.float64(a), np.float64(c)
    split = 134217729.0  # 2**27 + 1
    t = split * a
    ah = t - (t - a)
    al = a - ah
    t = split * b
    bh = t - (t - b)
    bl = b - bh
    p = a * b
    err = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    total = p + c
    back = total - p
    lost = (p - (total - back)) + (c - back)
    return total + (lost + err)  # type: ignore[no-any-return]


def _num(x: Any) -> Any:
    return x.item() if isinstance(x, Tensor) else x


def _real(x: Any) -> Any:
    return x.real if isinstance(x, complex) else x


def uniform_array(
    shape: tuple[int, ...], d: dtypes.dtype, g: Any, low: float = 0.0, high: float = 1.0
) -> np.ndarray:
    """PyTorch's ``uniform_(low, high)`` values from generator ``g`` (NOTE [torch random
    streams]); complex dtypes draw the real parts, then the imaginary parts."""
    if d.category == dtypes.COMPLEX:
        real = d.to_real()
        re = uniform_array(shape, real, g, low, high)
        return re + 1j * uniform_array(shape, real, g, low, high)
    n = math.prod(shape)
    return torch_stream.uniform(_source(g), n, d, low, high).reshape(shape)


def normal_array(
    shape: tuple[int, ...], d: dtypes.dtype, g: Any, mean: float = 0.0, std: float = 1.0
) -> np.ndarray:
    """PyTorch's ``normal_(mean, std)`` values from generator ``g`` (NOTE [torch random
    streams]); complex draws have variance 1 split evenly between the parts."""
    if d.category == dtypes.COMPLEX:
        real = d.to_real()
        parts = normal_array(shape, real, g) + 1j * normal_array(shape, real, g)
        return (parts * np.sqrt(0.5) * std + mean).astype(d.np)
    n = math.prod(shape)
    return torch_stream.normal(_source(g), n, d, mean, std).reshape(shape)


def _uninitialized(shape: tuple[int, ...], d: dtypes.dtype) -> np.ndarray | None:
    """Nothing (leave memory as it is), or in deterministic mode NaN, or an integer's largest
    value (NOTE [deterministic algorithms] in ``ember/_global_settings.py``)."""
    if not FLAGS.deterministic:
        return None
    if d.category in (dtypes.FLOATING, dtypes.COMPLEX):
        return np.full(shape, np.nan, d.np)
    return np.full(shape, True if d is dtypes.bool_ else np.iinfo(d.np).max, d.np)


def _logspace(
    shape: tuple[int, ...], d: dtypes.dtype, start: Any, end: Any, steps: int, base: float
) -> np.ndarray:
    """``base`` to the powers of ``linspace(start, end, steps)``, computed in double precision
    (complex results in complex128) and converted, integers truncated, as PyTorch's kernel;
    for an integer dtype the bounds are truncated first (``logspace(0.5, 3.25, 7, base=2)``
    spans the exponents 0 to 3)."""
    wide = dtypes.complex128 if d.category == dtypes.COMPLEX else dtypes.float64
    lo, hi = _num(start), _num(end)
    if d.category == dtypes.INTEGRAL:  # the bounds are converted to the dtype first
        lo, hi = math.trunc(lo), math.trunc(hi)
    exponents = _linspace(shape, wide, lo, hi, steps)
    with quiet_block():
        r = np.power(base, exponents)
    if d.category == dtypes.INTEGRAL:  # truncated, then wrapped into the dtype
        with quiet_block():
            return np.trunc(r).astype(np.int64).astype(d.np)
    return r


def _normal(
    shape: tuple[int, ...], d: dtypes.dtype, g: Any, mean: float = 0.0, std: float = 1.0
) -> np.ndarray:
    return normal_array(shape, d, g, mean, std)


def _full(shape: tuple[int, ...], d: dtypes.dtype, value: Any) -> np.ndarray:
    with quiet_block():  # a value past bfloat16's range is inf, silently, as in PyTorch
        return np.full(shape, value, d.np)


def _triangle(
    shape: tuple[int, ...], d: dtypes.dtype, upper: bool, row: int, col: int, offset: int
) -> np.ndarray:
    """The (row, column) indices of a triangle, row by row (``np.tri*_indices``' order)."""
    rows, cols = (np.triu_indices if upper else np.tril_indices)(row, offset, col)
    return np.stack([rows, cols]).astype(d.np).reshape(shape)


_FILLS: dict[str, Callable[..., np.ndarray | None]] = {
    "triangle": _triangle,
    "empty": _uninitialized,
    "zeros": lambda shape, d: np.zeros(shape, d.np),
    "full": lambda shape, d, value: _full(shape, d, value),
    "arange": _arange,
    "linspace": _linspace,
    "eye": lambda shape, d: np.eye(*shape, dtype=d.np),
    "uniform": lambda shape, d, g: uniform_array(shape, d, g),
    "normal": _normal,
    "logspace": _logspace,
    "randperm": lambda shape, d, n, g: torch_stream.randperm(_source(g), n),
    "randint": lambda shape, d, low, high, g: torch_stream.random_int(
        _source(g), math.prod(shape), low, high
    ).reshape(shape),
}


def _like_fast(general: Callable[..., Tensor], fill: Callable[..., Any]) -> Callable[..., Tensor]:
    """``zeros_like``/``ones_like`` of a contiguous tensor with no options (a gradient seed,
    a buffer): straight to NumPy; anything else goes through the op's plan."""

    def kernel(self: Tensor, **options: Any) -> Tensor:
        d = self._edata
        if not options and type(d) is np.ndarray and d.flags.c_contiguous:
            return wrap(fill(d.shape, d.dtype))
        return general(self, **options)

    kernel.__name__ = kernel.__qualname__ = general.__name__
    return kernel


def _ones(shape: tuple[int, ...], dt: np.dtype[Any]) -> np.ndarray:
    """``np.ones`` in two C calls (``np.ones`` itself is Python: empty, then copyto)."""
    a = np.empty(shape, dt)
    a.fill(1)
    return a


_FAST_LIKE = {ops.aten.zeros_like.default: np.zeros, ops.aten.ones_like.default: _ones}

for _op, _plan in PLANS.items():
    _kernel = kernel_of(_op, _plan, _make)
    impl(_op, CPU, _like_fast(_kernel, _FAST_LIKE[_op]) if _op in _FAST_LIKE else _kernel)
