"""Geometry functions of the nn and spatial ops (NOTE [geometry functions] in
``ember/backends/meta/_derive.py``): each takes an op's arguments, runs the checks its CPU
kernel runs and returns each result's ``(shape, dtype)``; the Meta rules are these functions,
registered by ``meta_rule``."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from ember.dtypes import dtype, int64
from ember.ops.native.loss import check_bce, ctc_geometry
from ember.ops.native.nn import (
    avg_pool_geometry,
    check_batch_norm,
    check_embedding,
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
) -> Spec:
    shape = conv_output_shape(
        input, weight, bias, stride, padding, dilation, transposed, groups, output_padding
    )
    return shape, input.dtype


def check_convolution_grad(
    grad_output: Tensor,
    input: Tensor,
    weight: Tensor,
    stride: Sequence[int],
    padding: Sequence[int],
    dilation: Sequence[int],
    transposed: bool,
    output_padding: Sequence[int],
    groups: int,
) -> tuple[int, ...]:
    """The output shape of the convolution ``convolution_backward`` differentiates, checked
    against ``grad_output``'s."""
    shape = conv_output_shape(
        input, weight, None, stride, padding, dilation, transposed, groups, output_padding
    )
    if tuple(grad_output.shape) != shape:
        raise RuntimeError(
            f"convolution_backward: expected grad_output of size {list(shape)} (the output's), "
            f"got {list(grad_output.shape)}"
        )
    return shape


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
) -> Specs:
    check_convolution_grad(
        grad_output, input, weight, stride, padding, dilation, transposed, output_padding, groups
    )
    return (
        like(input) if output_mask[0] else None,
        like(weight) if output_mask[1] else None,
        ((grad_output.shape[1],), grad_output.dtype) if output_mask[2] else None,
    )


def max_pool_with_indices(n: int) -> Callable[..., Specs]:
    """The geometry of ``max_pool{n}d_with_indices``."""

    def geometry(
        self: Tensor,
        kernel_size: Sequence[int],
        stride: Sequence[int] = (),
        padding: Sequence[int] = 0,  # type: ignore[assignment]
        dilation: Sequence[int] = 1,  # type: ignore[assignment]
        ceil_mode: bool = False,
    ) -> Specs:
        op = f"max_pool{n}d"
        *_, out = pool_geometry(
            self.shape, kernel_size, stride, padding, dilation, ceil_mode, op, n
        )
        shape = (*self.shape[:-n], *out)
        return (shape, self.dtype), (shape, int64)

    geometry.__name__ = f"max_pool{n}d_with_indices"
    return geometry


def max_pool_with_indices_backward(n: int) -> Callable[..., Spec]:
    """The geometry of ``max_pool{n}d_with_indices_backward``."""

    def geometry(
        grad_output: Tensor,
        self: Tensor,
        kernel_size: Sequence[int],
        stride: Sequence[int],
        padding: Sequence[int],
        dilation: Sequence[int],
        ceil_mode: bool,
        indices: Tensor,
    ) -> Spec:
        op = f"max_pool{n}d_backward"
        pool_geometry(self.shape, kernel_size, stride, padding, dilation, ceil_mode, op, n)
        return like(self)

    geometry.__name__ = f"max_pool{n}d_with_indices_backward"
    return geometry


def avg_pool(n: int) -> Callable[..., Spec]:
    """The geometry of ``avg_pool{n}d`` (the 3-d op also rejects bool input)."""

    def geometry(
        self: Tensor,
        kernel_size: Sequence[int],
        stride: Sequence[int] = (),
        padding: Sequence[int] = 0,  # type: ignore[assignment]
        ceil_mode: bool = False,
        count_include_pad: bool = True,
        divisor_override: int | None = None,
    ) -> Spec:
        op = f"avg_pool{n}d"
        if n == 3:
            check_not_bool(self, op)
        *_, out = avg_pool_geometry(
            self.shape, kernel_size, stride, padding, ceil_mode, divisor_override, op, n
        )
        return (*self.shape[:-n], *out), self.dtype

    geometry.__name__ = f"avg_pool{n}d"
    return geometry


