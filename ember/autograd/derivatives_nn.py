"""Derivative lines of the neural-network ops (format: ``function_table.py``).

Layers with a fused gradient go through PyTorch's own backward ops (NOTE [nn backward ops]
in ``ember/ops/native/nn.py``); the others are formulas in ember ops. Composite ops
(``linear``, ``conv2d``, ``cross_entropy_loss``...) need no line: their parts are differentiated.
"""

from __future__ import annotations

from typing import Any

from ember.autograd.function_table import defvjp
from ember.ops.registry import ops

aten = ops.aten
_MEAN, _SUM = 1, 2


def _loss_grad(g: Any, elementwise: Any, reduction: int, numel: int) -> Any:
    """``g`` times the elementwise derivative, scaled as the reduction was."""
    if reduction == _MEAN:
        return elementwise * (g / numel)
    return elementwise * g


def _bce_self(g: Any, self: Any, target: Any, weight: Any, pos_weight: Any, reduction: int) -> Any:
    if pos_weight is None:
        d = self.sigmoid() - target
    else:
        d = (1 - target) - (1 + (pos_weight - 1) * target) * (-self).sigmoid()
    d = d if weight is None else d * weight
    return _loss_grad(g, d, reduction, self.numel())


def _bce_target(
    g: Any, self: Any, target: Any, weight: Any, pos_weight: Any, reduction: int
) -> Any:
    # d/dt [(1 - t) x + (1 + (pw - 1) t) softplus(-x)] = -x + (pw - 1) softplus(-x)
    d = -self
    if pos_weight is not None:
        d = d + (pos_weight - 1) * ((-self).relu() + (-self.abs()).exp().log1p())
    d = d if weight is None else d * weight
    return _loss_grad(g, d, reduction, self.numel())


def _mse(g: Any, self: Any, target: Any, reduction: int) -> tuple[Any, Any]:
    diff = self - target
    d = _loss_grad(g, 2 * diff, reduction, diff.numel())
    return d, -d


defvjp(
    aten.convolution.default,
    lambda g, input, weight, bias, stride, padding, dilation, transposed, output_padding, groups: (  # noqa: A006
        aten.convolution_backward.default(
            g,
            input,
            weight,
            None if bias is None else list(bias.shape),
            stride,
            padding,
            dilation,
            transposed,
            output_padding,
            groups,
            [input.requires_grad, weight.requires_grad, bias is not None and bias.requires_grad],
        )
    ),
)
defvjp(
    aten.max_pool2d_with_indices.default,
    lambda g, self, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False, *, result: (
        aten.max_pool2d_with_indices_backward.default(
            g[0], self, kernel_size, stride, padding, dilation, ceil_mode, result[1]
        ),
    ),
)


def _avg_pool2d(
    g: Any,
    self: Any,
    kernel_size: Any,
    stride: Any = (),
    padding: Any = 0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
    divisor_override: int | None = None,
) -> tuple[Any]:
    return (
        aten.avg_pool2d_backward.default(
            g, self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override
        ),
    )


defvjp(aten.avg_pool2d.default, _avg_pool2d)
defvjp(
    aten.native_layer_norm.default,
    lambda g, input, normalized_shape, weight, bias, eps, *, result: (  # noqa: A006
        aten.native_layer_norm_backward.default(
            g[0],
            input,
            normalized_shape,
            result[1],
            result[2],
            weight,
            bias,
            [True, weight is not None, bias is not None],
        )
    ),
    outputs=(True, False, False),  # mean and rstd carry no gradient, as in PyTorch
)
defvjp(
    aten.native_batch_norm.default,
    lambda g, input, weight, bias, running_mean, running_var, training, momentum, eps, *, result: (  # noqa: A006
        *aten.native_batch_norm_backward.default(
            g[0],
            input,
            weight,
            running_mean,
            running_var,
            result[1],
            result[2],
            training,
            eps,
            [True, weight is not None, bias is not None],
        ),
        None,
        None,
    ),
    outputs=(True, False, False),  # save_mean and save_invstd carry no gradient
)
defvjp(
    aten.embedding.default,
    lambda g, weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False: (
        aten.embedding_dense_backward.default(
            g, indices, weight.shape[0], padding_idx, scale_grad_by_freq
        ),
        None,
    ),
)
defvjp(
    aten.nll_loss_forward.default,
    lambda g, self, target, weight, reduction, ignore_index, *, result: (
        aten.nll_loss_backward.default(
            g[0], self, target, weight, reduction, ignore_index, result[1]
        ),
        None,
        None,
    ),
)
defvjp(
    aten.native_dropout.default,
    lambda g, input, p, train, *, result: (  # noqa: A006
        aten.native_dropout_backward.default(g[0], result[1], 0.0 if p == 1 else 1.0 / (1.0 - p))
        if train is not False
        else g[0],
    ),
)
defvjp(
    aten.mse_loss.default, lambda g, self, target, reduction=_MEAN: _mse(g, self, target, reduction)
)
defvjp(
    aten.binary_cross_entropy_with_logits.default,
    lambda g, self, target, weight=None, pos_weight=None, reduction=_MEAN: (
        _bce_self(g, self, target, weight, pos_weight, reduction),
        _bce_target(g, self, target, weight, pos_weight, reduction),
        None,
        None,
    ),
)
defvjp(
    aten.constant_pad_nd.default,
    lambda g, self, pad, value=0: (aten.constant_pad_nd.default(g, [-p for p in pad], 0),),
)
# the backward ops' own derivatives (double backward), where they are linear in grad_output
defvjp(
    aten.native_dropout_backward.default,
    lambda g, grad_output, mask, scale: (
        aten.native_dropout_backward.default(g, mask, scale),
        None,
    ),
)
defvjp(
    aten.max_pool2d_with_indices_backward.default,
    lambda g, grad_output, self, kernel_size, stride, padding, dilation, ceil_mode, indices: (
        g.flatten(-2).gather(-1, indices.flatten(-2)).reshape(indices.shape),
        aten.zeros_like.default(self),
        None,
    ),
)
