"""The derivative table: one line per differentiable op (format: ``function_table.py``).

Formulas are written in ember ops, so they dispatch like any op, run on any backend, and
record a graph of their own under ``create_graph=True`` (higher-order gradients). Inputs'
broadcasting and dtype are undone by the engine, so formulas return the natural gradient.
Ops with a CompositeImplicitAutograd kernel need no line: their parts are differentiated.
"""

from __future__ import annotations

import math
import sys
from typing import Any

import ember
from ember.autograd.function_table import defvjp, nondifferentiable
from ember.ops.registry import ops

aten = ops.aten
E = ember


def _dims(dim: Any, ndim: int) -> list[int]:
    if dim is None or (isinstance(dim, (list, tuple)) and len(dim) == 0):
        return list(range(ndim))
    dims = [dim] if isinstance(dim, int) else list(dim)
    return sorted(d % max(ndim, 1) for d in dims)


def unreduce(g: Any, shape: tuple[int, ...], dim: Any, keepdim: bool) -> Any:
    """Broadcast a reduction's gradient back over the reduced dims."""
    if not keepdim and len(shape):
        for d in _dims(dim, len(shape)):
            g = g.unsqueeze(d)
    return g.expand(shape)


def _count(shape: tuple[int, ...], dim: Any) -> int:
    return math.prod(shape[d] for d in _dims(dim, len(shape))) if shape else 1


def _nz(g: Any) -> Any:
    return E.zeros_like(g)


# ----------------------------------------------------------------------- pointwise
defvjp(aten.add.Tensor, lambda g, self, other, alpha=1: (g, g if alpha == 1 else g * alpha))
defvjp(aten.add.Scalar, lambda g, self, other, alpha=1: (g,))
defvjp(aten.sub.Tensor, lambda g, self, other, alpha=1: (g, -g if alpha == 1 else g * -alpha))
defvjp(aten.sub.Scalar, lambda g, self, other, alpha=1: (g,))
defvjp(aten.rsub.Tensor, lambda g, self, other, alpha=1: (-g if alpha == 1 else g * -alpha, g))
defvjp(aten.rsub.Scalar, lambda g, self, other, alpha=1: (-g if alpha == 1 else g * -alpha,))
defvjp(aten.mul.Tensor, lambda g, self, other: (g * other, g * self))
defvjp(aten.mul.Scalar, lambda g, self, other: (g * other,))
defvjp(aten.div.Tensor, lambda g, self, other: (g / other, -g * self / (other * other)))
defvjp(aten.div.Tensor_mode, lambda g, self, other, *, rounding_mode: (
    g / other if rounding_mode is None else _nz(g),
    -g * self / (other * other) if rounding_mode is None else _nz(g)))  # fmt: skip
defvjp(aten.div.Scalar, lambda g, self, other: (g / other,))
defvjp(aten.neg.default, lambda g, self: (-g,))
defvjp(aten.positive.default, lambda g, self: (g,))
defvjp(aten.exp.default, lambda g, self, *, result: (g * result,))
defvjp(aten.expm1.default, lambda g, self, *, result: (g * (result + 1),))
defvjp(aten.log.default, lambda g, self: (g / self,))
defvjp(aten.log2.default, lambda g, self: (g / (self * math.log(2.0)),))
defvjp(aten.log1p.default, lambda g, self: (g / (self + 1),))
defvjp(aten.sqrt.default, lambda g, self, *, result: (g / (2 * result),))
defvjp(aten.rsqrt.default, lambda g, self, *, result: (g * -0.5 * result * result * result,))
defvjp(aten.sin.default, lambda g, self: (g * self.cos(),))
defvjp(aten.cos.default, lambda g, self: (-g * self.sin(),))
defvjp(aten.tan.default, lambda g, self, *, result: (g * (1 + result * result),))
defvjp(aten.tanh.default, lambda g, self, *, result: (g * (1 - result * result),))
defvjp(aten.sigmoid.default, lambda g, self, *, result: (g * result * (1 - result),))
defvjp(
    aten.relu.default, lambda g, self, *, result: (aten.threshold_backward.default(g, result, 0),)
)
defvjp(aten.threshold_backward.default, lambda g, grad_output, self, threshold: (
    aten.threshold_backward.default(g, self, threshold), _nz(g)))  # fmt: skip
