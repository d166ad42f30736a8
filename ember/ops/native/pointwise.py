"""The pointwise ops: one line each, schema plus promotion rule (NOTE [type promotion]) and
the dtypes PyTorch has no kernel for.

Every ``Tensor`` argument of a pointwise op also accepts a Python number (PyTorch's
"wrapped numbers"), which takes part in promotion with the lowest priority. In-place and
``out=`` overloads are declared with each functional one, under PyTorch's names
(``pow_.Tensor`` writes ``pow.Tensor_Tensor``; its out= overload is ``pow.Tensor_Tensor_out``).
"""

from __future__ import annotations

import re
from typing import Any

from ember import dtypes
from ember._memory_format import pointwise_strides
from ember._tensor import Tensor, strides_of
from ember.dtypes import bool_, complex64, complex128, dtype, float16, float32, float64
from ember.ops.native._define import (
    FUNCTIONAL_OF,
    VARIANTS_OF,
    define,
    inplace_schema,
    out_schema,
)
from ember.ops.native.promotion import (
    POINTWISE,
    PROMOTION,
    Check,
    PointwiseInfo,
    Promotion,
    not_implemented,
)
from ember.ops.registry import OpOverload, define_op, impl, ops

D, I2F, BOOL, C2F, B2L = (
    Promotion.DEFAULT,
    Promotion.INT_TO_FLOAT,
    Promotion.ALWAYS_BOOL,
    Promotion.COMPLEX_TO_FLOAT,
    Promotion.BOOL_TO_LONG,
)

COMPLEX = frozenset({complex64, complex128})
FLOATS = frozenset({float16, float32, float64})
INTS = frozenset(dtypes.INTEGRAL_DTYPES)
NO_BOOL = frozenset({bool_})
NO_COMPLEX = COMPLEX
NO_BOOL_COMPLEX = NO_BOOL | COMPLEX
ONLY_INTEGRAL = FLOATS | COMPLEX  # bitwise ops: integers and bool
ONLY_FLOAT = NO_BOOL | INTS | COMPLEX
ONLY_INEXACT = NO_BOOL | INTS
#: arguments that never take part in promotion
_NOT_OPERANDS = ("condition", "alpha", "value", "weight", "threshold")
_FUNCTION_AND_METHOD = ("function", "method")


#: pointwise ops whose result PyTorch lays out row-major whatever the operands' layout (its
#: ``pow.Scalar`` allocates the result before running ``pow`` of a wrapped number)
ROW_MAJOR_RESULT = frozenset({"pow.Scalar", "float_power.Scalar"})


def layout_operands(op: OpOverload) -> tuple[list[int], list[int]]:
    """The positions of a pointwise op's tensor arguments and of the ``Scalar`` ``self`` or
    ``other`` that PyTorch wraps as a 0-d operand (``x > 0``, ``2 - x``): what orders the
    result's dims (NOTE [pointwise result layout] in ``ember/_memory_format.py``)."""
    args = op._schema.positional
    tensors = [i for i, a in enumerate(args) if a.type.is_tensor]
    numbers = [
        i
        for i, a in enumerate(args)
        if a.type.base == "Scalar" and not a.type.is_list and a.name in ("self", "other")
    ]
    return tensors, numbers


def pointwise_result_strides(
    op: str, shape: tuple[int, ...], args: tuple[Any, ...], tensors: list[int], numbers: list[int]
) -> tuple[int, ...] | None:
    """The strides of pointwise op ``op``'s result of ``shape`` from its positional ``args``
    (positions from ``layout_operands``); None for row-major. The CPU kernels and the Meta
    rule both ask this (NOTE [pointwise result layout])."""
    if op in ROW_MAJOR_RESULT:
        return None
    n = len(args)
    operands = []
    wrapped = False
    for i in tensors:
        if i < n:
            x = args[i]
            if isinstance(x, Tensor):
                operands.append((tuple(x.shape), strides_of(x)))
            elif x is not None:
                wrapped = True  # a number for a tensor: PyTorch wraps it as an operand
    if not wrapped:
        wrapped = any(i < n and args[i] is not None for i in numbers)
    return pointwise_strides(shape, operands, wrapped)


def _rename(schema: str, overload: str) -> str:
    """``schema`` with its overload name replaced (``""``: the default overload)."""
    return re.sub(
        r"^(\w+)(\.\w+)?\(",
        lambda m: f"{m.group(1)}{'.' + overload if overload else ''}(",
        schema,
        count=1,
    )


