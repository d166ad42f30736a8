"""The pointwise ops: one line each, schema plus promotion rule (NOTE [type promotion]).

Every ``Tensor`` argument of a pointwise op also accepts a Python number (PyTorch's
"wrapped numbers"), which takes part in promotion with the lowest priority.
"""

from __future__ import annotations

from ember.ops.native._define import define
from ember.ops.native.promotion import PROMOTION, Promotion
from ember.ops.registry import OpOverload

D, I2F, BOOL, C2F = (
    Promotion.DEFAULT,
    Promotion.INT_TO_FLOAT,
    Promotion.ALWAYS_BOOL,
    Promotion.COMPLEX_TO_FLOAT,
)


def pointwise(schema: str, promotion: Promotion = D, *, inplace: bool = True) -> OpOverload:
    """Declare a pointwise op with its in-place and out= variants and promotion rule."""
    op = define(schema, tags=("pointwise",), inplace=inplace, out=True)
    PROMOTION[op.overloadpacket.__name__] = promotion
    PROMOTION[op.overloadpacket.__name__ + "_"] = promotion
    return op


# binary arithmetic
pointwise("add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor")
pointwise("sub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor")
pointwise("mul.Tensor(Tensor self, Tensor other) -> Tensor")
pointwise("div.Tensor(Tensor self, Tensor other) -> Tensor", I2F)

# unary
pointwise("neg(Tensor self) -> Tensor")
pointwise("exp(Tensor self) -> Tensor", I2F)
pointwise("abs(Tensor self) -> Tensor", C2F)

# comparisons
pointwise("eq.Tensor(Tensor self, Tensor other) -> Tensor", BOOL)
pointwise("lt.Tensor(Tensor self, Tensor other) -> Tensor", BOOL)
