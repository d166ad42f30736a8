"""Sample inputs for the pointwise ops (see ember/testing/_internal/opinfo.py).

``torch.ops.aten`` accepts Python numbers for ``Tensor`` arguments only in add, sub, mul,
div and floor_divide, so only their samples pass numbers there; the other ops get numbers
through their ``.Scalar`` overloads (and ``tests/test_pointwise.py`` checks wrapped numbers
through the public functions).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import ember
from ember import dtypes
from ember.testing._internal.opinfo import (
    ALL_DTYPES,
    ErrorInput,
    SampleInput,
    errors,
    samples,
)


def _shapes(make: Any, **kw: Any) -> Iterator[tuple[Any, Any, str]]:
    """Pairs of operands covering broadcasting, 0-dim, empty and non-contiguous inputs."""
    yield make((3, 4)), make((3, 4), **kw), ""
    yield make((3, 4)), make((4,), **kw), "broadcast"
    yield make((2, 1, 3)), make((4, 1), **kw), "broadcast both"
    yield make(()), make((2, 3), **kw), "0-dim self"
    yield make((2, 3)), make((), **kw), "0-dim other"
    yield make((0, 3)), make((3,), **kw), "empty"
    yield make((3, 4), noncontiguous=True), make((3, 4), noncontiguous=True, **kw), "noncontiguous"


def tensor_pairs(make: Any, dtype: Any, **kw: Any) -> Iterator[SampleInput]:
    """Two tensors, plus mixed dtypes that exercise promotion."""
    for a, b, name in _shapes(make, **kw):
        yield SampleInput(a, b, name=name)
    yield SampleInput(make((3,)), make((3,), dtypes.int32, **kw), name="with int32")
    yield SampleInput(make((3,)), make((3,), dtypes.float64, **kw), name="with float64")
    yield SampleInput(make((3,)), make((), dtypes.float64, **kw), name="with 0-dim float64")
    yield SampleInput(make((3,)), make((3,), dtypes.bool_), name="with bool")


def binary_samples(make: Any, dtype: Any, **kw: Any) -> Iterator[SampleInput]:
    """Tensor pairs and wrapped Python numbers (for ops torch.ops accepts numbers in)."""
    yield from tensor_pairs(make, dtype, **kw)
    yield SampleInput(make((3,)), 2, name="int scalar")
    yield SampleInput(make((3,)), 2.5, name="float scalar")
    yield SampleInput(make((3,)), True, name="bool scalar")
    yield SampleInput(3, make((3,), **kw), name="scalar self")


def scalar_samples(make: Any, dtype: Any, **kw: Any) -> Iterator[SampleInput]:
    """A tensor and a Scalar ``other``."""
    yield SampleInput(make((3, 4)), 2)
    yield SampleInput(make((3, 4), noncontiguous=True), 3, name="noncontiguous")
    yield SampleInput(make(()), -3, name="0-dim")
    yield SampleInput(make((0, 2)), 2, name="empty")
    yield SampleInput(make((3,)), 2.5, name="float")
    yield SampleInput(make((3,)), True, name="bool")
    if dtype.category == dtypes.INTEGRAL:
        yield SampleInput(make((3,)), 1000, name="int out of range")


# --------------------------------------------------------------------------- arithmetic


@samples("add.Tensor", "sub.Tensor", dtypes=ALL_DTYPES)
def add_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield from binary_samples(make, dtype)
    yield SampleInput(make((3,)), make((3,)), alpha=2, name="alpha")
    yield SampleInput(make((3,)), make((3,)), alpha=0.5, name="float alpha")


@samples("rsub.Tensor", dtypes=ALL_DTYPES)
def rsub_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield from tensor_pairs(make, dtype)
    yield SampleInput(make((3,)), make((3,)), alpha=2, name="alpha")
    yield SampleInput(make((3,)), make((3,)), alpha=0.5, name="float alpha")


def _no_scalar_self(fn: Any) -> Any:
    """In-place variants of ops whose samples pass a number as ``self``: skip those."""

    def gen(make: Any, dtype: Any) -> Iterator[SampleInput]:
        return (s for s in fn(make, dtype) if isinstance(s.args[0], ember.Tensor))

    return gen


@samples("add.Scalar", "sub.Scalar", "rsub.Scalar", dtypes=ALL_DTYPES)
def add_scalar_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield from scalar_samples(make, dtype)
    yield SampleInput(make((3,)), 2, 3, name="alpha")
    yield SampleInput(make((3,)), 2, 0.5, name="float alpha")


samples("mul.Tensor", dtypes=ALL_DTYPES)(binary_samples)
samples("div.Tensor", dtypes=ALL_DTYPES)(binary_samples)
samples("add_.Tensor", "sub_.Tensor", dtypes=ALL_DTYPES)(_no_scalar_self(add_samples))
samples("mul_.Tensor", "div_.Tensor", dtypes=ALL_DTYPES)(_no_scalar_self(binary_samples))
samples("mul.Scalar", "div.Scalar", dtypes=ALL_DTYPES)(scalar_samples)


def _nonzero(make: Any, dtype: Any) -> dict[str, Any]:
    """Divisors without zeros for integer dtypes (integer division by zero raises)."""
    return {"low": 1} if dtype.category <= dtypes.INTEGRAL else {}


@samples("floor_divide.default", dtypes=ALL_DTYPES)
def floor_divide_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    kw = _nonzero(make, dtype)
    for s in tensor_pairs(make, dtype, **kw):
        if dtype.category > dtypes.INTEGRAL or s.name not in ("with bool",):
            yield s
    yield SampleInput(make((3,)), 2, name="int scalar")
    yield SampleInput(make((3,)), -2.5, name="float scalar")
    if dtype.category <= dtypes.INTEGRAL and dtype.is_signed:
        yield SampleInput(make((4,)), make((4,), low=-9, high=-1), name="negative divisor")


samples("floor_divide_.Tensor", dtypes=ALL_DTYPES)(_no_scalar_self(floor_divide_samples))


@samples("remainder.Tensor", "fmod.Tensor", dtypes=ALL_DTYPES)
def division_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    for s in tensor_pairs(make, dtype, **_nonzero(make, dtype)):
        if s.name != "with bool" or dtype.category > dtypes.INTEGRAL:
            yield s
    if dtype.category <= dtypes.INTEGRAL and dtype.is_signed:
        yield SampleInput(make((4,)), make((4,), low=-9, high=-1), name="negative divisor")
    if dtype.category >= dtypes.FLOATING:
        yield SampleInput(make((3,)), ember.zeros(3, dtype=dtype), name="float by zero")


@samples("div.Tensor_mode", dtypes=ALL_DTYPES)
def div_mode_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    kw = _nonzero(make, dtype)
    for mode in ("trunc", "floor", None):
        for s in tensor_pairs(make, dtype, **kw):
            if s.name == "with bool" and dtype.category <= dtypes.INTEGRAL:
                continue
            yield SampleInput(*s.args, rounding_mode=mode, name=s.name)
    yield SampleInput(make((3,)), 2, rounding_mode="floor", name="int scalar")
    if dtype.category <= dtypes.INTEGRAL and dtype.is_signed:
        yield SampleInput(make((4,)), make((4,), low=-9, high=-1), rounding_mode="trunc")
    if dtype.category >= dtypes.FLOATING:
        z = ember.zeros(3, dtype=dtype)
        yield SampleInput(make((3,)), z, rounding_mode="floor", name="float by zero")


@samples("floor_divide.Scalar", "remainder.Scalar", "fmod.Scalar", dtypes=ALL_DTYPES)
def division_scalar_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield from scalar_samples(make, dtype)
    yield SampleInput(make((3,)), -3, name="negative")


@samples("div.Scalar_mode", dtypes=ALL_DTYPES)
def div_scalar_mode_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    for mode in ("trunc", "floor", None):
        yield SampleInput(make((3, 4)), 3, rounding_mode=mode)
        yield SampleInput(make((3,)), -2.5, rounding_mode=mode, name="float")


@samples("remainder.Scalar_Tensor", dtypes=ALL_DTYPES)
def remainder_scalar_tensor_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    def divisor(shape: tuple[int, ...]) -> Any:
        if dtype is dtypes.bool_:  # all True: a bool divisor promotes to int64 here
            return ember.ones(shape, dtype=dtype)
        return make(shape, **_nonzero(make, dtype))

    yield SampleInput(7, divisor((3, 4)))
    yield SampleInput(-7.5, divisor((3,)), name="float")
    yield SampleInput(5, divisor(()), name="0-dim")


@samples("pow.Tensor_Tensor", dtypes=ALL_DTYPES)
def pow_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    low = 0 if dtype.category <= dtypes.INTEGRAL else None
    for a, b, name in _shapes(make, low=low, high=4):
        yield SampleInput(a, b, name=name)
    yield SampleInput(make((3,)), make((3,), dtypes.float64, high=3), name="float64 exponent")
    if dtype.category == dtypes.INTEGRAL and dtype.is_signed:
        yield SampleInput(make((4,)), make((4,), low=-3, high=0), name="negative exponent")


@samples("pow.Tensor_Scalar", dtypes=ALL_DTYPES)
def pow_scalar_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((3, 4)), 2)
    yield SampleInput(make((3, 4), noncontiguous=True), 3, name="noncontiguous")
    yield SampleInput(make(()), 0, name="0-dim")
    yield SampleInput(make((3,)), 0.5, name="float")
    yield SampleInput(make((3,)), -1, name="negative")


@samples("pow.Scalar", dtypes=ALL_DTYPES)
def pow_scalar_base_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    low = 0 if dtype.category <= dtypes.INTEGRAL else None
    yield SampleInput(2, make((3, 4), low=low, high=5))
    yield SampleInput(1.5, make((3,), low=low, high=5), name="float base")
    yield SampleInput(3, make((), low=low, high=5), name="0-dim")


samples("float_power.Tensor_Tensor", dtypes=ALL_DTYPES)(pow_samples)
samples("float_power.Tensor_Scalar", dtypes=ALL_DTYPES)(pow_scalar_samples)
samples("float_power.Scalar", dtypes=ALL_DTYPES)(pow_scalar_base_samples)


@samples("float_power_.Tensor", dtypes=ALL_DTYPES)
def float_power_inplace_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    """In place: a float64 (complex128) base works, any other refuses, as in PyTorch."""
    yield from pow_samples(make, dtype)
    yield SampleInput(make((3,), dtypes.float64), make((3,)), name="float64 base")


@samples("float_power_.Scalar", dtypes=ALL_DTYPES)
def float_power_inplace_scalar_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield from pow_scalar_samples(make, dtype)
    yield SampleInput(make((3,), dtypes.float64), 2, name="float64 base")


@samples("isin.Tensor_Tensor", dtypes=ALL_DTYPES)
def isin_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    low = 0 if dtype.category <= dtypes.INTEGRAL else None
    a = make((3, 4), low=low, high=6)
    if dtype.category <= dtypes.INTEGRAL or dtype.category == dtypes.FLOATING:
        a = ember.tensor([[0, 1, 2, 3], [4, 5, 1, 2], [3, 3, 0, 5]]).to(dtype)
    yield SampleInput(a, a[:, 1])
    yield SampleInput(a, a[1, :2], invert=True, name="invert")
    distinct = ember.tensor([0, 1, 2, 3]).to(dtype)
    yield SampleInput(ember.tensor([5, 0, 3]).to(dtype), distinct, assume_unique=True,
                      name="assume_unique")  # fmt: skip
    yield SampleInput(make(()), a, name="0-dim elements")
    yield SampleInput(a, make((0,)), name="no test elements")
    yield SampleInput(make((0, 2)), a, name="empty")
    yield SampleInput(a.t(), a[2], name="noncontiguous")
    if not dtype.is_complex:
        yield SampleInput(a, a[0].to(dtypes.float64), name="float64 tests")
    yield SampleInput(a, make((2,), dtypes.int32), name="int32 tests")
    if dtype.category == dtypes.FLOATING:
        nan = ember.tensor([math.nan, 0.0, -0.0, math.inf], dtype=dtype)
        yield SampleInput(nan, nan.flip(0), name="NaN never matches, -0 is 0")


@samples("isin.Tensor_Scalar", dtypes=ALL_DTYPES)
def isin_scalar_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    a = make((3, 4), low=0 if dtype.category <= dtypes.INTEGRAL else None, high=4)
    yield SampleInput(a, 2)
    yield SampleInput(a, 1.5, name="float")
    yield SampleInput(a, 3, invert=True, name="invert")
    yield SampleInput(make(()), 0, name="0-dim")


@samples("isin.Scalar_Tensor", dtypes=ALL_DTYPES)
def isin_scalar_tensor_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    a = make((3, 4), low=0 if dtype.category <= dtypes.INTEGRAL else None, high=4)
    yield SampleInput(2, a)
    yield SampleInput(1.5, a, name="float")
    yield SampleInput(3, a, invert=True, name="invert")
    yield SampleInput(0, make((0,)), name="empty")


samples("maximum.default", "minimum.default", "atan2.default", "hypot.default",
        "logaddexp.default", "logaddexp2.default", "copysign.Tensor", "nextafter.default",
        "true_divide.Tensor",
        dtypes=ALL_DTYPES)(tensor_pairs)  # fmt: skip
samples("copysign.Scalar", "true_divide.Scalar", dtypes=ALL_DTYPES)(scalar_samples)


@samples("fmax.default", "fmin.default", "heaviside.default", dtypes=ALL_DTYPES)
def nan_pairs(make: Any, dtype: Any) -> Iterator[SampleInput]:
    """Tensor pairs, and NaN against numbers (fmax and fmin ignore it, heaviside maps it)."""
    yield from tensor_pairs(make, dtype)
    if dtype.category == dtypes.FLOATING:
        nan = ember.tensor([math.nan, 1.0, math.nan, 0.0, -0.0], dtype=dtype)
        yield SampleInput(nan, ember.tensor([2.0, math.nan, math.nan, 0.5, 1.0], dtype=dtype),
                          name="NaN")  # fmt: skip


@samples("gcd.default", "lcm.default", dtypes=ALL_DTYPES)
def gcd_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield from tensor_pairs(make, dtype)
    if dtype.category == dtypes.INTEGRAL and dtype.is_signed:
        a = ember.tensor([4, -6, 0, 0, 9, -12], dtype=dtype)
        b = ember.tensor([6, 4, 5, 0, -3, -18], dtype=dtype)
        yield SampleInput(a, b, name="signs and zeros")


@samples("threshold_backward.default", dtypes=ALL_DTYPES)
def threshold_backward_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    for g, x, name in _shapes(make):
        yield SampleInput(g, x, 0, name=name)
    yield SampleInput(make((3, 4)), make((3, 4)), 1.5, name="threshold 1.5")
    yield SampleInput(make((3, 4)), make((3, 4), dtypes.float64), 0, name="mixed dtypes")


# --------------------------------------------------------------------------- comparisons, bits

_CMP = ("eq", "ne", "lt", "le", "gt", "ge")
samples(*[f"{n}.Tensor" for n in _CMP], dtypes=ALL_DTYPES)(tensor_pairs)
samples(*[f"{n}.Scalar" for n in _CMP], dtypes=ALL_DTYPES)(scalar_samples)
samples("logical_and.default", "logical_or.default", "logical_xor.default",
        dtypes=ALL_DTYPES)(tensor_pairs)  # fmt: skip
_BIT = ("bitwise_and", "bitwise_or", "bitwise_xor")
samples(*[f"{n}.Tensor" for n in _BIT], dtypes=ALL_DTYPES)(tensor_pairs)
samples(*[f"{n}.Scalar" for n in _BIT], dtypes=ALL_DTYPES)(scalar_samples)


@samples(*[f"{n}.Scalar_Tensor" for n in _BIT], dtypes=ALL_DTYPES)
def scalar_tensor_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(6, make((3, 4)))
    yield SampleInput(True, make((3,)), name="bool")
    yield SampleInput(5, make(()), name="0-dim")


_SHIFT = ("bitwise_left_shift", "bitwise_right_shift")


@samples(
    *[f"{n}.Tensor" for n in _SHIFT], "__lshift__.Tensor", "__rshift__.Tensor", dtypes=ALL_DTYPES
)
def shift_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    for a, b, name in _shapes(make, low=0, high=8):
        yield SampleInput(a, b, name=name)


@samples(*[f"{n}.Tensor_Scalar" for n in _SHIFT], "__lshift__.Scalar", "__rshift__.Scalar",
         dtypes=ALL_DTYPES)  # fmt: skip
def shift_scalar_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((3, 4)), 2)
    yield SampleInput(make((3,), noncontiguous=True), 5, name="noncontiguous")
    yield SampleInput(make(()), 1, name="0-dim")


@samples(*[f"{n}.Scalar_Tensor" for n in _SHIFT], dtypes=ALL_DTYPES)
def shift_scalar_tensor_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(3, make((3, 4), low=0, high=6))
    yield SampleInput(-40, make((3,), low=0, high=6), name="negative")


# --------------------------------------------------------------------------- selection


@samples("where.self", dtypes=ALL_DTYPES)
def where_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    b = dtypes.bool_
    yield SampleInput(make((3, 4), b), make((3, 4)), make((3, 4)))
    yield SampleInput(make((3, 1), b), make((4,)), make((2, 1, 1)), name="broadcast")
    yield SampleInput(make((), b), make((3,)), make((3,)), name="0-dim condition")
    yield SampleInput(make((3,), b), make((3,)), make((3,), dtypes.float64), name="promote")
    yield SampleInput(make((3,), b), make((3,)), make((), dtypes.float64), name="0-dim other")
    yield SampleInput(make((3, 4), b, noncontiguous=True), make((3, 4), noncontiguous=True),
                      make((3, 4)), name="noncontiguous")  # fmt: skip
    yield SampleInput(make((3,)), make((3,)), make((3,)), name="condition of this dtype")


@samples("where.ScalarOther", dtypes=ALL_DTYPES)
def where_scalar_other_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((3, 4), dtypes.bool_), make((3, 4)), 2)
    yield SampleInput(make((3,), dtypes.bool_), make((3,)), 2.5, name="float")


@samples("where.ScalarSelf", dtypes=ALL_DTYPES)
def where_scalar_self_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((3, 4), dtypes.bool_), 2, make((3, 4)))
    yield SampleInput(make((3,), dtypes.bool_), 2.5, make((3,)), name="float")


@samples("where.Scalar", dtypes=(dtypes.bool_,))
def where_scalars_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((3, 4)), 1, 2)
    yield SampleInput(make((3,)), 1, 2.5, name="float")
    yield SampleInput(make(()), True, False, name="bool")


@samples("clamp.default", "clip.default", dtypes=ALL_DTYPES)
def clamp_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((3, 4)), -2, 3)
    yield SampleInput(make((3, 4), noncontiguous=True), 1, name="min only")
    yield SampleInput(make((3,)), None, 2, name="max only")
    yield SampleInput(make((3,)), 3, -1, name="min > max")
    yield SampleInput(make((3,)), 0.5, name="float min")
    yield SampleInput(make(()), -1, 1, name="0-dim")
    yield SampleInput(make((3,)), name="neither")


@samples("clamp.Tensor", "clip.Tensor", dtypes=ALL_DTYPES)
def clamp_tensor_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((3, 4)), make((3, 4)), make((4,)))
    yield SampleInput(make((3, 4)), make((4,)), name="min only")
    yield SampleInput(make((3,)), None, make((3,)), name="max only")
    yield SampleInput(make((3,)), make((3,), dtypes.float64), name="promote")


@samples("clamp_min.default", "clamp_max.default", dtypes=ALL_DTYPES)
def clamp_one_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((3, 4)), 1)
    yield SampleInput(make((3,), noncontiguous=True), -2.5, name="float")
    yield SampleInput(make(()), 0, name="0-dim")


samples("clamp_min.Tensor", "clamp_max.Tensor", dtypes=ALL_DTYPES)(tensor_pairs)

# --------------------------------------------------------------------------- ternary


@samples("lerp.Scalar", dtypes=ALL_DTYPES)
def lerp_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((3, 4)), make((3, 4)), 0.3)
    yield SampleInput(make((3, 4)), make((4,)), 0.7, name="broadcast")
    yield SampleInput(make(()), make((2,), noncontiguous=True), 1.0, name="0-dim")
    yield SampleInput(make((3,)), make((3,), dtypes.float64), 0.5, name="mixed dtypes")


@samples("lerp.Tensor", dtypes=ALL_DTYPES)
def lerp_tensor_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((3, 4)), make((3, 4)), make((3, 4), low=0, high=1))
    yield SampleInput(make((3, 4)), make((4,)), make((3, 1), low=-1, high=2), name="broadcast")
    yield SampleInput(make((3,)), make((3,)), make((3,), dtypes.float64), name="mixed weight")


@samples("addcmul.default", "addcdiv.default", dtypes=ALL_DTYPES)
def addc_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((3, 4)), make((3, 4)), make((3, 4), low=1))
    yield SampleInput(make((3, 4)), make((4,)), make((3, 1), low=1), value=2, name="broadcast")
    yield SampleInput(make(()), make((2,), noncontiguous=True), make((2,), low=1), value=0.5,
                      name="0-dim, float value")  # fmt: skip
    yield SampleInput(make((3,)), make((3,), dtypes.float32), make((3,), dtypes.float32, low=1),
                      name="float tensors")  # fmt: skip


# --------------------------------------------------------------------------- unary

_UNARY = (
    "neg", "abs", "exp", "expm1", "log", "log2", "log1p", "sqrt", "rsqrt", "sin", "cos", "tan",
    "tanh", "sigmoid", "relu", "silu", "erf", "floor", "ceil", "round", "trunc", "sign",
    "reciprocal", "square", "isnan", "isinf", "isfinite", "logical_not", "bitwise_not",
    "positive", "asin", "acos", "atan", "sinh", "cosh", "asinh", "atanh", "arcsin", "arccos",
    "arctan", "arcsinh", "arctanh", "log10", "frac", "fix", "sgn", "signbit", "deg2rad",
    "rad2deg", "angle", "negative", "isneginf", "isposinf", "isreal",
)  # fmt: skip


@samples(*[f"{n}.default" for n in _UNARY], dtypes=ALL_DTYPES)
def unary_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((3, 4)))
    yield SampleInput(make(()))
    yield SampleInput(make((0,)))
    yield SampleInput(make((3, 4), noncontiguous=True))
    if dtype.category >= dtypes.FLOATING:
        yield SampleInput(make((5,), low=-2, high=2), name="near zero")
        yield SampleInput(make((5,), low=0, high=1), name="unit interval")


@samples("acosh.default", "arccosh.default", dtypes=ALL_DTYPES)
def acosh_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield from unary_samples(make, dtype)
    if dtype.category >= dtypes.FLOATING:
        yield SampleInput(make((5,), low=1.5, high=4), name="above one")


@samples("_conj_physical.default", "conj_physical.default", dtypes=ALL_DTYPES)
def conj_physical_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield from unary_samples(make, dtype)
    yield SampleInput(make((4, 3)).t(), name="transposed")


@samples("gelu.default", dtypes=ALL_DTYPES)
def gelu_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((3, 4), low=-4, high=4))
    yield SampleInput(make((3, 4), noncontiguous=True, low=-4, high=4), approximate="tanh")
    yield SampleInput(make(()), approximate="none")


@samples("round.decimals", dtypes=ALL_DTYPES)
def round_decimals_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    for d in (0, 1, 3, -1):
        yield SampleInput(make((3, 4), low=-200, high=200), decimals=d)


@samples("nan_to_num.default", dtypes=ALL_DTYPES)
def nan_to_num_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    x = make((6,))
    if dtype.category >= dtypes.FLOATING:
        x = ember.tensor([math.nan, math.inf, -math.inf, 1.5, 0.0, -2.0], dtype=dtype)
    yield SampleInput(x)
    yield SampleInput(x, 1.5, name="nan=1.5")
    yield SampleInput(x, 0.0, 100.0, -100.0, name="all three")


# --------------------------------------------------------------------------- errors


@errors("floor_divide.default", "remainder.Tensor", "fmod.Tensor")
def integer_zero_division() -> Iterator[ErrorInput]:
    a = ember.tensor([4, -3, 7])
    yield ErrorInput(SampleInput(a, ember.tensor([1, 0, 2])), RuntimeError, "ZeroDivisionError")


@errors("div.Tensor_mode")
def div_mode_errors() -> Iterator[ErrorInput]:
    a = ember.tensor([4, -3, 7])
    b = ember.tensor([1, 0, 2])
    for mode in ("trunc", "floor"):
        yield ErrorInput(SampleInput(a, b, rounding_mode=mode), RuntimeError, "ZeroDivisionError")
    f = ember.tensor([1.0])
    yield ErrorInput(SampleInput(f, f, rounding_mode="bad"), RuntimeError, "rounding_mode")


@errors("sub.Tensor")
def sub_errors() -> Iterator[ErrorInput]:
    t = ember.tensor([True, False])
    yield ErrorInput(SampleInput(t, t), RuntimeError, "two bool tensors")
    yield ErrorInput(SampleInput(t, ember.tensor([1, 2])), RuntimeError, "bool tensor")
    i = ember.tensor([1, 2])
    yield ErrorInput(SampleInput(i, i, alpha=0.5), RuntimeError, "alpha")
    yield ErrorInput(SampleInput(ember.ones(3), ember.ones(4)), RuntimeError, "size")


@errors("gelu.default")
def gelu_errors() -> Iterator[ErrorInput]:
    yield ErrorInput(SampleInput(ember.ones(2), approximate="bad"), RuntimeError, "approximate")


@errors("bitwise_and.Tensor")
def bitwise_errors() -> Iterator[ErrorInput]:
    f = ember.ones(2)
    yield ErrorInput(SampleInput(f, f), NotImplementedError, "Float")


@errors("pow.Tensor_Scalar")
def pow_errors() -> Iterator[ErrorInput]:
    yield ErrorInput(SampleInput(ember.tensor([2, 3]), -1), RuntimeError, "negative integer")


# --------------------------------------------------------------------------- whole tensors


def _near(make: Any, dtype: Any, shape: tuple[int, ...]) -> tuple[Any, Any]:
    """``a`` and a copy with a few elements nudged (by 1e-9 relative, and by 1), so isclose
    and allclose see both close and far elements."""
    a = make(shape, low=-3, high=3)
    b = a.clone()
    flat = b.view(-1) if b.numel() else b
    if b.numel() > 2 and dtype.category >= dtypes.FLOATING:
        flat[0] = flat[0] * (1 + 1e-9)
        flat[-1] = flat[-1] + 1
    elif b.numel() > 2 and dtype is not dtypes.bool_:
        flat[-1] = flat[-1] + 1
    return a, b


@samples("isclose.default", "allclose.default", dtypes=ALL_DTYPES)
def isclose_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    a, b = _near(make, dtype, (3, 4))
    yield SampleInput(a, b)
    yield SampleInput(a, a.clone(), name="equal")
    yield SampleInput(a, b, 0.0, 0.0, name="zero tolerances: equality")
    yield SampleInput(a, b, atol=1.5, name="wide atol")
    yield SampleInput(a, b, rtol=0.5, atol=0.0, name="rtol only")
    yield SampleInput(make((3, 4)), make((4,)), name="broadcast")
    yield SampleInput(make(()), make((2, 3), noncontiguous=True), name="0-dim, noncontiguous")
    yield SampleInput(make((0, 3)), make((3,)), name="empty")
    if dtype.category == dtypes.FLOATING:
        nan = ember.tensor([float("nan"), 1.0, float("inf"), -float("inf")], dtype=dtype)
        yield SampleInput(nan, nan.clone(), name="nan and inf")
        yield SampleInput(nan, nan.clone(), equal_nan=True, name="equal_nan")
    other = dtypes.float64 if dtype is not dtypes.float64 else dtypes.float32
    yield SampleInput(make((3,)), make((3,), other), name="dtypes differ raise")
    yield SampleInput(make((3,)), make((3,)), rtol=-1.0, name="negative rtol raises")
    yield SampleInput(make((3,)), make((3,)), atol=-1.0, name="negative atol raises")
    yield SampleInput(make((2,)), make((3,)), name="shapes that don't broadcast raise")


@samples("_local_scalar_dense.default", dtypes=ALL_DTYPES)
def local_scalar_dense_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make(()), name="0-dim")
    yield SampleInput(make((1,)), name="one element")
    yield SampleInput(make((1, 1, 1)), name="one element, 3-d")
    yield SampleInput(make((2,)), name="two elements: the first")
    yield SampleInput(make((0,)), name="empty raises")


@samples("equal.default", dtypes=ALL_DTYPES)
def equal_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    a, b = _near(make, dtype, (3, 4))
    yield SampleInput(a, a.clone(), name="equal")
    yield SampleInput(a, b, name="one differs")
    yield SampleInput(a, a.clone().view(3, 1, 4), name="shapes differ: False, no broadcast")
    wider = dtypes.complex128 if dtype.is_complex else dtypes.float64
    yield SampleInput(a, a.to(wider), name="dtypes differ: values compared")
    yield SampleInput(make(()), make(()), name="0-dim")
    yield SampleInput(make((0, 3)), make((0, 3)), name="empty")
    yield SampleInput(make((3, 4), noncontiguous=True), a, name="noncontiguous")
    if dtype.category == dtypes.FLOATING:
        nan = ember.tensor([float("nan"), 1.0], dtype=dtype)
        yield SampleInput(nan, nan, name="nan is unequal, even to itself")


@samples("type_as.default", dtypes=ALL_DTYPES)
def type_as_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    for other in (dtypes.float64, dtypes.int32, dtypes.bool_, dtype):
        if dtype.is_complex and not other.is_complex and other is not dtypes.bool_:
            continue  # complex to real warns
        yield SampleInput(make((3, 4)), make((2,), other), name=f"as {other.name}")
    other = dtypes.complex64 if dtype.is_complex else dtypes.float32
    yield SampleInput(make((3, 4), noncontiguous=True), make((), other), name="nc")


@samples(
    "ldexp.Tensor", "ldexp_.Tensor", dtypes=tuple(d for d in ALL_DTYPES if d is not dtypes.bool_)
)
def ldexp_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    e = {"dtype": dtypes.int64, "low": -3, "high": 4}
    yield SampleInput(make((2, 3)), make((2, 3), **e))
    yield SampleInput(make((2, 3), noncontiguous=True), make((3,), **e), name="broadcast, nc")
    yield SampleInput(make(()), make((), **e), name="0-dim")
    yield SampleInput(make((3,)), make((3,), dtypes.float32, low=-2, high=2), name="float exponent")
    yield SampleInput(make((0,)), make((0,), **e), name="empty")


@samples("frexp.Tensor", dtypes=ALL_DTYPES)
def frexp_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((2, 3), low=-100, high=100))
    yield SampleInput(make((2, 3), noncontiguous=True), name="nc")
    yield SampleInput(make(()), name="0-dim")
    yield SampleInput(make((0,)), name="empty")
