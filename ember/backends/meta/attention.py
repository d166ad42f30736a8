"""Meta rules of PyTorch's fused CPU attention op and its backward: the CPU kernels' checks
and results' shapes, dtypes and layouts (NOTE [attention on CPU] in
``ember/ops/native/attention.py``)."""

from __future__ import annotations

from ember._memory_format import infer_dense_strides
from ember._shape_only import ShapeOnlyArray
from ember._tensor import Tensor, wrap_shape_only
from ember.dispatch.keys import DispatchKey
from ember.library import impl
from ember.ops.native.attention import check_flash, lse_dtype, transposed_strides
from ember.ops.registry import ops

aten = ops.aten
Meta = DispatchKey.Meta


def _new(shape: tuple[int, ...], strides: tuple[int, ...], np_dtype: object) -> Tensor:
    return wrap_shape_only(ShapeOnlyArray(shape, np_dtype, strides))  # type: ignore[arg-type]


@impl(aten._scaled_dot_product_flash_attention_for_cpu.default, Meta)
def flash_attention(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    dropout_p: float = 0.0,
    is_causal: bool = False,
    *,
    attn_mask: Tensor | None = None,
    scale: float | None = None,
) -> tuple[Tensor, Tensor]:
    check_flash(query, key, value, dropout_p)
    shape = tuple(query.shape)
    out = _new(shape, infer_dense_strides(shape, query.stride()), query.dtype.np)
    lse = shape[:3]
    return out, _new(lse, transposed_strides(lse), lse_dtype(query).np)


@impl(aten._scaled_dot_product_flash_attention_for_cpu_backward.default, Meta)
def flash_attention_backward(
    grad_out: Tensor,
    query: Tensor,
    key: Tensor,
    value: Tensor,
    out: Tensor,
    logsumexp: Tensor,
    dropout_p: float,
    is_causal: bool,
    *,
    attn_mask: Tensor | None = None,
    scale: float | None = None,
) -> tuple[Tensor, Tensor, Tensor]:
    check_flash(query, key, value, dropout_p)
    grads = [
        _new(tuple(t.shape), transposed_strides(tuple(t.shape)), t.dtype.np)
        for t in (query, key, value)
    ]
    return grads[0], grads[1], grads[2]