defvjp(aten.erf.default, lambda g, self: (g * (2 / math.sqrt(math.pi)) * (-self * self).exp(),))
defvjp(aten.reciprocal.default, lambda g, self, *, result: (-g * result * result,))
defvjp(aten.square.default, lambda g, self: (2 * g * self,))
defvjp(aten.abs.default, lambda g, self: (g * self.sign(),))
for _op in (aten.floor.default, aten.ceil.default, aten.round.default, aten.trunc.default,
            aten.sign.default, aten.round.decimals):  # fmt: skip
    defvjp(_op, lambda g, self, *a, **k: (_nz(g),))
defvjp(aten.pow.Tensor_Scalar, lambda g, self, exponent: (
    _nz(g) if exponent == 0 else g * exponent * self.pow(exponent - 1),))  # fmt: skip
defvjp(aten.pow.Tensor_Tensor, lambda g, self, exponent, *, result: (
    g * exponent * self.pow(exponent - 1),
    g * E.where(self == 0, 0.0, result * E.where(self == 0, 1.0, self).log())))  # fmt: skip
defvjp(aten.pow.Scalar, lambda g, self, exponent, *, result: (g * result * math.log(self),))
defvjp(aten.maximum.default, lambda g, self, other: (
    E.where(self == other, g / 2, g).masked_fill(self < other, 0),
    E.where(self == other, g / 2, g).masked_fill(self > other, 0)))  # fmt: skip
defvjp(aten.minimum.default, lambda g, self, other: (
    E.where(self == other, g / 2, g).masked_fill(self > other, 0),
    E.where(self == other, g / 2, g).masked_fill(self < other, 0)))  # fmt: skip
defvjp(aten.atan2.default, lambda g, self, other: (
    g * other / (self * self + other * other), -g * self / (self * self + other * other)))  # fmt: skip
defvjp(aten.where.self, lambda g, condition, self, other: (
    None, E.where(condition, g, 0.0), E.where(condition, 0.0, g)))  # fmt: skip
defvjp(aten.clamp.default, lambda g, self, min=None, max=None: (E.where(
    ((self >= min) if min is not None else E.ones_like(self, dtype=E.bool))
    & ((self <= max) if max is not None else E.ones_like(self, dtype=E.bool)), g, 0.0),))  # fmt: skip
defvjp(aten.lerp.Scalar, lambda g, self, end, weight: (g * (1 - weight), g * weight))
defvjp(
    aten.lerp.Tensor, lambda g, self, end, weight: (g * (1 - weight), g * weight, g * (end - self))
)
defvjp(aten.addcmul.default, lambda g, self, tensor1, tensor2, *, value=1: (
    g, g * value * tensor2, g * value * tensor1))  # fmt: skip
defvjp(aten.addcdiv.default, lambda g, self, tensor1, tensor2, *, value=1: (
    g, g * value / tensor2, -g * value * tensor1 / (tensor2 * tensor2)))  # fmt: skip
defvjp(
    aten.remainder.Tensor, lambda g, self, other: (g, -g * self.div(other, rounding_mode="floor"))
)
defvjp(aten.fmod.Tensor, lambda g, self, other: (g, -g * self.div(other, rounding_mode="trunc")))
defvjp(aten.remainder.Scalar, lambda g, self, other: (g,))
defvjp(aten.remainder.Scalar_Tensor, lambda g, self, other: (
    -g * E.full_like(other, self).div(other, rounding_mode="floor"),))  # fmt: skip
defvjp(aten.fmod.Scalar, lambda g, self, other: (g,))
defvjp(aten.div.Scalar_mode, lambda g, self, other, *, rounding_mode: (
    g / other if rounding_mode is None else _nz(g),))  # fmt: skip
defvjp(aten.floor_divide.default, lambda g, self, other: (_nz(g), _nz(g)))
defvjp(aten.floor_divide.Scalar, lambda g, self, other: (_nz(g),))
defvjp(aten.where.ScalarOther, lambda g, condition, self, other: (
    None, E.where(condition, g, 0.0)))  # fmt: skip