def avg_pool_backward(n: int) -> Callable[..., Spec]:
    """The geometry of ``avg_pool{n}d_backward``."""

    def geometry(
        grad_output: Tensor,
        self: Tensor,
        kernel_size: Sequence[int],
        stride: Sequence[int],
        padding: Sequence[int],
        ceil_mode: bool,
        count_include_pad: bool,
        divisor_override: int | None,
    ) -> Spec:
        op = f"avg_pool{n}d_backward"
        avg_pool_geometry(
            self.shape, kernel_size, stride, padding, ceil_mode, divisor_override, op, n
        )
        return like(self)

    geometry.__name__ = f"avg_pool{n}d_backward"
    return geometry


def native_layer_norm(
    input: Tensor, normalized_shape: Sequence[int], weight: Any, bias: Any, eps: float
) -> Specs:
    axis = layer_norm_axes(input, normalized_shape, weight, bias)
    stat = ((*input.shape[:axis], *([1] * (input.ndim - axis))), input.dtype)
    return like(input), stat, stat


def native_layer_norm_backward(
    grad_out: Tensor,
    input: Tensor,
    normalized_shape: Sequence[int],
    mean: Tensor,
    rstd: Tensor,
    weight: Tensor | None,
    bias: Tensor | None,
    output_mask: Sequence[bool],
) -> Specs:
    layer_norm_axes(input, normalized_shape, weight, bias)
    return (
        like(input) if output_mask[0] else None,
        like(weight) if output_mask[1] and weight is not None else None,
        like(bias) if output_mask[2] and bias is not None else None,
    )


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
) -> Specs:
    c = check_batch_norm(input, (weight, running_mean, running_var), False)
    return (
        like(input) if output_mask[0] else None,
        ((c,), input.dtype) if output_mask[1] else None,
        ((c,), input.dtype) if output_mask[2] else None,
    )


def nll_loss_backward(
    grad_output: Tensor,
    self: Tensor,
    target: Tensor,
    weight: Tensor | None,
    reduction: int,
    ignore_index: int,
    total_weight: Tensor,
) -> Spec:
    check_nll(self, target, weight, reduction)
    return like(self)


def native_group_norm(
    input: Tensor,
    weight: Tensor | None,
    bias: Tensor | None,
    N: int,
    C: int,
    HxW: int,
    group: int,
    eps: float,
) -> Specs:
    check_group_norm(input, weight, bias, N, C, HxW, group)
    return like(input), ((N, group), input.dtype), ((N, group), input.dtype)


def native_group_norm_backward(
    grad_out: Tensor,
    input: Tensor,
    mean: Tensor,
    rstd: Tensor,
    weight: Tensor | None,
    N: int,
    C: int,
    HxW: int,
    group: int,
    output_mask: Sequence[bool],
) -> Specs:
    check_group_norm(input, weight, None, N, C, HxW, group)
    return (
        like(input) if output_mask[0] else None,
        ((C,), input.dtype) if output_mask[1] else None,
        ((C,), input.dtype) if output_mask[2] else None,
    )


def native_batch_norm(
    input: Tensor,
    weight: Tensor | None,
    bias: Tensor | None,
    running_mean: Tensor | None,
    running_var: Tensor | None,
    training: bool,
    momentum: float,
    eps: float,
) -> Specs:
    c = check_native_batch_norm(input, weight, bias, running_mean, running_var, training)
    stat = ((c if training else 0,), input.dtype)
    return like(input), stat, stat


def embedding(
    weight: Tensor,
    indices: Tensor,
    padding_idx: int = -1,
    scale_grad_by_freq: bool = False,
    sparse: bool = False,
) -> Spec:
    check_embedding(weight, indices)
    return (*indices.shape, weight.shape[1]), weight.dtype


def embedding_dense_backward(
    grad_output: Tensor,
    indices: Tensor,
    num_weights: int,
    padding_idx: int,
    scale_grad_by_freq: bool,
) -> Spec:
    check_indices(indices, "embedding_dense_backward")
    return (num_weights, grad_output.shape[-1]), grad_output.dtype