def pointwise(
    schema: str,
    promotion: Promotion = D,
    *,
    inplace: bool | str = True,
    out: bool | str = True,
    unsupported: frozenset[dtype] = frozenset(),
    check: Check | None = None,
    variants: tuple[str, ...] = _FUNCTION_AND_METHOD,
    operands: tuple[str, ...] | None = None,
) -> OpOverload:
    """Declare a pointwise op with its in-place and out= variants, promotion rule and dtypes.

    ``inplace``/``out`` are True (PyTorch's usual names: ``add_.Tensor``, ``add.out``), False
    (none), or the overload name PyTorch gives the variant (``"Tensor"``, ``"Tensor_out"``).
    ``operands`` names the arguments that take part in promotion when they are not all the
    Tensor and Scalar arguments but ``alpha``, ``value`` and ``weight``.
    """
    tags = ("pointwise",)
    op = define_op(schema, "aten", tags, variants)
    ip = o = None
    if inplace is not False:
        ip_schema = inplace_schema(schema)
        if isinstance(inplace, str):
            ip_schema = _rename(ip_schema, inplace)
        ip = define_op(ip_schema, "aten", tags, ("method",))
    if out is not False:
        o = define_op(out_schema(schema, "out" if out is True else out), "aten", tags, ())
    if ip is not None or o is not None:
        VARIANTS_OF[op] = (ip, o)
    positional = op._schema.positional
    if operands is None:
        operands = tuple(
            a.name for a in positional
            if a.type.base in ("Tensor", "Scalar") and a.name not in _NOT_OPERANDS
        )  # fmt: skip
    info = PointwiseInfo(
        promotion, tuple(i for i, a in enumerate(positional) if a.name in operands), unsupported,
        check,
    )  # fmt: skip
    for v in (op, ip, o):
        if v is not None:
            POINTWISE[v.__name__] = info
            PROMOTION.setdefault(v.overloadpacket.__name__, promotion)
            if v is not op:
                FUNCTIONAL_OF[v] = op
    return op


# --------------------------------------------------------------------------- checks


def _dtype_of(x: Any) -> dtype:
    d = getattr(x, "dtype", None)
    return d if isinstance(d, dtype) else dtypes.scalar_dtype(x)