defvjp(aten.where.ScalarSelf, lambda g, condition, self, other: (
    None, E.where(condition, 0.0, g)))  # fmt: skip
defvjp(aten.clamp_min.default, lambda g, self, min: (E.where(self >= min, g, 0.0),))
defvjp(aten.clamp_max.default, lambda g, self, max: (E.where(self <= max, g, 0.0),))
defvjp(aten.clamp_min.Tensor, lambda g, self, min: (
    E.where(self >= min, g, 0.0), E.where(self < min, g, 0.0)))  # fmt: skip
defvjp(aten.clamp_max.Tensor, lambda g, self, max: (
    E.where(self <= max, g, 0.0), E.where(self > max, g, 0.0)))  # fmt: skip
defvjp(aten.nan_to_num.default, lambda g, self, nan=None, posinf=None, neginf=None: (
    E.where(self.isfinite(), g, 0.0),))  # fmt: skip


def _gelu(g: Any, self: Any, approximate: str = "none") -> tuple[Any]:
    if approximate == "tanh":
        k = math.sqrt(2 / math.pi)
        inner = k * (self + 0.044715 * self * self * self)
        t = inner.tanh()
        d_inner = k * (1 + 3 * 0.044715 * self * self)
        return (g * (0.5 * (1 + t) + 0.5 * self * (1 - t * t) * d_inner),)
    cdf = 0.5 * (1 + (self / math.sqrt(2)).erf())
    pdf = (-0.5 * self * self).exp() / math.sqrt(2 * math.pi)
    return (g * (cdf + self * pdf),)


defvjp(aten.gelu.default, _gelu)
defvjp(aten.silu.default, lambda g, self: (g * self.sigmoid() * (1 + self * (1 - self.sigmoid())),))

# ----------------------------------------------------------------------- reductions
defvjp(aten.sum.default, lambda g, self, *, dtype=None: (g.expand(self.shape),))
defvjp(aten.sum.dim_IntList, lambda g, self, dim, keepdim=False, *, dtype=None: (
    unreduce(g, self.shape, dim, keepdim),))  # fmt: skip
defvjp(
    aten.mean.default, lambda g, self, *, dtype=None: (g.expand(self.shape) / max(self.numel(), 1),)
)
defvjp(aten.mean.dim, lambda g, self, dim, keepdim=False, *, dtype=None: (
    unreduce(g, self.shape, dim, keepdim) / _count(self.shape, dim),))  # fmt: skip
defvjp(aten.prod.default, lambda g, self, *, dtype=None, result: (g * result / self,))
defvjp(aten.prod.dim_int, lambda g, self, dim, keepdim=False, *, dtype=None, result: (
    unreduce(g, self.shape, dim, keepdim) * unreduce(result, self.shape, dim, keepdim) / self,))  # fmt: skip


def _select_grad(g: Any, self: Any, dim: int, indices: Any, keepdim: bool) -> Any:
    gv = g[0] if isinstance(g, tuple) else g
    if not keepdim and self.ndim:
        gv, indices = gv.unsqueeze(dim), indices.unsqueeze(dim)
    return E.zeros_like(self).scatter(dim, indices, gv) if self.ndim else gv


def _evenly(
    g: Any, self: Any, result: Any, dim: Any = None, keepdim: bool = False, nan: bool = True
) -> tuple[Any]:
    """Share the gradient equally among the elements equal to the result. With ``nan``, a NaN
    result's gradient goes to the NaNs (max/min); amax/amin, as in PyTorch, give NaN."""
    full = unreduce(result, self.shape, dim, keepdim)
    mask = self == full
    if nan:
        mask = mask | (self.isnan() & full.isnan())
    count = mask.sum(_dims(dim, self.ndim), keepdim=True) if self.ndim else mask.sum()
    return (unreduce(g, self.shape, dim, keepdim) * mask / count,)


defvjp(aten.max.dim, lambda g, self, dim, keepdim=False, *, result: (
    _select_grad(g, self, dim, result[1], keepdim),))  # fmt: skip
