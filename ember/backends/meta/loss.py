"""Meta rules of the loss ops: result shapes and dtypes from the checks the CPU kernels run
(``ember/ops/native/loss.py``)."""

from __future__ import annotations

from collections.abc import Sequence

from ember._shape_only import ShapeOnlyArray
from ember._tensor import Tensor, wrap_shape_only
from ember.dispatch.keys import DispatchKey
from ember.dtypes import dtype
from ember.library import impl
from ember.ops.native.loss import (
    check_bce,
    check_huber,
    check_reduction,
    check_smooth_l1,
    ctc_geometry,
    floating_loss_dtype,
)
from ember.ops.native.nn import NONE
from ember.ops.registry import ops
from ember.ops.shapes import broadcast_shapes

aten = ops.aten
Meta = DispatchKey.Meta


def _new(shape: Sequence[int], d: dtype) -> Tensor:
    return wrap_shape_only(ShapeOnlyArray(tuple(shape), d.np))


def _loss(self: Tensor, target: Tensor, reduction: int, d: dtype, op: str) -> Tensor:
    shape = broadcast_shapes(self.shape, target.shape, op=op) if reduction == NONE else ()
    return _new(shape, d)


@impl(aten.binary_cross_entropy.default, Meta)
def binary_cross_entropy(
    self: Tensor, target: Tensor, weight: Tensor | None = None, reduction: int = 1
) -> Tensor:
    check_bce(self, target, weight, reduction)
    return _loss(self, target, reduction, self.dtype, "binary_cross_entropy")


@impl(aten.binary_cross_entropy_backward.default, Meta)
def binary_cross_entropy_backward(
    grad_output: Tensor,
    self: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    reduction: int = 1,
) -> Tensor:
    check_bce(self, target, weight, reduction)
    return _new(self.shape, self.dtype)


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
        return _new(broadcast_shapes(self.shape, target.shape, op=op), self.dtype)

    return rule


impl(aten.smooth_l1_loss_backward.default, Meta,
     _backward("smooth_l1_loss_backward", "smooth_l1_backward_cpu"))  # fmt: skip
impl(aten.huber_loss_backward.default, Meta,
     _backward("huber_loss_backward", "huber_backward_cpu"))  # fmt: skip
impl(aten.soft_margin_loss_backward.default, Meta,
     _backward("soft_margin_loss_backward", "soft_margin_loss_backward"))  # fmt: skip


@impl(aten._ctc_loss.default, Meta)
def _ctc_loss(
    log_probs: Tensor,
    targets: Tensor,
    input_lengths: Sequence[int],
    target_lengths: Sequence[int],
    blank: int = 0,
    zero_infinity: bool = False,
) -> tuple[Tensor, Tensor]:
    t, n, _, s = ctc_geometry(log_probs, targets, input_lengths, target_lengths, blank)
    return _new((n,), log_probs.dtype), _new((n, t, 2 * s + 1), log_probs.dtype)


@impl(aten._ctc_loss_backward.default, Meta)
def _ctc_loss_backward(
    grad: Tensor,
    log_probs: Tensor,
    targets: Tensor,
    input_lengths: Sequence[int],
    target_lengths: Sequence[int],
    neg_log_likelihood: Tensor,
    log_alpha: Tensor,
    blank: int,
    zero_infinity: bool = False,
) -> Tensor:
    ctc_geometry(log_probs, targets, input_lengths, target_lengths, blank)
    return _new(log_probs.shape, log_probs.dtype)
