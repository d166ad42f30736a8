"""Geometry functions of the nn and spatial ops (NOTE [geometry functions] in
``ember/backends/meta/_derive.py``): each takes an op's arguments, by their schema names
(``a.self``, ``a.kernel_size``: the schema is where the op's signature is written, so it is
not written again here), runs the checks its CPU kernel runs and returns each result's
``(shape, dtype)``; the Meta rules are these functions, registered by ``meta_rule``."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from types import SimpleNamespace as Args
from typing import TYPE_CHECKING, Any

from ember.dtypes import dtype, int64
from ember.ops.native.loss import check_bce, ctc_geometry
from ember.ops.native.nn import (
    avg_pool_geometry,
    check_batch_norm,
    check_embedding,
    check_embedding_renorm,
    check_indices,
    check_native_batch_norm,
    check_nll,
    conv_output_shape,
    layer_norm_axes,
    pool_geometry,
)
from ember.ops.native.rnn import check_rnn_layer
from ember.ops.native.spatial import (
    check_floating,
    check_grad_output,
    check_group_norm,
    check_not_bool,
    col2im_shape,
    grid_sampler_check,
    im2col_shape,
)

if TYPE_CHECKING:
    from ember._tensor import Tensor

Spec = tuple[Sequence[int], dtype]
Specs = tuple[Spec | None, ...]


def like(t: Tensor) -> Spec:
    """The ``(shape, dtype)`` of a result shaped and typed as ``t``."""
    return tuple(t.shape), t.dtype


def _masked(mask: Sequence[bool], *specs: Spec | None) -> Specs:
    """``specs`` with those ``output_mask`` leaves out ``None``."""
    return tuple(s if m else None for m, s in zip(mask, specs, strict=True))


def _conv_shape(a: Args, bias: Tensor | None) -> tuple[int, ...]:
    return conv_output_shape(
        a.input,
        a.weight,
        bias,
        a.stride,
        a.padding,
        a.dilation,
        a.transposed,
        a.groups,
        a.output_padding,
    )


def convolution(a: Args) -> Spec:
    return _conv_shape(a, a.bias), a.input.dtype


def check_convolution_grad(grad_output: Tensor, shape: Sequence[int]) -> None:
    """``convolution_backward``'s check: ``grad_output`` has the convolution's output
    ``shape``."""
    if tuple(grad_output.shape) != tuple(shape):
        raise RuntimeError(
            f"convolution_backward: expected grad_output of size {list(shape)} (the output's), "
            f"got {list(grad_output.shape)}"
        )


def convolution_backward(a: Args) -> Specs:
    check_convolution_grad(a.grad_output, _conv_shape(a, None))
    bias = (a.grad_output.shape[1],), a.grad_output.dtype
    return _masked(a.output_mask, like(a.input), like(a.weight), bias)


def _named(name: str, geometry: Callable[[Args], Any]) -> Callable[[Args], Any]:
    geometry.__name__ = geometry.__qualname__ = name
    return geometry


def _max_pool_output(a: Args, op: str, n: int) -> Any:
    """The checked spatial output size of an ``n``-d max pooling of ``a.self`` with ``a``'s
    window options (``pool_geometry``; ``op`` names it in errors)."""
    *_, out = pool_geometry(
        a.self.shape, a.kernel_size, a.stride, a.padding, a.dilation, a.ceil_mode, op, n
    )
    return out


def max_pool_with_indices(n: int) -> Callable[[Args], Specs]:
    """The geometry of ``max_pool{n}d_with_indices``."""

    def geometry(a: Args) -> Specs:
        out = _max_pool_output(a, f"max_pool{n}d", n)
        shape = (*a.self.shape[:-n], *out)
        return (shape, a.self.dtype), (shape, int64)

    return _named(f"max_pool{n}d_with_indices", geometry)


def max_pool_with_indices_backward(n: int) -> Callable[[Args], Spec]:
    """The geometry of ``max_pool{n}d_with_indices_backward``."""

    def geometry(a: Args) -> Spec:
        _max_pool_output(a, f"max_pool{n}d_backward", n)
        return like(a.self)

    return _named(f"max_pool{n}d_with_indices_backward", geometry)


def _avg_pool_out(a: Args, op: str, n: int) -> Sequence[int]:
    *_, out = avg_pool_geometry(
        a.self.shape, a.kernel_size, a.stride, a.padding, a.ceil_mode, a.divisor_override, op, n
    )
    return out


def avg_pool(n: int) -> Callable[[Args], Spec]:
    """The geometry of ``avg_pool{n}d`` (the 3-d op also rejects bool input)."""

    def geometry(a: Args) -> Spec:
        if n == 3:
            check_not_bool(a.self, f"avg_pool{n}d")
        return (*a.self.shape[:-n], *_avg_pool_out(a, f"avg_pool{n}d", n)), a.self.dtype

    return _named(f"avg_pool{n}d", geometry)


def avg_pool_backward(n: int) -> Callable[[Args], Spec]:
    """The geometry of ``avg_pool{n}d_backward``."""

    def geometry(a: Args) -> Spec:
        _avg_pool_out(a, f"avg_pool{n}d_backward", n)
        return like(a.self)

    return _named(f"avg_pool{n}d_backward", geometry)


def native_layer_norm(a: Args) -> Specs:
    x = a.input
    axis = layer_norm_axes(x, a.normalized_shape, a.weight, a.bias)
    stat = ((*x.shape[:axis], *([1] * (x.ndim - axis))), x.dtype)
    return like(x), stat, stat


def native_layer_norm_backward(a: Args) -> Specs:
    layer_norm_axes(a.input, a.normalized_shape, a.weight, a.bias)
    w, b = (None if t is None else like(t) for t in (a.weight, a.bias))
    return _masked(a.output_mask, like(a.input), w, b)


def native_batch_norm_backward(a: Args) -> Specs:
    c = check_batch_norm(a.input, (a.weight, a.running_mean, a.running_var), False)
    stat = (c,), a.input.dtype
    return _masked(a.output_mask, like(a.input), stat, stat)


def nll_loss_backward(a: Args) -> Spec:
    check_nll(a.self, a.target, a.weight, a.reduction)
    return like(a.self)


def native_group_norm(a: Args) -> Specs:
    check_group_norm(a.input, a.weight, a.bias, a.N, a.C, a.HxW, a.group)
    stat = (a.N, a.group), a.input.dtype
    return like(a.input), stat, stat


def native_group_norm_backward(a: Args) -> Specs:
    check_group_norm(a.input, a.weight, None, a.N, a.C, a.HxW, a.group)
    stat = (a.C,), a.input.dtype
    return _masked(a.output_mask, like(a.input), stat, stat)


def native_batch_norm(a: Args) -> Specs:
    c = check_native_batch_norm(
        a.input, a.weight, a.bias, a.running_mean, a.running_var, a.training
    )
    stat = ((c if a.training else 0,), a.input.dtype)
    return like(a.input), stat, stat


def embedding(a: Args) -> Spec:
    check_embedding(a.weight, a.indices)
    return (*a.indices.shape, a.weight.shape[1]), a.weight.dtype


def embedding_renorm(a: Args) -> Spec:
    check_embedding_renorm(a.self, a.indices)
    return like(a.self)


def embedding_dense_backward(a: Args) -> Spec:
    check_indices(a.indices, "embedding_dense_backward")
    return (a.num_weights, a.grad_output.shape[-1]), a.grad_output.dtype


def mkldnn_rnn_layer(a: Args) -> Specs:
    t, b, _, h = check_rnn_layer(
        a.input,
        a.weight0,
        a.weight1,
        a.hx_,
        a.cx_,
        a.batch_sizes,
        a.mode,
        a.hidden_size,
        a.batch_first,
    )
    d = a.input.dtype
    out = (b, t, h) if a.batch_first else (t, b, h)
    return (out, d), ((b, h), d), ((b, h), d), ((5 * t * b * h,), d)


def mkldnn_rnn_layer_backward(a: Args) -> Specs:
    check_rnn_layer(
        a.input,
        a.weight1,
        a.weight2,
        a.hx_,
        a.cx_tmp,
        a.batch_sizes,
        a.mode,
        a.hidden_size,
        a.batch_first,
    )
    ts = (a.input, a.weight1, a.weight2, a.weight3, a.weight4, a.hx_, a.cx_tmp)
    return tuple((tuple(t.shape), a.input.dtype) for t in ts)


def grid_sampler(n: int) -> Callable[[Args], Spec]:
    """The geometry of ``grid_sampler_{n}d``."""

    def geometry(a: Args) -> Spec:
        grid_sampler_check(a.input, a.grid, n, a.interpolation_mode)
        return (*a.input.shape[:2], *a.grid.shape[1:-1]), a.input.dtype

    return _named(f"grid_sampler_{n}d", geometry)


def grid_sampler_backward(n: int) -> Callable[[Args], Specs]:
    """The geometry of ``grid_sampler_{n}d_backward``."""

    def geometry(a: Args) -> Specs:
        grid_sampler_check(a.input, a.grid, n, a.interpolation_mode)
        shape = (*a.input.shape[:2], *a.grid.shape[1:-1])
        check_grad_output(a.grad_output, shape, f"grid_sampler_{n}d_backward")
        return _masked(a.output_mask, like(a.input), like(a.grid))

    return _named(f"grid_sampler_{n}d_backward", geometry)


def im2col(a: Args) -> Spec:
    shape = im2col_shape(a.self.shape, a.kernel_size, a.dilation, a.padding, a.stride)
    check_floating(a.self, "im2col")
    return shape, a.self.dtype


def col2im(a: Args) -> Spec:
    shape = col2im_shape(
        a.self.shape, a.output_size, a.kernel_size, a.dilation, a.padding, a.stride
    )
    check_floating(a.self, "col2im")
    return shape, a.self.dtype


def binary_cross_entropy_backward(a: Args) -> Spec:
    check_bce(a.self, a.target, a.weight, a.reduction)
    return like(a.self)


def _ctc(a: Args) -> tuple[int, int, int, int]:
    return ctc_geometry(a.log_probs, a.targets, a.input_lengths, a.target_lengths, a.blank)


def _ctc_loss(a: Args) -> Specs:
    t, n, _, s = _ctc(a)
    d = a.log_probs.dtype
    return ((n,), d), ((n, t, 2 * s + 1), d)


def _ctc_loss_backward(a: Args) -> Spec:
    _ctc(a)
    return like(a.log_probs)