def no_bool_negation(name: str, cdt: dtype, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """neg on bool: PyTorch refuses and points at ``~``."""
    if cdt is bool_:
        raise RuntimeError(
            f"{name}: Negation, the `-` operator, on a bool tensor is not supported. If you are "
            "trying to invert a mask, use the `~` or `logical_not()` operator instead."
        )


def no_bool_positive(name: str, cdt: dtype, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    if args and _dtype_of(args[0]) is bool_:
        raise RuntimeError(f"{name}: The `+` operator, on a bool tensor is not supported.")


def no_bool_relu(name: str, cdt: dtype, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    if cdt is bool_:
        raise RuntimeError(
            f"{name}: Boolean inputs not supported for relu; convert with .to(ember.uint8)"
        )


def _alpha_check(name: str, cdt: dtype, alpha: Any) -> None:
    if isinstance(alpha, float) and cdt.category < dtypes.FLOATING:
        raise RuntimeError(
            f"{name}: For integral input tensors, argument alpha must not be a floating point "
            f"number (got alpha={alpha} for dtype {cdt.name})."
        )
    if isinstance(alpha, complex) and cdt.category < dtypes.COMPLEX:
        raise RuntimeError(f"{name}: complex alpha={alpha} needs complex inputs, got {cdt.name}")


def add_check(name: str, cdt: dtype, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """alpha may not be a float for integral inputs (nor complex for real ones)."""
    alpha = kwargs.get("alpha", args[2] if len(args) > 2 else 1)
    if alpha != 1 or type(alpha) is not int:
        _alpha_check(name, cdt, alpha)


def sub_check(name: str, cdt: dtype, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """Subtraction refuses bool operands, and alpha follows add's rule."""
    a, b = _dtype_of(args[0]) is bool_, _dtype_of(args[1]) is bool_
    if a and b:
        raise RuntimeError(
            f"{name}: Subtraction, the `-` operator, with two bool tensors is not supported. "
            "Use the `^` or `logical_xor()` operator instead."
        )
    if a or b:
        raise RuntimeError(
            f"{name}: Subtraction, the `-` operator, with a bool tensor is not supported. If you "
            "are trying to invert a mask, use the `~` or `logical_not()` operator instead."
        )
    add_check(name, cdt, args, kwargs)


def clamp_check(name: str, cdt: dtype, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """clamp needs a bound; bool has no kernel, except clamp.Tensor with a single bound."""
    lo = args[1] if len(args) > 1 else None
    hi = args[2] if len(args) > 2 else None
    if lo is None and hi is None:
        raise RuntimeError(f"{name}: At least one of 'min' or 'max' must not be None")
    if cdt is bool_ and (".Tensor" not in name or (lo is not None and hi is not None)):
        raise not_implemented(name, cdt)


def no_bool_scalar_bound(
    name: str, cdt: dtype, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> None:
    """clamp_min/clamp_max with a Scalar bound have no bool kernel (the Tensor ones do)."""
    if cdt is bool_:
        raise not_implemented(name, cdt)


def abs_check(name: str, cdt: dtype, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """abs_ cannot write a complex tensor's real magnitudes back into it."""
    if name.startswith("abs_") and cdt.category == dtypes.COMPLEX:
        raise RuntimeError(f"{name}: In-place abs is not supported for complex tensors; use abs()")


def lerp_check(name: str, cdt: dtype, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """``end`` (and a ``weight`` tensor with dimensions) must have ``self``'s dtype."""
    want = _dtype_of(args[0])
    for arg_name, x in (("end", args[1]), ("weight", args[2])):
        d = getattr(x, "dtype", None)
        if d is not None and d is not want and (arg_name == "end" or x.ndim):
            fix = (
                f"convert it with .to({want})"
                if want.is_floating_point or want.is_complex
                else "lerp takes floating tensors: convert self and end with .float()"
            )
            raise RuntimeError(
                f"{name}: expected dtype {want._short.lower()} for `{arg_name}` but got dtype "
                f"{d._short.lower()}; {fix}"
            )


def extremum_check(name: str, cdt: dtype, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """maximum and minimum refuse complex operands with PyTorch's RuntimeError."""
    if cdt.category == dtypes.COMPLEX:
        op = name.split(".")[0]
        raise RuntimeError(f"{op} not implemented for complex tensors; compare .real or .abs()")


def addcdiv_check(name: str, cdt: dtype, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    if (
        _dtype_of(args[1]).category < dtypes.FLOATING
        and _dtype_of(args[2]).category < dtypes.FLOATING
    ):
        raise RuntimeError(
            f"{name}: Integer division with addcdiv is no longer supported, and in a future "
            "release addcdiv will perform a true division of tensor1 and tensor2. Use "
            "ember.addcmul(self, tensor1, ember.div(tensor2, ..., rounding_mode=...)) instead."
        )


def where_check(name: str, cdt: dtype, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    d = _dtype_of(args[0])
    if d is not bool_ and d is not dtypes.uint8:
        raise RuntimeError(
            f"{name}: where expected condition to be a boolean tensor, but got a tensor with "
            f"dtype {d._short}; pass condition.bool()"
        )


def pow_check(name: str, cdt: dtype, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """An integral base to a negative Python-integer exponent has no integer result."""
    if cdt.category <= dtypes.INTEGRAL and cdt is not bool_ and len(args) > 1:
        e = args[1]
        if type(e) is int and e < 0 and hasattr(args[0], "dtype"):
            raise RuntimeError(
                f"{name}: Integers to negative integer powers are not allowed (exponent {e} for "
                f"dtype {cdt.name}); use a floating-point base"
            )


def no_complex(what: str, error: type[Exception] = RuntimeError) -> Check:
    """A check refusing complex operands with PyTorch's error type for ``what``."""

    def check(name: str, cdt: dtype, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        if cdt.category == dtypes.COMPLEX:
            raise error(f"{name}: {what} is not supported for complex tensors; use .real or .abs()")

    return check


def heaviside_check(name: str, cdt: dtype, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """heaviside refuses complex operands, and operands of different dtypes."""
    if cdt.category == dtypes.COMPLEX:
        raise RuntimeError(f"{name}: heaviside is not yet implemented for complex tensors")
    a, b = _dtype_of(args[0]), _dtype_of(args[1])
    if a is not b:
        raise RuntimeError(
            f"{name}: heaviside is not yet implemented for tensors with different dtypes "
            f"({a._short} and {b._short}); convert values with .to(self.dtype)"
        )


# --------------------------------------------------------------------------- binary arithmetic

pointwise("add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor", check=add_check)
pointwise("add.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor",
          out="Scalar_out", check=add_check)  # fmt: skip
pointwise("sub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor", check=sub_check)
pointwise("sub.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor",
          out="Scalar_out", check=sub_check)  # fmt: skip
pointwise("rsub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
          inplace=False, out="Tensor_out", check=sub_check)  # fmt: skip
pointwise("rsub.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor",
          inplace=False, out="Scalar_out", check=sub_check)  # fmt: skip
pointwise("mul.Tensor(Tensor self, Tensor other) -> Tensor")
pointwise("mul.Scalar(Tensor self, Scalar other) -> Tensor", out="Scalar_out")
pointwise("div.Tensor(Tensor self, Tensor other) -> Tensor", I2F)
pointwise("div.Scalar(Tensor self, Scalar other) -> Tensor", I2F, out="Scalar_out")
# the promotion of the rounding modes depends on the mode: I2F for None, DEFAULT otherwise
pointwise("div.Tensor_mode(Tensor self, Tensor other, *, str? rounding_mode) -> Tensor", D,
          out="out_mode", unsupported=NO_BOOL_COMPLEX)  # fmt: skip
pointwise("div.Scalar_mode(Tensor self, Scalar other, *, str? rounding_mode) -> Tensor", D,
          out="Scalar_mode_out", unsupported=NO_BOOL_COMPLEX)  # fmt: skip
pointwise("floor_divide(Tensor self, Tensor other) -> Tensor",
          inplace="Tensor", unsupported=NO_BOOL_COMPLEX)  # fmt: skip
pointwise("floor_divide.Scalar(Tensor self, Scalar other) -> Tensor",
          out="Scalar_out", unsupported=NO_BOOL_COMPLEX)  # fmt: skip
pointwise("remainder.Tensor(Tensor self, Tensor other) -> Tensor",
          out="Tensor_out", unsupported=NO_BOOL_COMPLEX)  # fmt: skip
pointwise("remainder.Scalar(Tensor self, Scalar other) -> Tensor",
          out="Scalar_out", unsupported=NO_BOOL_COMPLEX)  # fmt: skip
pointwise("remainder.Scalar_Tensor(Scalar self, Tensor other) -> Tensor",
          inplace=False, out="Scalar_Tensor_out", unsupported=NO_BOOL_COMPLEX)  # fmt: skip
pointwise("fmod.Tensor(Tensor self, Tensor other) -> Tensor",
          out="Tensor_out", unsupported=NO_BOOL_COMPLEX)  # fmt: skip
pointwise("fmod.Scalar(Tensor self, Scalar other) -> Tensor",
          out="Scalar_out", unsupported=NO_BOOL_COMPLEX)  # fmt: skip
pointwise("pow.Tensor_Tensor(Tensor self, Tensor exponent) -> Tensor", B2L, inplace="Tensor",
          out="Tensor_Tensor_out", unsupported=NO_BOOL, check=pow_check)  # fmt: skip
pointwise("pow.Tensor_Scalar(Tensor self, Scalar exponent) -> Tensor", B2L, inplace="Scalar",
          out="Tensor_Scalar_out", unsupported=NO_BOOL, check=pow_check)  # fmt: skip
pointwise("pow.Scalar(Scalar self, Tensor exponent) -> Tensor", B2L,
          inplace=False, out="Scalar_out", unsupported=NO_BOOL)  # fmt: skip
pointwise("maximum(Tensor self, Tensor other) -> Tensor", inplace=False, unsupported=COMPLEX,
          check=extremum_check)  # fmt: skip
pointwise("minimum(Tensor self, Tensor other) -> Tensor", inplace=False, unsupported=COMPLEX,
          check=extremum_check)  # fmt: skip
pointwise("atan2(Tensor self, Tensor other) -> Tensor", I2F, unsupported=COMPLEX)
pointwise("hypot(Tensor self, Tensor other) -> Tensor", unsupported=ONLY_FLOAT)
_ldexp = define("ldexp.Tensor(Tensor self, Tensor other) -> Tensor", out=True)
define("frexp.Tensor(Tensor self) -> (Tensor mantissa, Tensor exponent)", out=True,
       out_overload="Tensor_out")  # fmt: skip
# PyTorch's in-place overload is ldexp_'s default one, not ldexp_.Tensor
_ldexp_ = define_op("ldexp_(Tensor(a!) self, Tensor other) -> Tensor(a!)", "aten", (), ("method",))
VARIANTS_OF[_ldexp] = (_ldexp_, VARIANTS_OF[_ldexp][1])
FUNCTIONAL_OF[_ldexp_] = _ldexp
pointwise("logaddexp(Tensor self, Tensor other) -> Tensor", inplace=False, unsupported=ONLY_INEXACT)
pointwise("logaddexp2(Tensor self, Tensor other) -> Tensor", inplace=False, unsupported=ONLY_FLOAT)
pointwise("copysign.Tensor(Tensor self, Tensor other) -> Tensor", I2F, unsupported=COMPLEX)
pointwise("copysign.Scalar(Tensor self, Scalar other) -> Tensor", I2F,
          out="Scalar_out", unsupported=COMPLEX)  # fmt: skip
pointwise("nextafter(Tensor self, Tensor other) -> Tensor", unsupported=ONLY_FLOAT)
pointwise("heaviside(Tensor self, Tensor values) -> Tensor", check=heaviside_check)
for _name in ("gcd", "lcm"):
    pointwise(f"{_name}(Tensor self, Tensor other) -> Tensor", unsupported=ONLY_INTEGRAL | NO_BOOL)
for _name in ("fmax", "fmin"):
    pointwise(f"{_name}(Tensor self, Tensor other) -> Tensor", inplace=False,
              unsupported=COMPLEX, check=extremum_check)  # fmt: skip

# --------------------------------------------------------------------------- comparisons

for _name in ("eq", "ne", "lt", "le", "gt", "ge"):
    _bad = frozenset() if _name in ("eq", "ne") else COMPLEX
    pointwise(f"{_name}.Tensor(Tensor self, Tensor other) -> Tensor", BOOL,
              out="Tensor_out", unsupported=_bad)  # fmt: skip
    pointwise(f"{_name}.Scalar(Tensor self, Scalar other) -> Tensor", BOOL,
              out="Scalar_out", unsupported=_bad)  # fmt: skip

# --------------------------------------------------------------------------- logical, bitwise

for _name in ("logical_and", "logical_or", "logical_xor"):
    pointwise(f"{_name}(Tensor self, Tensor other) -> Tensor", BOOL)
for _name in ("bitwise_and", "bitwise_or", "bitwise_xor"):
    pointwise(f"{_name}.Tensor(Tensor self, Tensor other) -> Tensor",
              out="Tensor_out", unsupported=ONLY_INTEGRAL)  # fmt: skip
    pointwise(f"{_name}.Scalar(Tensor self, Scalar other) -> Tensor",
              out="Scalar_out", unsupported=ONLY_INTEGRAL)  # fmt: skip
    pointwise(f"{_name}.Scalar_Tensor(Scalar self, Tensor other) -> Tensor",
              inplace=False, out="Scalar_Tensor_out", unsupported=ONLY_INTEGRAL)  # fmt: skip
for _name in ("bitwise_left_shift", "bitwise_right_shift"):
    _bad = ONLY_INTEGRAL | NO_BOOL
    pointwise(f"{_name}.Tensor(Tensor self, Tensor other) -> Tensor",
              out="Tensor_out", unsupported=_bad)  # fmt: skip
    pointwise(f"{_name}.Tensor_Scalar(Tensor self, Scalar other) -> Tensor",
              out="Tensor_Scalar_out", unsupported=_bad)  # fmt: skip
    pointwise(f"{_name}.Scalar_Tensor(Scalar self, Tensor other) -> Tensor",
              inplace=False, out="Scalar_Tensor_out", unsupported=_bad)  # fmt: skip
# what Python's << and >> dispatch on PyTorch (Tensor.__lshift__ is these ops, not bitwise_*)
for _name in ("__lshift__", "__rshift__"):
    _bad = ONLY_INTEGRAL | NO_BOOL
    pointwise(f"{_name}.Tensor(Tensor self, Tensor other) -> Tensor",
              inplace=False, out="Tensor_out", unsupported=_bad, variants=())  # fmt: skip
    pointwise(f"{_name}.Scalar(Tensor self, Scalar other) -> Tensor",
              inplace=False, out="Scalar_out", unsupported=_bad, variants=())  # fmt: skip

# --------------------------------------------------------------------------- selection

pointwise("where.self(Tensor condition, Tensor self, Tensor other) -> Tensor",
          inplace=False, out="self_out", check=where_check)  # fmt: skip
pointwise("where.ScalarOther(Tensor condition, Tensor self, Scalar other) -> Tensor",
          inplace=False, out=False, check=where_check)  # fmt: skip
pointwise("where.ScalarSelf(Tensor condition, Scalar self, Tensor other) -> Tensor",
          inplace=False, out=False, check=where_check)  # fmt: skip
pointwise("where.Scalar(Tensor condition, Scalar self, Scalar other) -> Tensor",
          inplace=False, out=False, check=where_check)  # fmt: skip
pointwise("clamp(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor",
          unsupported=COMPLEX, check=clamp_check)  # fmt: skip
pointwise("clamp.Tensor(Tensor self, Tensor? min=None, Tensor? max=None) -> Tensor",
          out="Tensor_out", unsupported=COMPLEX, check=clamp_check)  # fmt: skip
for _name in ("clamp_min", "clamp_max"):
    pointwise(f"{_name}(Tensor self, Scalar {_name[-3:]}) -> Tensor", unsupported=COMPLEX,
              check=no_bool_scalar_bound)  # fmt: skip
    pointwise(f"{_name}.Tensor(Tensor self, Tensor {_name[-3:]}) -> Tensor",
              out="Tensor_out", unsupported=COMPLEX)  # fmt: skip

# --------------------------------------------------------------------------- ternary

pointwise("lerp.Scalar(Tensor self, Tensor end, Scalar weight) -> Tensor",
          out="Scalar_out", unsupported=ONLY_INEXACT, check=lerp_check)  # fmt: skip
# A weight tensor takes part in promotion (lerp_check has made sure it is 0-dim or of self's
# dtype): PyTorch's lerp of int tensors with a 0-dim float weight is a float result.
pointwise("lerp.Tensor(Tensor self, Tensor end, Tensor weight) -> Tensor",
          out="Tensor_out", unsupported=ONLY_INEXACT, check=lerp_check,
          operands=("self", "end", "weight"))  # fmt: skip
pointwise("addcmul(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor",
          unsupported=NO_BOOL)  # fmt: skip
pointwise("addcdiv(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor",
          check=addcdiv_check)  # fmt: skip

# --------------------------------------------------------------------------- unary

pointwise("neg(Tensor self) -> Tensor", check=no_bool_negation)
pointwise("abs(Tensor self) -> Tensor", C2F, unsupported=NO_BOOL, check=abs_check)
for _name in ("exp", "expm1", "log", "log2", "log1p", "sqrt", "rsqrt", "sin", "cos", "tan",
              "tanh", "sigmoid", "reciprocal"):  # fmt: skip
    pointwise(f"{_name}(Tensor self) -> Tensor", I2F)
pointwise("erf(Tensor self) -> Tensor", I2F, unsupported=COMPLEX)
pointwise("relu(Tensor self) -> Tensor", unsupported=COMPLEX, check=no_bool_relu)
# relu's backward in PyTorch: the gradient where self > threshold, else 0 (one op, not two)
pointwise("threshold_backward(Tensor grad_output, Tensor self, Scalar threshold) -> Tensor",
          inplace=False, out=False, unsupported=NO_BOOL_COMPLEX, variants=())  # fmt: skip
pointwise('gelu(Tensor self, *, str approximate="none") -> Tensor', unsupported=ONLY_FLOAT)
pointwise("silu(Tensor self) -> Tensor", unsupported=ONLY_INEXACT)
for _name in ("floor", "ceil", "round", "trunc"):
    pointwise(f"{_name}(Tensor self) -> Tensor", unsupported=NO_BOOL_COMPLEX)
pointwise("round.decimals(Tensor self, *, int decimals) -> Tensor",
          out="decimals_out", unsupported=ONLY_FLOAT)  # fmt: skip
pointwise("sign(Tensor self) -> Tensor", unsupported=COMPLEX)
pointwise("square(Tensor self) -> Tensor", B2L)
for _name in ("isnan", "isinf"):
    pointwise(f"{_name}(Tensor self) -> Tensor", BOOL, inplace=False)
pointwise("isfinite(Tensor self) -> Tensor", BOOL, inplace=False, out=False)
pointwise("logical_not(Tensor self) -> Tensor", BOOL)
pointwise("bitwise_not(Tensor self) -> Tensor", unsupported=ONLY_INTEGRAL)
pointwise(
    "nan_to_num(Tensor self, float? nan=None, float? posinf=None, float? neginf=None) -> Tensor"
)
for _name in ("asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "log10"):
    pointwise(f"{_name}(Tensor self) -> Tensor", I2F)
pointwise("frac(Tensor self) -> Tensor", unsupported=ONLY_FLOAT)
pointwise("sgn(Tensor self) -> Tensor")
pointwise("signbit(Tensor self) -> Tensor", BOOL, inplace=False, unsupported=COMPLEX)
for _name in ("deg2rad", "rad2deg"):
    pointwise(f"{_name}(Tensor self) -> Tensor", I2F, check=no_complex(_name))
pointwise("angle(Tensor self) -> Tensor", Promotion.INT_TO_FLOAT_REAL, inplace=False)
for _name in ("isneginf", "isposinf"):
    pointwise(f"{_name}(Tensor self) -> Tensor", BOOL, inplace=False, check=no_complex(_name))
# the complex conjugate as a new tensor: ``_conj_physical`` computes it (a copy for real
# inputs); ``conj_physical`` returns a real input itself and is ``_conj_physical`` otherwise,
# so, like ``positive``, it has one CompositeImplicitAutograd kernel (in
# ember/backends/cpu/pointwise.py) and no elementwise one; its in-place and out= variants are
# derived from that kernel
pointwise("_conj_physical(Tensor self) -> Tensor", inplace=False)
define("conj_physical(Tensor self) -> Tensor", inplace=True, out=True)

# positive returns its input itself (an alias), so it is not an elementwise kernel: it has one
# CompositeImplicitAutograd kernel (ember/backends/cpu/pointwise.py) and no variants.
define_op("positive(Tensor(a) self) -> Tensor(a)", "aten", (), _FUNCTION_AND_METHOD)
POSITIVE_CHECK = no_bool_positive


# --------------------------------------------------------------------------- whole-tensor
# comparisons, clip and type_as: PyTorch's compositions (CompositeImplicitAutograd, so
# __torch_dispatch__ code sees their parts) and equal/allclose, which return a Python bool
define("isclose(Tensor self, Tensor other, float rtol=1e-05, float atol=1e-08, "
       "bool equal_nan=False) -> Tensor")  # fmt: skip
define("allclose(Tensor self, Tensor other, float rtol=1e-05, float atol=1e-08, "
       "bool equal_nan=False) -> bool", tags=("data_dependent_output",))  # fmt: skip
define("equal(Tensor self, Tensor other) -> bool", tags=("data_dependent_output",))
# a one-element tensor's value as a Python number: what Tensor.item() runs on a tensor with no
# data of its own (a wrapper subclass's handler answers it, as in PyTorch)
define("_local_scalar_dense(Tensor self) -> Scalar", tags=("data_dependent_output",), variants=())
define("type_as(Tensor self, Tensor other) -> Tensor", variants=("method",))
for _ov, _types in (("", "Scalar"), ("Tensor", "Tensor")):
    define(
        f"clip{'.' + _ov if _ov else ''}(Tensor self, {_types}? min=None, {_types}? max=None)"
        " -> Tensor",
        inplace=True,
        out=True,
        out_overload=f"{_ov}_out" if _ov else "out",
    )
_clip_ = VARIANTS_OF[ops.aten.clip.default][0]
assert _clip_ is not None
_clip_.overloadpacket._variants.update(("function",))  # ember.clip_, as torch.clip_
define("isreal(Tensor self) -> Tensor")

# NumPy-style aliases: ops of their own (so __torch_dispatch__ code sees the alias's name
# only where PyTorch's does), each a CompositeImplicitAutograd kernel calling its target
#: alias -> the op it is, for the functional overloads (in-place and out= follow)
ALIASES: dict[str, str] = {
    "arcsin": "asin", "arccos": "acos", "arctan": "atan", "arcsinh": "asinh",
    "arccosh": "acosh", "arctanh": "atanh", "fix": "trunc", "negative": "neg",
}  # fmt: skip
for _alias in ALIASES:
    define(f"{_alias}(Tensor self) -> Tensor", inplace=True, out=True)
# tagged pointwise, as PyTorch's, so a Python number fills ``other`` (``true_divide(x, 2,
# out=y)``), as div's
define("true_divide.Tensor(Tensor self, Tensor other) -> Tensor", inplace=True, out=True,
       tags=("pointwise",))  # fmt: skip
define("true_divide.Scalar(Tensor self, Scalar other) -> Tensor", inplace=True, out=False,
       tags=("pointwise",))  # fmt: skip


# float_power: pow in float64 (complex128 for a complex operand), PyTorch's composition
# (CompositeImplicitAutograd: to and pow are what subclasses and autograd see); the in-place
# and out= overloads check the destination is already of that dtype
_FP = "float_power"
for _ov, _args, _ip, _out in (
    ("Tensor_Tensor", "Tensor self, Tensor exponent", "Tensor", "Tensor_Tensor_out"),
    ("Tensor_Scalar", "Tensor self, Scalar exponent", "Scalar", "Tensor_Scalar_out"),
    ("Scalar", "Scalar self, Tensor exponent", None, "Scalar_out"),
):
    _schema = f"{_FP}.{_ov}({_args}) -> Tensor"
    _fp = define_op(_schema, "aten", ("pointwise",), _FUNCTION_AND_METHOD if _ip else ("function",))
    _fp_ip = None
    if _ip is not None:
        _fp_ip = define_op(_rename(inplace_schema(_schema), _ip), "aten", ("pointwise",),
                           ("method",))  # fmt: skip
    _fp_out = define_op(out_schema(_schema, _out), "aten", ("pointwise",), ())
    # FUNCTIONAL_OF only: VARIANTS_OF would derive CPU kernels writing the result into any
    # floating destination, where these check its dtype (their own kernels, below)
    for _v in (_fp_ip, _fp_out):
        if _v is not None:
            FUNCTIONAL_OF[_v] = _fp

# isin: whether each element is among test_elements (compared in their promoted dtype)
define("isin.Tensor_Tensor(Tensor elements, Tensor test_elements, *, bool assume_unique=False, "
       "bool invert=False) -> Tensor", out=True, out_overload="Tensor_Tensor_out",
       variants=("function",))  # fmt: skip
define("isin.Tensor_Scalar(Tensor elements, Scalar test_element, *, bool assume_unique=False, "
       "bool invert=False) -> Tensor", out=True, out_overload="Tensor_Scalar_out",
       variants=("function",))  # fmt: skip
define("isin.Scalar_Tensor(Scalar element, Tensor test_elements, *, bool assume_unique=False, "
       "bool invert=False) -> Tensor", out=True, out_overload="Scalar_Tensor_out",
       variants=("function",))  # fmt: skip


def isin_dtype(elements: Any, test_elements: Any) -> dtype:
    """The dtype isin compares in (PyTorch's promotion), refusing bool and complex as PyTorch
    does (shared by the CPU kernel and the Meta rule)."""
    for x in (elements, test_elements):  # each operand's own dtype, as PyTorch checks
        d = getattr(x, "dtype", None)
        if d is bool_ or (d is not None and d.category == dtypes.COMPLEX):
            raise RuntimeError(
                f"Unsupported input type encountered for isin(): {d._short}; compare "
                "booleans with ==, complex numbers through .real and .imag"
            )
    return dtypes.result_type_of((elements, test_elements))


# CompositeImplicitAutograd kernels of the ops above
_aten = ops.aten
_CIA = "CompositeImplicitAutograd"


def check_isclose(a: dtype, b: dtype, rtol: float, atol: float) -> None:
    """``isclose``'s argument checks (PyTorch's errors)."""
    if a is not b:
        raise RuntimeError(
            f"isclose: {a._short} did not match {b._short}; convert one of them with .to()"
        )
    if rtol < 0:
        raise RuntimeError(f"isclose: rtol must be greater than or equal to zero, but got {rtol}")
    if atol < 0:
        raise RuntimeError(f"isclose: atol must be greater than or equal to zero, but got {atol}")


@impl(_aten.isclose.default, _CIA)
def isclose(
    self: Any, other: Any, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False
) -> Any:
    """Elementwise ``|self - other| <= atol + rtol * |other|`` (or equal, or both NaN with
    ``equal_nan``), as PyTorch composes it.

    >>> ember.isclose(ember.tensor([1.0, 2.0]), ember.tensor([1.0 + 1e-9, 2.1]))
    tensor([ True, False])
    """
    check_isclose(self.dtype, other.dtype, rtol, atol)
    close = _aten.eq.Tensor(self, other)
    if equal_nan and self.dtype.is_floating_point:
        both = _aten.logical_and.default(_aten.isnan.default(self), _aten.isnan.default(other))
        close = _aten.logical_or.default(close, both)
    if rtol == 0 and atol == 0:
        return close
    if self.dtype.category < dtypes.FLOATING:  # the error is computed in the default dtype
        self = _aten.to.dtype(self, dtypes.get_default_dtype())
        other = _aten.to.dtype(other, dtypes.get_default_dtype())
    allowed = _aten.add.Scalar(_aten.abs.default(_aten.mul.Scalar(other, rtol)), atol)
    actual = _aten.abs.default(_aten.sub.Tensor(self, other))
    finite = _aten.logical_and.default(
        _aten.isfinite.default(actual), _aten.le.Tensor(actual, allowed)
    )
    return _aten.logical_or.default(close, finite)


@impl(_aten.type_as.default, _CIA)
def type_as(self: Any, other: Any) -> Any:
    return _aten.to.dtype(self, other.dtype)


for _clip in ("clip", "clip_"):
    for _ov in ("default", "Tensor"):
        _clamp = getattr(getattr(_aten, _clip.replace("clip", "clamp")), _ov)
        impl(getattr(getattr(_aten, _clip), _ov), _CIA, _clamp)
impl(_aten.clip.out, _CIA, _aten.clamp.out)
impl(_aten.clip.Tensor_out, _CIA, _aten.clamp.Tensor_out)
for _alias, _target in ALIASES.items():
    impl(getattr(_aten, _alias).default, _CIA, getattr(_aten, _target).default)
    impl(getattr(_aten, _alias + "_").default, _CIA, getattr(_aten, _target + "_").default)
    impl(getattr(_aten, _alias).out, _CIA, getattr(_aten, _target).out)
impl(_aten.true_divide.Tensor, _CIA, _aten.div.Tensor)
impl(_aten.true_divide_.Tensor, _CIA, _aten.div_.Tensor)
impl(_aten.true_divide.out, _CIA, _aten.div.out)
impl(_aten.true_divide.Scalar, _CIA, _aten.div.Scalar)
impl(_aten.true_divide_.Scalar, _CIA, _aten.div_.Scalar)


@impl(_aten.isreal.default, _CIA)
def isreal(self: Any) -> Any:
    """Whether each element has no imaginary part (all True for a real tensor).

    >>> ember.isreal(ember.tensor([1 + 0j, 1 + 1j]))
    tensor([ True, False])
    """
    if not self.dtype.is_complex:
        return _aten.ones_like.default(self, dtype=bool_)
    return _aten.eq.Scalar(_aten.imag.default(self), 0)


@impl(_aten.allclose.default, "CompositeExplicitAutograd")
def allclose(
    self: Any, other: Any, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False
) -> bool:
    """Whether every element of ``self`` is close to ``other``'s (``isclose``, all of it).

    >>> ember.allclose(ember.tensor([1.0, 2.0]), ember.tensor([1.0, 2.0 + 1e-9]))
    True
    """
    return bool(_aten.all.default(_aten.isclose.default(self, other, rtol, atol, equal_nan)))


def data_dependent(op: str, self: Any) -> NotImplementedError:
    """The Meta rule of an op whose result is a value of its inputs (``equal``, ``allclose``):
    a meta tensor has none (NOTE [data-dependent shapes] in ember/backends/meta/copies.py)."""
    return NotImplementedError(
        f"{op}: the result is a Python value computed from the inputs' values (shape "
        f"{list(self.shape)}), which a meta tensor does not have; run {op} on the cpu device"
    )


def _float_power_dtype(*xs: Any) -> dtype:
    cplx = any((x.dtype.is_complex if hasattr(x, "dtype") else isinstance(x, complex)) for x in xs)
    return complex128 if cplx else float64


def _power_scalar(x: Any, dt: dtype) -> Any:
    return complex(x) if dt is complex128 else float(x)


def _check_float_power_dest(dst: Any, dt: dtype, what: str) -> None:
    if dst.dtype is not dt:
        raise RuntimeError(
            f"the {what} given to float_power has dtype {dst.dtype._short} but the operation's "
            f"result requires dtype {dt._short}; make it {dt.name}"
        )


@impl(_aten.float_power.Tensor_Tensor, _CIA)
def float_power(self: Any, exponent: Any) -> Any:
    """``self ** exponent`` computed in float64 (complex128 if either is complex).

    >>> ember.float_power(ember.tensor([2, 3]), 2)
    tensor([4., 9.], dtype=ember.float64)
    """
    dt = _float_power_dtype(self, exponent)
    return _aten.pow.Tensor_Tensor(_aten.to.dtype(self, dt), _aten.to.dtype(exponent, dt))


@impl(_aten.float_power.Tensor_Scalar, _CIA)
def float_power_tensor_scalar(self: Any, exponent: Any) -> Any:
    dt = _float_power_dtype(self, exponent)
    return _aten.pow.Tensor_Scalar(_aten.to.dtype(self, dt), _power_scalar(exponent, dt))


@impl(_aten.float_power.Scalar, _CIA)
def float_power_scalar(self: Any, exponent: Any) -> Any:
    dt = _float_power_dtype(self, exponent)
    return _aten.pow.Scalar(_power_scalar(self, dt), _aten.to.dtype(exponent, dt))


@impl(_aten.float_power_.Tensor, _CIA)
def float_power_(self: Any, exponent: Any) -> Any:
    dt = _float_power_dtype(self, exponent)
    _check_float_power_dest(self, dt, "base")
    return _aten.pow_.Tensor(self, _aten.to.dtype(exponent, dt))


@impl(_aten.float_power_.Scalar, _CIA)
def float_power__scalar(self: Any, exponent: Any) -> Any:
    dt = _float_power_dtype(self, exponent)
    _check_float_power_dest(self, dt, "base")
    return _aten.pow_.Scalar(self, _power_scalar(exponent, dt))


@impl(_aten.float_power.Tensor_Tensor_out, _CIA)
def float_power_out(self: Any, exponent: Any, *, out: Any) -> Any:
    dt = _float_power_dtype(self, exponent)
    _check_float_power_dest(out, dt, "output")
    return _aten.pow.Tensor_Tensor_out(
        _aten.to.dtype(self, dt), _aten.to.dtype(exponent, dt), out=out
    )


@impl(_aten.float_power.Tensor_Scalar_out, _CIA)
def float_power_tensor_scalar_out(self: Any, exponent: Any, *, out: Any) -> Any:
    dt = _float_power_dtype(self, exponent)
    _check_float_power_dest(out, dt, "output")
    return _aten.pow.Tensor_Scalar_out(
        _aten.to.dtype(self, dt), _power_scalar(exponent, dt), out=out
    )


@impl(_aten.float_power.Scalar_out, _CIA)
def float_power_scalar_out(self: Any, exponent: Any, *, out: Any) -> Any:
    dt = _float_power_dtype(self, exponent)
    _check_float_power_dest(out, dt, "output")
    return _aten.pow.Scalar_out(_power_scalar(self, dt), _aten.to.dtype(exponent, dt), out=out)


@impl(_aten.ldexp.Tensor, _CIA)
def ldexp(self: Any, other: Any) -> Any:
    """``self * 2 ** other``, in the promoted dtype (the default float for integers)."""
    d = dtypes.promote_types(self.dtype, other.dtype)
    if d.category < dtypes.FLOATING:
        d = dtypes.get_default_dtype()
    two = _aten.pow.Scalar(
        2.0, _aten._to_copy.default(other, dtype=d) if other.dtype is not d else other
    )
    return _aten.mul.Tensor(self, two)


def check_frexp(d: dtype) -> None:
    if d.category != dtypes.FLOATING:
        raise RuntimeError(
            "torch.frexp() only supports floating-point dtypes (got "
            f"{d._short}: convert the input with .float())"
        )
