"""The Meta rule of every pointwise op: broadcast the tensor arguments' shapes, promote the
operands' dtypes by the op's rule and validate them with the function the CPU kernel calls
(``pointwise_dtypes``), so Meta raises what CPU raises for anything that is not value-bound."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ember._shape_only import ShapeOnlyArray
from ember._tensor import Tensor, wrap_shape_only
from ember.backends.cpu.pointwise import check_gelu, check_rounding_mode
from ember.dispatch.keys import DispatchKey
from ember.library import impl
from ember.ops.native._define import FUNCTIONAL_OF
from ember.ops.native.pointwise import (
    check_frexp,
    data_dependent,
    isin_dtype,
    layout_operands,
    pointwise_result_strides,
)
from ember.ops.native.promotion import POINTWISE, pointwise_dtypes
from ember.ops.registry import OpOverload, all_overloads, ops
from ember.ops.shapes import broadcast_shapes
from ember.return_types import frexp as frexp_t

aten = ops.aten
Meta = DispatchKey.Meta


def pointwise_rule(op: OpOverload) -> Callable[..., Tensor]:
    """Shape and dtype of a pointwise op's result, with the CPU kernel's dtype errors."""
    tensor_pos, number_pos = layout_operands(op)
    name = op.__name__
    info = POINTWISE[name]
    # div with rounding_mode=None is true division: div.Tensor's rule (as the CPU kernel runs)
    true_div = POINTWISE.get(name.replace("_mode", "").replace("Tensor_out", "out"))

    def rule(*args: Any, **kwargs: Any) -> Tensor:
        rules = info
        if "rounding_mode" in kwargs:
            check_rounding_mode(name, kwargs["rounding_mode"])
            if kwargs["rounding_mode"] is None and true_div is not None:
                rules = true_div
        if "approximate" in kwargs:
            check_gelu(name, kwargs["approximate"])
        n = len(args)
        tensors = [args[i] for i in tensor_pos if i < n and isinstance(args[i], Tensor)]
        shape = broadcast_shapes(*[t.shape for t in tensors], op=name)
        _, rdt = pointwise_dtypes(name, rules, args, kwargs)
        strides = pointwise_result_strides(name, shape, args, tensor_pos, number_pos)
        return wrap_shape_only(ShapeOnlyArray(shape, rdt.np, strides))

    return rule


for _op in all_overloads():
    if "pointwise" in _op.tags and _op not in FUNCTIONAL_OF and _op.__name__ in POINTWISE:
        impl(_op, Meta, pointwise_rule(_op))


@impl(aten.abs_.default, Meta)
def abs_(self: Tensor) -> Tensor:
    pointwise_dtypes("abs_.default", POINTWISE["abs_.default"], (self,))
    self._bump_version()
    return self


@impl(aten.equal.default, Meta)
def equal(self: Tensor, other: Tensor) -> bool:
    raise data_dependent("equal", self)


@impl(aten._local_scalar_dense.default, Meta)
def _local_scalar_dense(self: Tensor) -> Any:
    raise data_dependent("_local_scalar_dense", self)


@impl(aten.allclose.default, Meta)
def allclose(self: Tensor, other: Tensor, *args: Any, **kwargs: Any) -> bool:
    raise data_dependent("allclose", self)


def _isin_rule(self_is_scalar: bool) -> Callable[..., Tensor]:
    def rule(a: Any, b: Any, *, assume_unique: bool = False, invert: bool = False) -> Tensor:
        isin_dtype(a, b)
        shape = () if self_is_scalar else tuple(a.shape)
        return wrap_shape_only(ShapeOnlyArray(shape, np.dtype(np.bool_)))

    return rule


impl(aten.isin.Tensor_Tensor, Meta, _isin_rule(False))
impl(aten.isin.Tensor_Scalar, Meta, _isin_rule(False))
impl(aten.isin.Scalar_Tensor, Meta, _isin_rule(True))


@impl(aten.frexp.Tensor, Meta)
def frexp(self: Tensor) -> Any:
    check_frexp(self.dtype)
    shape = tuple(self.shape)
    return frexp_t(
        (
            wrap_shape_only(ShapeOnlyArray(shape, self._edata.dtype)),
            wrap_shape_only(ShapeOnlyArray(shape, np.dtype(np.int32))),
        )
    )
