"""Meta rules of the neural-network ops: result shapes and dtypes from the same checks the CPU
kernels run (``ember/ops/native/nn.py``), so both raise the same errors."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ember import dtypes
from ember._shape_only import ShapeOnlyArray
from ember._tensor import Tensor, wrap_shape_only
from ember.dispatch.keys import DispatchKey
from ember.dtypes import dtype
from ember.library import impl
from ember.ops.native.nn import (
    NONE,
    avg_pool_geometry,
    check_batch_norm,
    check_dropout,
    check_embedding,
    check_indices,
    check_native_batch_norm,
    check_nll,
    check_same_size,
    conv_output_shape,
    layer_norm_axes,
    loss_dtype,
    pad_shape,
    pool_geometry,
)
from ember.ops.registry import ops
from ember.ops.shapes import broadcast_shapes

aten = ops.aten
Meta = DispatchKey.Meta


def _new(shape: Sequence[int], d: dtype) -> Tensor:
    return wrap_shape_only(ShapeOnlyArray(tuple(shape), d.np))


def _like(t: Tensor) -> Tensor:
    return _new(tuple(t.shape), t.dtype)


@impl(aten.convolution.default, Meta)
def convolution(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None,
    stride: Sequence[int],
    padding: Sequence[int],
    dilation: Sequence[int],
    transposed: bool,
    output_padding: Sequence[int],
    groups: int,
) -> Tensor:
    shape = conv_output_shape(
        input, weight, bias, stride, padding, dilation, transposed, groups, output_padding
    )
    return _new(shape, input.dtype)


@impl(aten.convolution_backward.default, Meta)
def convolution_backward(
    grad_output: Tensor,
    input: Tensor,
    weight: Tensor,
    bias_sizes: Sequence[int] | None,
    stride: Sequence[int],
    padding: Sequence[int],
    dilation: Sequence[int],
    transposed: bool,
    output_padding: Sequence[int],
    groups: int,
    output_mask: Sequence[bool],
) -> tuple[Any, Any, Any]:
    shape = conv_output_shape(
        input, weight, None, stride, padding, dilation, transposed, groups, output_padding
    )
    if tuple(grad_output.shape) != shape:
        raise RuntimeError(
            f"convolution_backward: expected grad_output of size {list(shape)} (the output's), "
            f"got {list(grad_output.shape)}"
        )
    return (
        _like(input) if output_mask[0] else None,
        _like(weight) if output_mask[1] else None,
        _new((grad_output.shape[1],), grad_output.dtype) if output_mask[2] else None,
    )


def _pool_shape(self: Tensor, out: tuple[int, ...]) -> tuple[int, ...]:
    return (*self.shape[: -len(out)], *out)


@impl(aten.max_pool2d_with_indices.default, Meta)
def max_pool2d_with_indices(
    self: Tensor,
    kernel_size: Sequence[int],
    stride: Sequence[int] = (),
    padding: Sequence[int] = 0,
    dilation: Sequence[int] = 1,  # type: ignore[assignment]
    ceil_mode: bool = False,
) -> tuple[Tensor, Tensor]:
    *_, out = pool_geometry(
        self.shape, kernel_size, stride, padding, dilation, ceil_mode, "max_pool2d"
    )
    shape = _pool_shape(self, out)
    return _new(shape, self.dtype), _new(shape, dtypes.int64)


@impl(aten.max_pool2d_with_indices_backward.default, Meta)
def max_pool2d_with_indices_backward(
    grad_output: Tensor,
    self: Tensor,
    kernel_size: Sequence[int],
    stride: Sequence[int],
    padding: Sequence[int],
    dilation: Sequence[int],
    ceil_mode: bool,
    indices: Tensor,
) -> Tensor:
    pool_geometry(
        self.shape, kernel_size, stride, padding, dilation, ceil_mode, "max_pool2d_backward"
    )
    return _like(self)


@impl(aten.avg_pool2d.default, Meta)
def avg_pool2d(
    self: Tensor,
    kernel_size: Sequence[int],
    stride: Sequence[int] = (),
    padding: Sequence[int] = 0,
    ceil_mode: bool = False,  # type: ignore[assignment]
    count_include_pad: bool = True,
    divisor_override: int | None = None,
) -> Tensor:
    *_, out = avg_pool_geometry(
        self.shape, kernel_size, stride, padding, ceil_mode, divisor_override, "avg_pool2d"
    )
    return _new(_pool_shape(self, out), self.dtype)


@impl(aten.avg_pool2d_backward.default, Meta)
def avg_pool2d_backward(
    grad_output: Tensor,
    self: Tensor,
    kernel_size: Sequence[int],
    stride: Sequence[int],
    padding: Sequence[int],
    ceil_mode: bool,
    count_include_pad: bool,
    divisor_override: int | None,
) -> Tensor:
    avg_pool_geometry(
        self.shape, kernel_size, stride, padding, ceil_mode, divisor_override, "avg_pool2d_backward"
    )
    return _like(self)


@impl(aten.native_layer_norm.default, Meta)
def native_layer_norm(
    input: Tensor,
    normalized_shape: Sequence[int],
    weight: Tensor | None,
    bias: Tensor | None,
    eps: float,
) -> tuple[Tensor, Tensor, Tensor]:
    axis = layer_norm_axes(input, normalized_shape, weight, bias)
    stat = (*input.shape[:axis], *([1] * (input.ndim - axis)))
    return _like(input), _new(stat, input.dtype), _new(stat, input.dtype)


@impl(aten.native_layer_norm_backward.default, Meta)
def native_layer_norm_backward(
    grad_out: Tensor,
    input: Tensor,
    normalized_shape: Sequence[int],
    mean: Tensor,
    rstd: Tensor,
    weight: Tensor | None,
    bias: Tensor | None,
    output_mask: Sequence[bool],
) -> tuple[Any, Any, Any]:
    layer_norm_axes(input, normalized_shape, weight, bias)
    return (
        _like(input) if output_mask[0] else None,
        _like(weight) if output_mask[1] and weight is not None else None,
        _like(bias) if output_mask[2] and bias is not None else None,
    )


@impl(aten.native_batch_norm.default, Meta)
def native_batch_norm(
    input: Tensor,
    weight: Tensor | None,
    bias: Tensor | None,
    running_mean: Tensor | None,
    running_var: Tensor | None,
    training: bool,
    momentum: float,
    eps: float,
) -> tuple[Tensor, Tensor, Tensor]:
    c = check_native_batch_norm(input, weight, bias, running_mean, running_var, training)
    n = c if training else 0
    if training:  # the cpu kernel updates them in place (NOTE [undeclared writes])
        for stat in (running_mean, running_var):
            if stat is not None:
                stat._bump_version()
    return _like(input), _new((n,), input.dtype), _new((n,), input.dtype)


@impl(aten.native_batch_norm_backward.default, Meta)
def native_batch_norm_backward(
    grad_out: Tensor,
    input: Tensor,
    weight: Tensor | None,
    running_mean: Tensor | None,
    running_var: Tensor | None,
    save_mean: Tensor | None,
    save_invstd: Tensor | None,
    train: bool,
    eps: float,
    output_mask: Sequence[bool],
) -> tuple[Any, Any, Any]:
    c = check_batch_norm(input, (weight, running_mean, running_var), False)
    return (
        _like(input) if output_mask[0] else None,
        _new((c,), input.dtype) if output_mask[1] else None,
        _new((c,), input.dtype) if output_mask[2] else None,
    )


@impl(aten.embedding.default, Meta)
def embedding(
    weight: Tensor,
    indices: Tensor,
    padding_idx: int = -1,
    scale_grad_by_freq: bool = False,
    sparse: bool = False,
) -> Tensor:
    check_embedding(weight, indices)
    return _new((*indices.shape, weight.shape[1]), weight.dtype)


@impl(aten.embedding_dense_backward.default, Meta)
def embedding_dense_backward(
    grad_output: Tensor,
    indices: Tensor,
    num_weights: int,
    padding_idx: int,
    scale_grad_by_freq: bool,
) -> Tensor:
    check_indices(indices, "embedding_dense_backward")
    return _new((num_weights, grad_output.shape[-1]), grad_output.dtype)


@impl(aten.nll_loss_forward.default, Meta)
def nll_loss_forward(
    self: Tensor, target: Tensor, weight: Tensor | None, reduction: int, ignore_index: int
) -> tuple[Tensor, Tensor]:
    check_nll(self, target, weight, reduction)
    shape = tuple(target.shape) if reduction == NONE and self.ndim == 2 else ()
    return _new(shape, self.dtype), _new((), self.dtype)


@impl(aten.nll_loss_backward.default, Meta)
def nll_loss_backward(
    grad_output: Tensor,
    self: Tensor,
    target: Tensor,
    weight: Tensor | None,
    reduction: int,
    ignore_index: int,
    total_weight: Tensor,
) -> Tensor:
    check_nll(self, target, weight, reduction)
    return _like(self)


def _broadcast(*shapes: Sequence[int]) -> tuple[int, ...]:
    return tuple(broadcast_shapes(*shapes))


@impl(aten.mse_loss.default, Meta)
def mse_loss(self: Tensor, target: Tensor, reduction: int = 1) -> Tensor:
    d = loss_dtype(self, target, "mse")
    shape = _broadcast(self.shape, target.shape) if reduction == NONE else ()
    return _new(shape, d)


@impl(aten.binary_cross_entropy_with_logits.default, Meta)
def binary_cross_entropy_with_logits(
    self: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    pos_weight: Tensor | None = None,
    reduction: int = 1,
) -> Tensor:
    check_same_size(self, target, "binary_cross_entropy_with_logits")
    return _new(tuple(self.shape) if reduction == NONE else (), self.dtype)


@impl(aten.constant_pad_nd.default, Meta)
def constant_pad_nd(self: Tensor, pad: Sequence[int], value: Any = 0) -> Tensor:
    return _new(pad_shape(self.shape, pad), self.dtype)


@impl(aten.native_dropout.default, Meta)
def native_dropout(input: Tensor, p: float, train: bool | None) -> tuple[Tensor, Tensor]:
    check_dropout(p, train)
    return _like(input), _new(tuple(input.shape), dtypes.bool_)


@impl(aten.native_dropout_backward.default, Meta)
def native_dropout_backward(grad_output: Tensor, mask: Tensor, scale: float) -> Tensor:
    return _like(grad_output)