defvjp(aten.min.dim, lambda g, self, dim, keepdim=False, *, result: (
    _select_grad(g, self, dim, result[1], keepdim),))  # fmt: skip
defvjp(aten.max.default, lambda g, self, *, result: _evenly(g, self, result))
defvjp(aten.min.default, lambda g, self, *, result: _evenly(g, self, result))
defvjp(
    aten.amax.default,
    lambda g, self, dim=(), keepdim=False, *, result: _evenly(g, self, result, dim, keepdim, False),
)
defvjp(
    aten.amin.default,
    lambda g, self, dim=(), keepdim=False, *, result: _evenly(g, self, result, dim, keepdim, False),
)


def _var(
    g: Any, self: Any, dim: Any = None, *, correction: Any = None, keepdim: bool = False
) -> tuple[Any]:
    n = _count(self.shape, dim) - (1 if correction is None else correction)
    mean = self.mean(_dims(dim, self.ndim), keepdim=True)
    if n <= 0:  # no degrees of freedom: PyTorch gives inf, or nan where x equals the mean
        return (unreduce(g, self.shape, dim, keepdim) * (self - mean).abs() * math.inf,)
    return (unreduce(g, self.shape, dim, keepdim) * 2 * (self - mean) / n,)


def _std(
    g: Any,
    self: Any,
    dim: Any = None,
    *,
    correction: Any = None,
    keepdim: bool = False,
    result: Any,
) -> tuple[Any]:
    n = max(0, _count(self.shape, dim) - (1 if correction is None else correction))
    mean = self.mean(_dims(dim, self.ndim), keepdim=True)
    return (unreduce(g / result, self.shape, dim, keepdim) * (self - mean) / n,)


defvjp(aten.var.correction, _var)
defvjp(aten.std.correction, _std)
defvjp(aten.logsumexp.default, lambda g, self, dim, keepdim=False, *, result: (
    unreduce(g, self.shape, dim, keepdim) * (self - unreduce(result, self.shape, dim, keepdim)).exp(),))  # fmt: skip
defvjp(aten._softmax.default, lambda g, self, dim, half_to_float, *, result: (
    result * (g - (g * result).sum(dim, keepdim=True)),))  # fmt: skip
defvjp(aten._log_softmax.default, lambda g, self, dim, half_to_float, *, result: (
    g - result.exp() * g.sum(dim, keepdim=True),))  # fmt: skip
defvjp(
    aten.cumsum.default, lambda g, self, dim, *, dtype=None: (g.flip(dim).cumsum(dim).flip(dim),)
)
defvjp(aten.cumprod.default, lambda g, self, dim, *, dtype=None, result: (
    (g * result).flip(dim).cumsum(dim).flip(dim) / self,))  # fmt: skip
defvjp(aten.sort.default, lambda g, self, dim=-1, descending=False, *, result: (
    E.zeros_like(self).scatter(dim, result[1], g[0]) if self.ndim else g[0],))  # fmt: skip
defvjp(aten.sort.stable, lambda g, self, *, stable, dim=-1, descending=False, result: (
    E.zeros_like(self).scatter(dim, result[1], g[0]) if self.ndim else g[0],))  # fmt: skip
defvjp(aten.topk.default, lambda g, self, k, dim=-1, largest=True, sorted=True, *, result: (
    E.zeros_like(self).scatter(dim, result[1], g[0]) if self.ndim else g[0],))  # fmt: skip

# ----------------------------------------------------------------------- linear algebra
# ``needs`` (one flag per tensor input) skips gradients no input wants, e.g. the data batch's
defvjp(aten.mm.default, lambda g, self, mat2, *, needs: (
    _mm_grad(g, mat2.t(), self) if needs[0] else None,
    _mm_grad(self.t(), g, mat2) if needs[1] else None))  # fmt: skip
defvjp(aten.bmm.default, lambda g, self, mat2, *, needs: (
    g.bmm(mat2.transpose(1, 2)) if needs[0] else None,
    self.transpose(1, 2).bmm(g) if needs[1] else None))  # fmt: skip
