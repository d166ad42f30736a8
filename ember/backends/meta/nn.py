"""Meta rules of the neural-network ops: result shapes and dtypes from the same checks the CPU
kernels run (``ember/ops/native/nn.py``), so both raise the same errors."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ember import dtypes
from ember._tensor import Tensor
from ember.backends.meta._derive import like, meta_rule, new, results
from ember.dispatch.keys import DispatchKey
from ember.library import impl
from ember.ops.native import nn_geometry
from ember.ops.native.nn import (
    NONE,
    check_dropout,
    check_nll,
    check_same_size,
    loss_dtype,
    pad_shape,
)
from ember.ops.registry import ops
from ember.ops.shapes import broadcast_shapes

aten = ops.aten
Meta = DispatchKey.Meta


g = nn_geometry


def register_pooling_rules(n: int) -> None:
    """The Meta rules of ``max_pool{n}d_with_indices``, ``avg_pool{n}d`` and their backwards,
    from the geometry the CPU kernels of ``register_pooling`` check with."""
    mx, avg = getattr(aten, f"max_pool{n}d_with_indices"), getattr(aten, f"avg_pool{n}d")
    meta_rule(mx.default, g.max_pool_with_indices(n))
    meta_rule(getattr(aten, f"max_pool{n}d_with_indices_backward").default,
              g.max_pool_with_indices_backward(n))  # fmt: skip
    meta_rule(avg.default, g.avg_pool(n))
    meta_rule(getattr(aten, f"avg_pool{n}d_backward").default, g.avg_pool_backward(n))


meta_rule(aten.convolution.default, g.convolution)
meta_rule(aten.convolution_backward.default, g.convolution_backward)
register_pooling_rules(2)
meta_rule(aten.native_layer_norm.default, g.native_layer_norm)
meta_rule(aten.native_layer_norm_backward.default, g.native_layer_norm_backward)
meta_rule(aten.native_batch_norm_backward.default, g.native_batch_norm_backward)
meta_rule(aten.nll_loss_backward.default, g.nll_loss_backward)
meta_rule(aten.embedding.default, g.embedding)
meta_rule(aten.embedding_dense_backward.default, g.embedding_dense_backward)
meta_rule(aten.embedding_renorm.default, g.embedding_renorm)
_BATCH_NORM = aten.native_batch_norm.default._schema.named


@impl(aten.native_batch_norm.default, Meta)
def native_batch_norm(*args: Any, **kwargs: Any) -> tuple[Tensor, Tensor, Tensor]:
    a = _BATCH_NORM(args, kwargs)
    out = results(g.native_batch_norm(a))
    if a.training:  # the cpu kernel updates them in place (NOTE [undeclared writes])
        for stat in (a.running_mean, a.running_var):
            if stat is not None:
                stat._bump_version()
    return out


@impl(aten.nll_loss_forward.default, Meta)
def nll_loss_forward(
    self: Tensor, target: Tensor, weight: Tensor | None, reduction: int, ignore_index: int
) -> tuple[Tensor, Tensor]:
    check_nll(self, target, weight, reduction)
    shape = tuple(target.shape) if reduction == NONE and self.ndim == 2 else ()
    return new(shape, self.dtype), new((), self.dtype)


def _broadcast(*shapes: Sequence[int]) -> tuple[int, ...]:
    return tuple(broadcast_shapes(*shapes))


@impl(aten.mse_loss.default, Meta)
def mse_loss(self: Tensor, target: Tensor, reduction: int = 1) -> Tensor:
    d = loss_dtype(self, target, "mse")
    shape = _broadcast(self.shape, target.shape) if reduction == NONE else ()
    return new(shape, d)


@impl(aten.binary_cross_entropy_with_logits.default, Meta)
def binary_cross_entropy_with_logits(
    self: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    pos_weight: Tensor | None = None,
    reduction: int = 1,
) -> Tensor:
    check_same_size(self, target, "binary_cross_entropy_with_logits")
    return new(tuple(self.shape) if reduction == NONE else (), self.dtype)


@impl(aten.constant_pad_nd.default, Meta)
def constant_pad_nd(self: Tensor, pad: Sequence[int], value: Any = 0) -> Tensor:
    return new(pad_shape(self.shape, pad), self.dtype)


@impl(aten.native_dropout.default, Meta)
def native_dropout(input: Tensor, p: float, train: bool | None) -> tuple[Tensor, Tensor]:
    check_dropout(p, train)
    return like(input), new(tuple(input.shape), dtypes.bool_)


@impl(aten.native_dropout_backward.default, Meta)
def native_dropout_backward(grad_output: Tensor, mask: Tensor, scale: float) -> Tensor:
    return like(grad_output)
