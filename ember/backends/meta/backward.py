"""Meta rules of the view-undoing backward ops: the input's shape, the gradient's dtype."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ember._shape_only import ShapeOnlyArray
from ember._tensor import Tensor, wrap_shape_only
from ember.dispatch.keys import DispatchKey
from ember.library import impl
from ember.ops.registry import ops

aten = ops.aten


def _like_input(grad_output: Tensor, input_sizes: Sequence[int], *args: Any) -> Tensor:
    return wrap_shape_only(ShapeOnlyArray(tuple(input_sizes), grad_output.dtype.np))


for _op in (aten.select_backward.default, aten.slice_backward.default,
            aten.diagonal_backward.default):  # fmt: skip
    impl(_op, DispatchKey.Meta, _like_input)