defvjp(aten.mv.default, lambda g, self, vec: (g.unsqueeze(1) * vec.unsqueeze(0), self.t().mv(g)))
defvjp(aten.dot.default, lambda g, self, tensor: (g * tensor, g * self))
defvjp(aten.addmm.default, lambda g, self, mat1, mat2, *, beta=1, alpha=1, needs: (
    (g if beta == 1 else g * beta) if needs[0] else None,
    _times(_mm_grad(g, mat2.t(), mat1), alpha) if needs[1] else None,
    _times(_mm_grad(mat1.t(), g, mat2), alpha) if needs[2] else None))  # fmt: skip

# ----------------------------------------------------------------------- shapes and views
defvjp(aten.view.default, lambda g, self, size: (g.reshape(self.shape),))
defvjp(aten._unsafe_view.default, lambda g, self, size: (g.reshape(self.shape),))
defvjp(aten.transpose.int, lambda g, self, dim0, dim1: (g.transpose(dim0, dim1),))
defvjp(aten.t.default, lambda g, self: (g.t(),))
defvjp(aten.permute.default, lambda g, self, dims: (g.permute(_inverse(dims)),))
defvjp(aten.expand.default, lambda g, self, size, *, implicit=False: (g,))  # engine sums to shape
defvjp(aten.unsqueeze.default, lambda g, self, dim: (g.reshape(self.shape),))
defvjp(aten.squeeze.default, lambda g, self: (g.reshape(self.shape),))
defvjp(aten.squeeze.dim, lambda g, self, dim: (g.reshape(self.shape),))
defvjp(aten.squeeze.dims, lambda g, self, dim: (g.reshape(self.shape),))
defvjp(aten.alias.default, lambda g, self: (g,))
defvjp(aten.select.int, lambda g, self, dim, index: (
    E.ops.aten.select_backward(g, self.shape, dim, index),))  # fmt: skip
defvjp(aten.slice.Tensor, lambda g, self, dim=0, start=None, end=None, step=1: (
    E.ops.aten.slice_backward(g, self.shape, dim, 0 if start is None else start,
                              sys.maxsize if end is None else end, step),))  # fmt: skip
defvjp(aten.diagonal.default, lambda g, self, offset=0, dim1=0, dim2=1: (
    E.ops.aten.diagonal_backward(g, self.shape, offset, dim1, dim2),))  # fmt: skip
defvjp(aten.unbind.int, lambda g, self, dim=0: (E.stack(_grad_list(g), dim),))
defvjp(aten.split.Tensor, lambda g, self, split_size, dim=0: (_cat_or_zeros(g, self, dim),))
defvjp(
    aten.split_with_sizes.default,
    lambda g, self, split_sizes, dim=0: (_cat_or_zeros(g, self, dim),),
)
defvjp(aten.cat.default, lambda g, tensors, dim=0: (_cat_grad(g, tensors, dim),))
defvjp(aten.flip.default, lambda g, self, dims: (g.flip(dims),))
defvjp(aten.roll.default, lambda g, self, shifts, dims=(): (
    g.roll([-s for s in (shifts if isinstance(shifts, (list, tuple)) else [shifts])], dims),))  # fmt: skip
defvjp(aten.tril.default, lambda g, self, diagonal=0: (g.tril(diagonal),))
defvjp(aten.triu.default, lambda g, self, diagonal=0: (g.triu(diagonal),))
defvjp(aten.gather.default, lambda g, self, dim, index, *, sparse_grad=False: (
    E.zeros_like(self).scatter_add(dim, index, g), None))  # fmt: skip
defvjp(aten.scatter.src, lambda g, self, dim, index, src: (
    g.scatter(dim, index, 0), None, _pad_to(g.gather(dim, index), src.shape)))  # fmt: skip
defvjp(aten.scatter.value, lambda g, self, dim, index, value: (g.scatter(dim, index, 0), None))
defvjp(
    aten.scatter_add.default,
    lambda g, self, dim, index, src: (g, None, _pad_to(g.gather(dim, index), src.shape)),
)
defvjp(
    aten.index_select.default,
    lambda g, self, dim, index: (_index_select_grad(g, self, dim, index), None),
)
defvjp(aten.masked_fill.Scalar, lambda g, self, mask, value: (g.masked_fill(mask, 0), None))
defvjp(aten.masked_fill.Tensor, lambda g, self, mask, value: (
    g.masked_fill(mask, 0), None, E.where(mask, g, 0.0).sum()))  # fmt: skip
