"""How each pointwise op picks its result dtype (PyTorch's ELEMENTWISE_TYPE_PROMOTION_KIND).

One rule per op, shared by every backend, so the CPU kernel and the Meta rule cannot
disagree. See NOTE [type promotion] in ``ember/dtypes.py`` for the base rule.
"""

from __future__ import annotations

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


def operands_dtype(operands: tuple[Any, ...]) -> dtype:
    """result_type of tensors and scalars, with a fast path for the common pairs."""
    if len(operands) == 2:
        a, b = operands
        da = getattr(a, "_data", None)
        db = getattr(b, "_data", None)
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
        da = getattr(operands[0], "_data", None)
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
    if kind is Promotion.BOOL_TO_LONG:
        return common, (dtypes.int64 if common is dtypes.bool_ else common)
    raise AssertionError(kind)


#: pointwise op packet name -> its promotion rule; filled by the catalogue's declarations
PROMOTION: dict[str, Promotion] = {}