def mkldnn_rnn_layer(
    input: Tensor,
    weight0: Tensor,
    weight1: Tensor,
    weight2: Tensor,
    weight3: Tensor,
    hx_: Tensor,
    cx_: Tensor,
    reverse: bool,
    batch_sizes: Sequence[int],
    mode: int,
    hidden_size: int,
    num_layers: int,
    has_biases: bool,
    bidirectional: bool,
    batch_first: bool,
    train: bool,
) -> Specs:
    t, b, _, h = check_rnn_layer(
        input, weight0, weight1, hx_, cx_, batch_sizes, mode, hidden_size, batch_first
    )
    d = input.dtype
    out = (b, t, h) if batch_first else (t, b, h)
    return (out, d), ((b, h), d), ((b, h), d), ((5 * t * b * h,), d)


def mkldnn_rnn_layer_backward(
    input: Tensor,
    weight1: Tensor,
    weight2: Tensor,
    weight3: Tensor,
    weight4: Tensor,
    hx_: Tensor,
    cx_tmp: Tensor,
    output: Tensor,
    hy_: Tensor,
    cy_: Tensor,
    grad_output: Tensor | None,
    grad_hy: Tensor | None,
    grad_cy: Tensor | None,
    reverse: bool,
    mode: int,
    hidden_size: int,
    num_layers: int,
    has_biases: bool,
    train: bool,
    bidirectional: bool,
    batch_sizes: Sequence[int],
    batch_first: bool,
    workspace: Tensor,
) -> Specs:
    check_rnn_layer(
        input, weight1, weight2, hx_, cx_tmp, batch_sizes, mode, hidden_size, batch_first
    )
    ts = (input, weight1, weight2, weight3, weight4, hx_, cx_tmp)
    return tuple((tuple(t.shape), input.dtype) for t in ts)


def grid_sampler(n: int) -> Callable[..., Spec]:
    """The geometry of ``grid_sampler_{n}d``."""

    def geometry(
        input: Tensor,
        grid: Tensor,
        interpolation_mode: int,
        padding_mode: int,
        align_corners: bool,
    ) -> Spec:
        grid_sampler_check(input, grid, n, interpolation_mode)
        return (*input.shape[:2], *grid.shape[1:-1]), input.dtype

    geometry.__name__ = f"grid_sampler_{n}d"
    return geometry


def grid_sampler_backward(n: int) -> Callable[..., Specs]:
    """The geometry of ``grid_sampler_{n}d_backward``."""

    def geometry(
        grad_output: Tensor,
        input: Tensor,
        grid: Tensor,
        interpolation_mode: int,
        padding_mode: int,
        align_corners: bool,
        output_mask: Sequence[bool],
    ) -> Specs:
        grid_sampler_check(input, grid, n, interpolation_mode)
        shape = (*input.shape[:2], *grid.shape[1:-1])
        check_grad_output(grad_output, shape, f"grid_sampler_{n}d_backward")
        return like(input) if output_mask[0] else None, like(grid) if output_mask[1] else None

    geometry.__name__ = f"grid_sampler_{n}d_backward"
    return geometry


def im2col(
    self: Tensor,
    kernel_size: Sequence[int],
    dilation: Sequence[int],
    padding: Sequence[int],
    stride: Sequence[int],
) -> Spec:
    shape = im2col_shape(self.shape, kernel_size, dilation, padding, stride)
    check_floating(self, "im2col")
    return shape, self.dtype


def col2im(
    self: Tensor,
    output_size: Sequence[int],
    kernel_size: Sequence[int],
    dilation: Sequence[int],
    padding: Sequence[int],
    stride: Sequence[int],
) -> Spec:
    shape = col2im_shape(self.shape, output_size, kernel_size, dilation, padding, stride)
    check_floating(self, "col2im")
    return shape, self.dtype


def binary_cross_entropy_backward(
    grad_output: Tensor,
    self: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    reduction: int = 1,
) -> Spec:
    check_bce(self, target, weight, reduction)
    return like(self)


def _ctc_loss(
    log_probs: Tensor,
    targets: Tensor,
    input_lengths: Sequence[int],
    target_lengths: Sequence[int],
    blank: int = 0,
    zero_infinity: bool = False,
) -> Specs:
    t, n, _, s = ctc_geometry(log_probs, targets, input_lengths, target_lengths, blank)
    return ((n,), log_probs.dtype), ((n, t, 2 * s + 1), log_probs.dtype)


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
) -> Spec:
    ctc_geometry(log_probs, targets, input_lengths, target_lengths, blank)
    return like(log_probs)
