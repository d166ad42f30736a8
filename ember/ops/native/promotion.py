"""How each pointwise op picks its dtypes (PyTorch's ELEMENTWISE_TYPE_PROMOTION_KIND) and which
dtypes it accepts.

One rule per op, shared by every backend, so the CPU kernel and the Meta rule cannot
disagree: both call :func:`pointwise_dtypes`, which promotes and then validates. See NOTE
[type promotion] in ``ember/dtypes.py`` for the base rule.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import Any

from ember import dtypes
from ember.dtypes import FLOATING, INTEGRAL, dtype, result_type_of


class Promotion(Enum):
    DEFAULT = "default"  # result_type of the operands
    INT_TO_FLOAT = "int_to_float"  # ... then bool/int become the default float (sqrt, div)
    ALWAYS_BOOL = "always_bool"  # computed in result_type, returns bool (eq, isnan)
    COMPLEX_TO_FLOAT = "complex_to_float"  # ... then complex becomes its real type (abs)
    BOOL_TO_LONG = "bool_to_long"  # ... then bool becomes int64
    NO_OPMATH = "no_opmath"  # like DEFAULT (ember computes in the result dtype anyway)
    INT_TO_FLOAT_REAL = "int_to_float_real"  # INT_TO_FLOAT, and complex to its real (angle)


def operands_dtype(operands: tuple[Any, ...]) -> dtype:
    """result_type of tensors and scalars, with a fast path for the common pairs."""
    if len(operands) == 2:
        a, b = operands
        da = getattr(a, "_edata", None)
        db = getattr(b, "_edata", None)
        if da is not None:
            if db is not None:
                if da.dtype is db.dtype:
                    return dtypes.FROM_NUMPY[da.dtype]
            else:
                d = dtypes.FROM_NUMPY[da.dtype]
                tb = type(b)
                if (tb is float and d.category >= FLOATING) or (
                    tb is int and d.category >= INTEGRAL
                ):
                    return d
    elif len(operands) == 1:
        da = getattr(operands[0], "_edata", None)
        if da is not None:
            return dtypes.FROM_NUMPY[da.dtype]
    return result_type_of(operands)


def compute_dtype(kind: Promotion, operands: tuple[Any, ...]) -> tuple[dtype, dtype]:
    """(dtype to compute in, dtype of the result) for a pointwise op."""
    common = operands_dtype(operands)
    if kind is Promotion.DEFAULT or kind is Promotion.NO_OPMATH:
        return common, common
    if kind is Promotion.INT_TO_FLOAT:
        if common.category < FLOATING:
            common = dtypes.get_default_dtype()
        return common, common
    if kind is Promotion.ALWAYS_BOOL:
        return common, dtypes.bool_
    if kind is Promotion.COMPLEX_TO_FLOAT:
        return common, common.to_real()
    if kind is Promotion.INT_TO_FLOAT_REAL:
        if common.category < FLOATING:
            common = dtypes.get_default_dtype()
        return common, common.to_real()
    if kind is Promotion.BOOL_TO_LONG:
        return common, (dtypes.int64 if common is dtypes.bool_ else common)
    raise AssertionError(kind)


#: extra validation of one op: ``check(op name, compute dtype, args, kwargs)`` raises
Check = Callable[[str, dtype, tuple[Any, ...], dict[str, Any]], None]
_NO_KWARGS: dict[str, Any] = {}


@dataclass(frozen=True, slots=True)
class PointwiseInfo:
    """What the backends need to know about one pointwise overload beyond its schema."""

    kind: Promotion
    operands: tuple[int, ...]  # positional indices of the arguments that take part in promotion
    unsupported: frozenset[dtype]  # compute dtypes PyTorch has no kernel for
    check: Check | None  # further validation (bool negation, mixed lerp dtypes, ...)


#: pointwise op packet name -> its promotion rule; filled by the catalogue's declarations
PROMOTION: dict[str, Promotion] = {}
#: pointwise overload name ("add.Tensor", "add_.Tensor", "add.out") -> its info
POINTWISE: dict[str, PointwiseInfo] = {}


def not_implemented(name: str, cdt: dtype) -> NotImplementedError:
    """PyTorch's error for a dtype an op has no kernel for."""
    return NotImplementedError(
        f"{name}: not implemented for '{cdt._short}' (dtype {cdt.name}); cast the input with "
        ".to(dtype) to a supported dtype"
    )


def pointwise_dtypes(
    name: str,
    info: PointwiseInfo,
    args: tuple[Any, ...],
    kwargs: dict[str, Any] = _NO_KWARGS,
    kind: Promotion | None = None,
) -> tuple[dtype, dtype]:
    """(compute dtype, result dtype) of a call's positional ``args``, after checking the op
    supports them.

    >>> from ember.ops.native.promotion import POINTWISE, pointwise_dtypes
    >>> pointwise_dtypes("div.Tensor", POINTWISE["div.Tensor"], (ember.ones(2), 2))
    (ember.float32, ember.float32)
    """
    cdt, rdt = compute_dtype(info.kind if kind is None else kind, operand_values(info, args))
    # The op's own argument checks come first, as PyTorch's run before it looks for a kernel
    # (lerp with an int self and a float weight is a dtype mismatch, not a missing kernel).
    if info.check is not None:
        info.check(name, cdt, args, kwargs)
    if cdt in info.unsupported:
        raise not_implemented(name, cdt)
    return cdt, rdt


def operand_values(info: PointwiseInfo, args: tuple[Any, ...]) -> tuple[Any, ...]:
    """The arguments of a call that take part in promotion (skipping omitted and None ones)."""
    n = len(args)
    return tuple(args[i] for i in info.operands if i < n and args[i] is not None)


#: the pointwise ops PyTorch 2.13 computes in uint16, uint32 and uint64 (NOTE [shell
#: unsigned dtypes] in ``ember/dtypes.py``); every other pointwise op refuses them as its
#: compute dtype (those that compute integers in the default float, ``sqrt`` or ``div``,
#: never compute in them)
SHELL_POINTWISE = frozenset({
    "bitwise_and", "bitwise_or", "bitwise_xor", "ceil", "floor", "trunc", "round", "eq", "ne",
    "mul", "isfinite", "isinf", "isnan", "isneginf", "isposinf", "signbit", "where",
    "nan_to_num",
})  # fmt: skip


def refuse_shell_dtypes() -> None:
    """Make uint16/32/64 unsupported compute dtypes of the pointwise overloads PyTorch has
    no kernel of them for (``round`` with ``decimals`` among them); run once the catalogue
    has declared its ops."""
    shell = frozenset(dtypes.SHELL_DTYPES)
    for name, info in POINTWISE.items():
        packet, _, overload = name.partition(".")
        if packet.rstrip("_") in SHELL_POINTWISE and not overload.startswith("decimals"):
            continue
        if not shell <= info.unsupported:  # (one info serves an op's variants)
            object.__setattr__(info, "unsupported", info.unsupported | shell)
