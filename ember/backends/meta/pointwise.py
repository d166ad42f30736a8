"""The Meta rule of every pointwise op: broadcast the tensor operands' shapes, promote their
dtypes by the op's rule. One generic rule, registered for each op tagged ``pointwise``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ember._shape_only import ShapeOnlyArray
from ember._tensor import Tensor, wrap_shape_only
from ember.backends.shapes import broadcast_shapes
from ember.dispatch.keys import DispatchKey
from ember.library import impl
from ember.ops.native._define import FUNCTIONAL_OF
from ember.ops.native.promotion import PROMOTION, compute_dtype
from ember.ops.registry import OpOverload, all_overloads


def pointwise_rule(op: OpOverload) -> Callable[..., Tensor]:
    schema = op._schema
    tensor_pos = [i for i, a in enumerate(schema.positional) if a.type.is_tensor]
    kind = PROMOTION[op.overloadpacket.__name__]
    name = op.__name__

    def rule(*args: Any, **kwargs: Any) -> Tensor:
        operands = tuple(args[i] for i in tensor_pos if i < len(args))
        shapes = [x.shape for x in operands if isinstance(x, Tensor)]
        shape = broadcast_shapes(*shapes, op=name)
        _, rdt = compute_dtype(kind, operands)
        return wrap_shape_only(ShapeOnlyArray(shape, rdt.np))

    return rule


for _op in all_overloads():
    if "pointwise" in _op.tags and _op not in FUNCTIONAL_OF:
        impl(_op, DispatchKey.Meta, pointwise_rule(_op))