defvjp(aten.index.Tensor, lambda g, self, indices: (
    E.zeros_like(self).index_put(indices, g, True), None))  # fmt: skip
defvjp(aten.index_put.default, lambda g, self, indices, values, accumulate=False: (
    g if accumulate else g.index_put(indices, E.zeros_like(values), False), None,
    E.ops.aten.index.Tensor(g, indices)))  # fmt: skip
defvjp(aten.clone.default, lambda g, self, *, memory_format=None: (g,))
defvjp(aten._to_copy.default, lambda g, self, **kwargs: (g,))  # engine casts to self's dtype
defvjp(aten.copy.default, lambda g, self, src, non_blocking=False: (_nz(g), g))
defvjp(aten.fill.Scalar, lambda g, self, value: (_nz(g),))
defvjp(aten.fill.Tensor, lambda g, self, value: (_nz(g), g.sum()))
defvjp(aten.zero.default, lambda g, self: (_nz(g),))
defvjp(aten.repeat.default, lambda g, self, repeats: (_repeat_grad(g, self, repeats),))


def _times(x: Any, alpha: Any) -> Any:
    return x if alpha == 1 else x * alpha


def _mm_grad(a: Any, b: Any, like: Any) -> Any:
    """``a @ b`` laid out like ``like`` (the input it is the gradient of): for a transposed
    input, such as a Linear weight used as ``W.t()``, compute ``(b.t() @ a.t()).t()`` so the
    gradient that reaches ``W`` is contiguous (and can be kept as ``W.grad`` without a copy)."""
    if like.ndim == 2 and like.stride(0) == 1 and like.stride(1) != 1:
        return b.t().mm(a.t()).t()
    return a.mm(b)


def _cat_grad(g: Any, tensors: Any, dim: int) -> list[Any]:
    """Split cat's gradient back into its inputs (legacy empty 1-D inputs get empty grads)."""
    legacy = [tuple(t.shape) == (0,) for t in tensors]
    if all(legacy):
        return [E.zeros_like(t) for t in tensors]
    sizes = [0 if leg else t.shape[dim] for t, leg in zip(tensors, legacy, strict=True)]
    parts = g.split_with_sizes(sizes, dim)
    return [E.zeros_like(t) if leg else p for t, p, leg in zip(tensors, parts, legacy, strict=True)]


def _grad_list(g: Any) -> list[Any]:
    """The gradients of a ``Tensor[]`` output as a list: the node passes a lone output's
    gradient bare, so ``split`` into one piece must not iterate over that tensor's rows."""
    return [g] if isinstance(g, E.Tensor) else list(g)


def _cat_or_zeros(g: Any, self: Any, dim: int) -> Any:
    gs = _grad_list(g)
    return E.cat(gs, dim) if gs else E.zeros_like(self)


def _pad_to(g: Any, shape: Any) -> Any:
    """``g`` in the leading corner of zeros of ``shape`` (scatter's src may exceed index)."""
    if tuple(g.shape) == tuple(shape):
        return g
    pads: list[int] = []
    for have, want in zip(reversed(g.shape), reversed(shape), strict=True):
        pads += [0, want - have]
    return E.nn.functional.pad(g, pads)


def _inverse(dims: Any) -> list[int]:
    n = len(dims)
    inv = [0] * n
    for i, d in enumerate(dims):
        inv[d % n] = i
    return inv


def _index_select_grad(g: Any, self: Any, dim: int, index: Any) -> Any:
    if not self.ndim:
        return g
    shape = [1] * g.ndim
    shape[dim] = -1
    return E.zeros_like(self).scatter_add(dim, index.reshape(shape).expand(g.shape), g)


def _repeat_grad(g: Any, self: Any, repeats: Any) -> Any:
    lead = len(repeats) - self.ndim
    g = g.sum(list(range(lead))) if lead else g
    shape: list[int] = []
    for r, n in zip(repeats[lead:], self.shape, strict=True):
        shape += [r, n]
    return g.reshape(shape).sum(list(range(0, len(shape), 2)))


