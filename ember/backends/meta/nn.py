"""Meta rules of the neural-network ops: result shapes and dtypes from the same checks the CPU
kernels run (``ember/ops/native/nn.py``), so both raise the same errors."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ember import dtypes
from ember._shape_only import ShapeOnlyArray
from ember._tensor import Tensor, wrap_shape_only
from ember.backends.meta._derive import meta_rule
from ember.dispatch.keys import DispatchKey
from ember.dtypes import dtype
from ember.library import impl
from ember.ops.native import nn_geometry
from ember.ops.native.nn import (
    NONE,
    check_dropout,
    check_embedding,
    check_indices,
    check_native_batch_norm,
    check_nll,
    check_same_size,
    loss_dtype,
    pad_shape,
)
from ember.ops.registry import ops
from ember.ops.shapes import broadcast_shapes

aten = ops.aten
Meta = DispatchKey.Meta


def _new(shape: Sequence[int], d: dtype) -> Tensor:
    return wrap_shape_only(ShapeOnlyArray(tuple(shape), d.np))


def _like(t: Tensor) -> Tensor:
    return _new(tuple(t.shape), t.dtype)


g = nn_geometry
meta_rule(aten.convolution.default, g.convolution)
meta_rule(aten.convolution_backward.default, g.convolution_backward)
meta_rule(aten.max_pool2d_with_indices.default, g.max_pool_with_indices(2))
meta_rule(aten.max_pool2d_with_indices_backward.default, g.max_pool_with_indices_backward(2))
meta_rule(aten.avg_pool2d.default, g.avg_pool(2))
meta_rule(aten.avg_pool2d_backward.default, g.avg_pool_backward(2))
meta_rule(aten.native_layer_norm.default, g.native_layer_norm)
meta_rule(aten.native_layer_norm_backward.default, g.native_layer_norm_backward)
meta_rule(aten.native_batch_norm_backward.default, g.native_batch_norm_backward)
meta_rule(aten.nll_loss_backward.default, g.nll_loss_backward)


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
