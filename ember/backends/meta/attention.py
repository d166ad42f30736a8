"""Meta rules of PyTorch's fused CPU attention op and its backward: the CPU kernels' checks
and results' shapes, dtypes and layouts (NOTE [attention on CPU] in
``ember/ops/native/attention.py``)."""

from __future__ import annotations

from types import SimpleNamespace

from ember._memory_format import infer_dense_strides
from ember._shape_only import ShapeOnlyArray
from ember._tensor import Tensor, wrap_shape_only
from ember.dispatch.keys import DispatchKey
from ember.library import impl
from ember.ops.native._define import by_name
from ember.ops.native.attention import check_flash, lse_dtype, transposed_strides
from ember.ops.registry import ops

aten = ops.aten
Meta = DispatchKey.Meta


def _new(shape: tuple[int, ...], strides: tuple[int, ...], np_dtype: object) -> Tensor:
    return wrap_shape_only(ShapeOnlyArray(shape, np_dtype, strides))  # type: ignore[arg-type]


def flash_attention(a: SimpleNamespace) -> tuple[Tensor, Tensor]:
    check_flash(a.query, a.key, a.value, a.dropout_p)
    shape = tuple(a.query.shape)
    out = _new(shape, infer_dense_strides(shape, a.query.stride()), a.query.dtype.np)
    lse = shape[:3]
    return out, _new(lse, transposed_strides(lse), lse_dtype(a.query).np)


def flash_attention_backward(a: SimpleNamespace) -> tuple[Tensor, Tensor, Tensor]:
    check_flash(a.query, a.key, a.value, a.dropout_p)
    grads = [
        _new(tuple(t.shape), transposed_strides(tuple(t.shape)), t.dtype.np)
        for t in (a.query, a.key, a.value)
    ]
    return grads[0], grads[1], grads[2]


# the arguments by name (NOTE [geometry functions]): the signatures stand in the CPU kernels
_FORWARD = aten._scaled_dot_product_flash_attention_for_cpu.default
_BACKWARD = aten._scaled_dot_product_flash_attention_for_cpu_backward.default
impl(_FORWARD, Meta)(by_name(_FORWARD, flash_attention))
impl(_BACKWARD, Meta)(by_name(_BACKWARD, flash_attention_backward))
