"""Meta rules of the loss ops: result shapes and dtypes from the checks the CPU kernels run
(``ember/ops/native/loss.py``)."""

from __future__ import annotations

from ember._tensor import Tensor
from ember.backends.meta._derive import meta_rule, new
from ember.dispatch.keys import DispatchKey
from ember.dtypes import dtype
from ember.library import impl
from ember.ops.native import nn_geometry
from ember.ops.native.loss import (
    check_bce,
    check_huber,
    check_reduction,
    check_smooth_l1,
    floating_loss_dtype,
)
from ember.ops.native.nn import NONE
from ember.ops.registry import ops
from ember.ops.shapes import broadcast_shapes

aten = ops.aten
Meta = DispatchKey.Meta


def _loss(self: Tensor, target: Tensor, reduction: int, d: dtype, op: str) -> Tensor:
    shape = broadcast_shapes(self.shape, target.shape, op=op) if reduction == NONE else ()
    return new(shape, d)


@impl(aten.binary_cross_entropy.default, Meta)
def binary_cross_entropy(
    self: Tensor, target: Tensor, weight: Tensor | None = None, reduction: int = 1
) -> Tensor:
    check_bce(self, target, weight, reduction)
    return _loss(self, target, reduction, self.dtype, "binary_cross_entropy")


@impl(aten.smooth_l1_loss.default, Meta)
def smooth_l1_loss(self: Tensor, target: Tensor, reduction: int = 1, beta: float = 1.0) -> Tensor:
    check_reduction(reduction, "smooth_l1_loss")
    check_smooth_l1(beta)
    d = floating_loss_dtype(self, target, "smooth_l1_loss", "smooth_l1_cpu")
    return _loss(self, target, reduction, d, "smooth_l1_loss")


@impl(aten.huber_loss.default, Meta)
def huber_loss(self: Tensor, target: Tensor, reduction: int = 1, delta: float = 1.0) -> Tensor:
    check_reduction(reduction, "huber_loss")
    check_huber(delta)
    floating_loss_dtype(self, target, "huber_loss", "huber_cpu")
    return _loss(self, target, reduction, self.dtype, "huber_loss")


@impl(aten.soft_margin_loss.default, Meta)
def soft_margin_loss(self: Tensor, target: Tensor, reduction: int = 1) -> Tensor:
    check_reduction(reduction, "soft_margin_loss")
    d = floating_loss_dtype(self, target, "soft_margin_loss", "soft_margin_loss")
    return _loss(self, target, reduction, d, "soft_margin_loss")


def _backward(op: str, kernel: str):  # type: ignore[no-untyped-def]
    def rule(grad_output: Tensor, self: Tensor, target: Tensor, reduction: int, *rest: float):  # type: ignore[no-untyped-def]
        check_reduction(reduction, op)
        floating_loss_dtype(self, target, op, kernel)
        return new(broadcast_shapes(self.shape, target.shape, op=op), self.dtype)

    return rule


impl(aten.smooth_l1_loss_backward.default, Meta,
     _backward("smooth_l1_loss_backward", "smooth_l1_backward_cpu"))  # fmt: skip
impl(aten.huber_loss_backward.default, Meta,
     _backward("huber_loss_backward", "huber_backward_cpu"))  # fmt: skip
impl(aten.soft_margin_loss_backward.default, Meta,
     _backward("soft_margin_loss_backward", "soft_margin_loss_backward"))  # fmt: skip


meta_rule(aten.binary_cross_entropy_backward.default, nn_geometry.binary_cross_entropy_backward)
meta_rule(aten._ctc_loss.default, nn_geometry._ctc_loss)
meta_rule(aten._ctc_loss_backward.default, nn_geometry._ctc_loss_backward)