# ----------------------------------------------------------------------- the *_backward ops
defvjp(
    aten.select_backward.default,
    lambda g, grad_output, input_sizes, dim, index: (g.select(dim, index),),
)
defvjp(aten.slice_backward.default, lambda g, grad_output, input_sizes, dim, start, end, step: (
    E.ops.aten.slice.Tensor(g, dim, start, end, step),))  # fmt: skip
defvjp(aten.diagonal_backward.default, lambda g, grad_output, input_sizes, offset, dim1, dim2: (
    g.diagonal(offset, dim1, dim2),))  # fmt: skip

# ----------------------------------------------------------------------- no gradient at all
nondifferentiable(
    aten.detach.default,
    *(getattr(getattr(aten, name), o) for name in (
        "zeros_like", "ones_like", "full_like", "empty_like", "rand_like", "randn_like",
        "randint_like", "new_zeros", "new_ones", "new_full", "new_empty")
      for o in getattr(aten, name).overloads() if not getattr(getattr(aten, name), o)._schema.is_out),
)  # fmt: skip

# ----------------------------------------------------------------------- norms, moments


def _vector_norm(
    g: Any,
    self: Any,
    ord: Any = 2,
    dim: Any = None,
    keepdim: bool = False,
    *,
    dtype: Any = None,
    result: Any,
) -> tuple[Any]:  # noqa: A002
    p = float(ord)
    gu = unreduce(g, self.shape, dim, keepdim)
    r = unreduce(result, self.shape, dim, keepdim)
    if p == 0:
        return (E.zeros_like(self),)
    if p == 1:
        return (gu * self.sign(),)
    if math.isinf(p):  # shared equally by the elements whose magnitude is the norm
        mask = self.abs() == r
        count = mask.sum(_dims(dim, self.ndim), keepdim=True) if self.ndim else mask.sum()
        return (gu * self.sign() * mask / count,)
    scale = self / r if p == 2 else self.sign() * (self.abs() / r).pow(p - 1)
    return (E.where(r == 0, 0.0, gu * scale),)


def _var_mean(
    g: Any, self: Any, dim: Any = None, *, correction: Any = None, keepdim: bool = False
) -> tuple[Any]:
    gv, gm = g
    (grad,) = _var(gv, self, dim, correction=correction, keepdim=keepdim)
    return (grad + unreduce(gm, self.shape, dim, keepdim) / _count(self.shape, dim),)


def _std_mean(
    g: Any,
    self: Any,
    dim: Any = None,
    *,
    correction: Any = None,
    keepdim: bool = False,
    result: Any,
) -> tuple[Any]:
    gs, gm = g
    (grad,) = _std(gs, self, dim, correction=correction, keepdim=keepdim, result=result[0])
    return (grad + unreduce(gm, self.shape, dim, keepdim) / _count(self.shape, dim),)


def _clamp_tensor(g: Any, self: Any, min: Any = None, max: Any = None) -> tuple[Any, Any, Any]:  # noqa: A002
    inside = E.ones_like(self, dtype=E.bool)
    if min is not None:
        inside = inside & (self >= min)
    if max is not None:
        inside = inside & (self <= max)
    # as PyTorch: with min > max the result is max, so max takes the gradient
    both = min is not None and max is not None
    grad_min = (
        None if min is None else E.where((self < min) & ((min < max) if both else True), g, 0.0)
    )
    grad_max = (
        None if max is None else E.where((self > max) | ((max < min) if both else False), g, 0.0)
    )
    return (E.where(inside, g, 0.0), grad_min, grad_max)


defvjp(aten.linalg_vector_norm.default, _vector_norm)
defvjp(aten.var_mean.correction, _var_mean)
defvjp(aten.std_mean.correction, _std_mean)
defvjp(aten.clamp.Tensor, _clamp_tensor)
defvjp(aten.lift_fresh.default, lambda g, self: (g,))
defvjp(aten.lift_fresh_copy.default, lambda g, self: (g,))
