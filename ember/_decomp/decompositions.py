"""The registered decompositions (NOTE [decomposition tables] in ``ember/_decomp``): ops
that have kernels, written in simpler ops as PyTorch's core ATen decompositions write them.

>>> from ember._decomp import core_aten_decompositions
>>> core_aten_decompositions()[ember.ops.aten.hardtanh.default](ember.tensor([-3.0, 0.5, 3.0]))
tensor([-1.0000,  0.5000,  1.0000])
"""

from __future__ import annotations

from typing import Any

from ember._decomp import register_decomposition
from ember.ops.registry import ops
from ember.ops.shapes import wrap_dim

aten = ops.aten

__all__: list[str] = []


@register_decomposition(aten.silu.default)
def silu(self: Any) -> Any:
    return aten.mul.Tensor(self, aten.sigmoid.default(self))


@register_decomposition(aten.hardtanh.default)
def hardtanh(self: Any, min_val: Any = -1, max_val: Any = 1) -> Any:
    return aten.clamp.default(self, min_val, max_val)


@register_decomposition(aten.hardsigmoid.default)
def hardsigmoid(self: Any) -> Any:
    return aten.div.Scalar(aten.clamp.default(aten.add.Tensor(self, 3), 0, 6), 6)


@register_decomposition(aten.hardswish.default)
def hardswish(self: Any) -> Any:
    inner = aten.clamp.default(aten.add.Tensor(self, 3), 0, 6)
    return aten.div.Scalar(aten.mul.Tensor(self, inner), 6)


@register_decomposition(aten.leaky_relu.default)
def leaky_relu(self: Any, negative_slope: Any = 0.01) -> Any:
    return aten.where.self(aten.gt.Scalar(self, 0), self, aten.mul.Tensor(self, negative_slope))


@register_decomposition(aten.threshold_backward.default)
def threshold_backward(grad_output: Any, self: Any, threshold: Any) -> Any:
    zero = aten.zeros_like.default(grad_output)
    return aten.where.self(aten.le.Scalar(self, threshold), zero, grad_output)


@register_decomposition(aten.hardtanh_backward.default)
def hardtanh_backward(grad_output: Any, self: Any, min_val: Any, max_val: Any) -> Any:
    outside = aten.logical_or.default(aten.le.Scalar(self, min_val), aten.ge.Scalar(self, max_val))
    return aten.where.self(outside, aten.zeros_like.default(grad_output), grad_output)


@register_decomposition(aten.t.default)
def t(self: Any) -> Any:
    return self if self.dim() < 2 else aten.transpose.int(self, 0, 1)


@register_decomposition(aten.mse_loss.default)
def mse_loss(self: Any, target: Any, reduction: int = 1) -> Any:
    loss = aten.pow.Tensor_Scalar(aten.sub.Tensor(self, target), 2)
    if reduction == 1:
        return aten.mean.default(loss)
    if reduction == 2:
        return aten.sum.default(loss)
    return loss


@register_decomposition(aten.addcmul.default)
def addcmul(self: Any, tensor1: Any, tensor2: Any, *, value: Any = 1) -> Any:
    return aten.add.Tensor(self, aten.mul.Tensor(aten.mul.Tensor(tensor1, tensor2), value))


@register_decomposition(aten.addcdiv.default)
def addcdiv(self: Any, tensor1: Any, tensor2: Any, *, value: Any = 1) -> Any:
    return aten.add.Tensor(self, aten.mul.Tensor(aten.div.Tensor(tensor1, tensor2), value))


@register_decomposition(aten.rsub.Tensor)
def rsub_tensor(self: Any, other: Any, *, alpha: Any = 1) -> Any:
    return aten.sub.Tensor(other, self, alpha=alpha)


@register_decomposition(aten.square.default)
def square(self: Any) -> Any:
    return aten.mul.Tensor(self, self)


@register_decomposition(aten.clamp_min.default)
def clamp_min(self: Any, min: Any) -> Any:
    return aten.clamp.default(self, min)


@register_decomposition(aten.mish.default)
def mish(self: Any) -> Any:
    return aten.mul.Tensor(self, aten.tanh.default(aten.softplus.default(self)))


@register_decomposition(aten.sum.default)
def sum_all(self: Any, *, dtype: Any = None) -> Any:
    if dtype is None:
        return aten.sum.dim_IntList(self, [])
    return aten.sum.dim_IntList(self, [], dtype=dtype)


@register_decomposition(aten.transpose.int)
def transpose(self: Any, dim0: int, dim1: int) -> Any:
    a, b = wrap_dim(dim0, self.dim(), "transpose"), wrap_dim(dim1, self.dim(), "transpose")
    order = list(range(self.dim()))
    if order:
        order[a], order[b] = order[b], order[a]
    return aten.permute.default(self, order)


@register_decomposition(aten.detach.default)
def detach(self: Any) -> Any:
    return aten.alias.default(self)
