"""Derivative lines of the neural-network ops (format: ``function_table.py``).

Layers with a fused gradient go through PyTorch's own backward ops (NOTE [nn backward ops]
in ``ember/ops/native/nn.py``); the others are formulas in ember ops. Composite ops
(``linear``, ``conv2d``, ``cross_entropy_loss``...) need no line: their parts are differentiated.
"""

from __future__ import annotations

from typing import Any

from ember.autograd.derivatives import conj
from ember.autograd.function_table import defvjp
from ember.autograd.grad_mode import is_grad_enabled
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
        aten.convolution_backward.default(  # complex: NOTE [complex gradients]
            g,
            conj(input),
            conj(weight),
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


def register_avg_pool(n: int) -> None:
    """The derivatives of ``avg_pool{n}d`` (its backward op) and of that backward op (the
    pooling of the incoming gradient; none for ``self``, which it reads for its shape)."""
    pool = getattr(aten, f"avg_pool{n}d").default
    backward = getattr(aten, f"avg_pool{n}d_backward").default

    def avg_pool(
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
            backward(
                g, self, kernel_size, stride, padding, ceil_mode, count_include_pad,
                divisor_override,
            ),
        )  # fmt: skip

    def avg_pool_backward(
        g: Any,
        grad_output: Any,
        self: Any,
        kernel_size: Any,
        stride: Any,
        padding: Any,
        ceil_mode: bool,
        count_include_pad: bool,
        divisor_override: int | None,
    ) -> tuple[Any, Any]:
        pooled = pool(
            g, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override
        )
        return pooled, aten.zeros_like.default(self)

    defvjp(pool, avg_pool)
    defvjp(backward, avg_pool_backward)


register_avg_pool(2)


def _recorded_stats(input: Any, dims: list[int], eps: float, keepdim: bool) -> tuple[Any, Any]:
    """Mean and 1/std of ``input`` over ``dims``, recomputed in ember ops so a graph records
    how they depend on ``input`` (NOTE [double backward of the nn backward ops])."""
    mean = input.mean(dims, keepdim=keepdim)
    return mean, (input.var(dims, correction=0, keepdim=keepdim) + eps).rsqrt()


def _layer_norm(
    g: Any,
    input: Any,  # noqa: A002
    normalized_shape: list[int],
    weight: Any,
    bias: Any,
    eps: float,
    *,
    result: Any,
) -> tuple[Any, Any, Any]:
    mean, rstd = result[1], result[2]
    if is_grad_enabled() and input.requires_grad:  # create_graph: the stats depend on input
        dims = list(range(input.ndim - len(normalized_shape), input.ndim))
        mean, rstd = _recorded_stats(input, dims, eps, keepdim=True)
    return aten.native_layer_norm_backward.default(
        g[0], input, normalized_shape, mean, rstd, weight, bias,
        [True, weight is not None, bias is not None],
    )  # fmt: skip


def _batch_norm(
    g: Any,
    input: Any,  # noqa: A002
    weight: Any,
    bias: Any,
    running_mean: Any,
    running_var: Any,
    training: bool,
    momentum: float,
    eps: float,
    *,
    result: Any,
) -> tuple[Any, ...]:
    mean, invstd = result[1], result[2]
    if training and is_grad_enabled() and input.requires_grad:  # as in _layer_norm
        mean, invstd = _recorded_stats(input, [0, *range(2, input.ndim)], eps, keepdim=False)
    grads = aten.native_batch_norm_backward.default(
        g[0], input, weight, running_mean, running_var, mean, invstd, training, eps,
        [True, weight is not None, bias is not None],
    )  # fmt: skip
    return (*grads, None, None)


defvjp(
    aten.native_layer_norm.default,
    _layer_norm,
    outputs=(True, False, False),  # mean and rstd carry no gradient, as in PyTorch
)
defvjp(
    aten.native_batch_norm.default,
    _batch_norm,
    outputs=(True, False, False),  # save_mean and save_invstd carry no gradient
)
defvjp(
    aten.embedding.default,
    lambda g, weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False: (
        aten.embedding_sparse_backward.default(  # a sparse COO gradient, as PyTorch's
            g, indices, weight.shape[0], padding_idx, scale_grad_by_freq
        )
        if sparse
        else aten.embedding_dense_backward.default(
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
    outputs=(True, False),  # total_weight carries no gradient, as in PyTorch
    name="NllLossBackward0",  # PyTorch's name: derivatives.yaml calls the op nll_loss
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


# NOTE [double backward of the nn backward ops]
# Each backward op is differentiated as the function its kernel computes: every tensor
# argument, the saved statistics included (layer norm's mean and rstd, batch norm's
# save_mean/save_invstd or running stats, nll_loss's total_weight), is an independent input,
# so each formula below is the op's exact Jacobian and gradcheck can check it on its own.
# PyTorch instead folds the statistics' dependence on ``input`` into the input's formula and
# refuses gradients for the statistics. ember keeps that chain in the graph: when the first
# backward records one (create_graph), the forward formulas (``_layer_norm``, ``_batch_norm``)
# pass statistics recomputed from ``input`` in ember ops, so the second backward reaches
# ``input`` through them as well. Convolution and pooling have no hidden statistics: their
# second derivatives are PyTorch's (``_convolution_double_backward``, avg_pool2d of the
# incoming gradient).


def _total(terms: list[Any]) -> Any:
    """The sum of the gradient terms that exist (None when none does)."""
    terms = [t for t in terms if t is not None]
    if not terms:
        return None
    out = terms[0]
    for t in terms[1:]:
        out = out + t
    return out


def _convolution_double_backward(
    g: Any,
    grad_output: Any,
    input: Any,  # noqa: A002
    weight: Any,
    bias_sizes: list[int] | None,
    stride: list[int],
    padding: list[int],
    dilation: list[int],
    transposed: bool,
    output_padding: list[int],
    groups: int,
    output_mask: list[bool],
    *,
    needs: tuple[bool, ...],
) -> tuple[Any, Any, Any]:
    # <gg_input, gI> + <gg_weight, gW> + <gg_bias, gB> = <grad_output, conv(gg_input, weight)
    # + conv(input, gg_weight) + gg_bias>: each product is linear in each of its factors (for
    # complex tensors, the other factor is conjugated: NOTE [complex gradients])
    gg_input, gg_weight, gg_bias = g
    geometry = (stride, padding, dilation, transposed, output_padding, groups)
    conv, conv_backward = aten.convolution.default, aten.convolution_backward.default
    g_out = g_input = g_weight = None
    if needs[0]:
        g_out = _total(
            [
                None if gg_input is None else conv(gg_input, conj(weight), None, *geometry),
                None if gg_weight is None else conv(conj(input), gg_weight, None, *geometry),
            ]
        )
        if gg_bias is not None:
            bias = gg_bias.reshape([1, -1] + [1] * (grad_output.ndim - 2))
            g_out = bias.expand(list(grad_output.shape)) if g_out is None else g_out + bias
    if needs[1] and gg_weight is not None:
        mask = [True, False, False]
        g_input = conv_backward(conj(grad_output), input, gg_weight, None, *geometry, mask)[0]
    if needs[2] and gg_input is not None:
        mask = [False, True, False]
        g_weight = conv_backward(conj(grad_output), gg_input, weight, None, *geometry, mask)[1]
    return g_out, g_input, g_weight


def _normalization_double_backward(
    g: Any,
    grad_out: Any,
    x: Any,
    weight: Any,
    mean: Any,
    rstd: Any,
    dims: list[int],
    weight_dims: list[int],
    centered: bool,
    needs: tuple[bool, ...],
) -> tuple[Any, Any, Any, Any, Any]:
    """Gradients for (grad_out, x, weight, mean, rstd) of the normalization backward kernel

        gx = rstd * (a - mean_d(a) - xhat * mean_d(a * xhat))   (centered: batch statistics)
        gx = rstd * a                                            (not centered: fixed ones)
        gw = sum_{weight_dims}(grad_out * xhat),  gb = sum_{weight_dims}(grad_out)

    with ``a = grad_out * weight`` and ``xhat = (x - mean) * rstd``; ``weight``, ``mean`` and
    ``rstd`` come broadcastable against ``x``, and ``dims`` are the statistics' dimensions.
    ``needs`` flags the five gradients; the mean's and rstd's keep their broadcast shape."""
    gg_x, gg_w, gg_b = g
    n = 1
    for d in dims:
        n *= x.shape[d]
    xc = x - mean
    xhat = xc * rstd
    a = grad_out if weight is None else grad_out * weight
    d_a = d_xhat = d_rstd = None  # d_a: gradient w.r.t. a
    if gg_x is not None:
        if centered:
            sum_a, sum_ax = a.sum(dims, keepdim=True), (a * xhat).sum(dims, keepdim=True)
            sum_g, sum_gx = gg_x.sum(dims, keepdim=True), (gg_x * xhat).sum(dims, keepdim=True)
            d_a = rstd * (gg_x - sum_g / n - xhat * (sum_gx / n))
            d_xhat = -(rstd / n) * (a * sum_gx + gg_x * sum_ax)
            if needs[4]:
                d_rstd = (gg_x * (a - sum_a / n - xhat * (sum_ax / n))).sum(dims, keepdim=True)
        else:
            d_a = rstd * gg_x
            if needs[4]:
                d_rstd = (gg_x * a).sum(dims, keepdim=True)
    if gg_w is not None:
        d_xhat = _total([d_xhat, gg_w * grad_out])
    g_out = g_x = g_w = g_mean = None
    if needs[0]:
        from_a = None if d_a is None else (d_a if weight is None else d_a * weight)
        g_out = _total([from_a, None if gg_w is None else gg_w * xhat, gg_b])
        if g_out is not None and tuple(g_out.shape) != tuple(grad_out.shape):
            g_out = g_out.expand(list(grad_out.shape))  # only gg_b reached it
    if needs[2] and weight is not None and d_a is not None:
        g_w = d_a * grad_out
        g_w = g_w.sum(weight_dims) if weight_dims else g_w  # sum([]) would sum everything
    if d_xhat is not None:
        if needs[1]:
            g_x = d_xhat * rstd
        if needs[3]:
            g_mean = -(d_xhat.sum(dims, keepdim=True) * rstd)
        if needs[4]:
            d_rstd = _total([d_rstd, (d_xhat * xc).sum(dims, keepdim=True)])
    return g_out, g_x, g_w, g_mean, d_rstd if needs[4] else None


def _layer_norm_double_backward(
    g: Any,
    grad_out: Any,
    input: Any,  # noqa: A002
    normalized_shape: list[int],
    mean: Any,
    rstd: Any,
    weight: Any,
    bias: Any,
    output_mask: list[bool],
    *,
    needs: tuple[bool, ...],
) -> tuple[Any, ...]:
    axis = input.ndim - len(normalized_shape)
    g_out, g_x, g_w, g_mean, g_rstd = _normalization_double_backward(
        g, grad_out, input, weight, mean, rstd, list(range(axis, input.ndim)), list(range(axis)),
        True, (needs[0], needs[1], needs[4], needs[2], needs[3]),
    )  # fmt: skip
    return g_out, g_x, g_mean, g_rstd, g_w, None


def _batch_norm_double_backward(
    g: Any,
    grad_out: Any,
    input: Any,  # noqa: A002
    weight: Any,
    running_mean: Any,
    running_var: Any,
    save_mean: Any,
    save_invstd: Any,
    train: bool,
    eps: float,
    output_mask: list[bool],
    *,
    needs: tuple[bool, ...],
) -> tuple[Any, ...]:
    channel = [1, -1] + [1] * (input.ndim - 2)
    dims = [0, *range(2, input.ndim)]
    g = tuple(None if t is None else t.reshape(channel) if i else t for i, t in enumerate(g))
    w = None if weight is None else weight.reshape(channel)
    if train:
        mean, rstd = save_mean.reshape(channel), save_invstd.reshape(channel)
        stat_needs = (needs[5], needs[6])
    else:  # eval: the kernel normalizes with the running statistics
        mean = running_mean.to(input.dtype).reshape(channel)
        rstd = (running_var + eps).rsqrt().to(input.dtype).reshape(channel)
        stat_needs = (needs[3], needs[4])
    g_out, g_x, g_w, g_mean, g_rstd = _normalization_double_backward(
        g, grad_out, input, w, mean, rstd, dims, dims, train,
        (needs[0], needs[1], needs[2], *stat_needs),
    )  # fmt: skip
    g_mean = None if g_mean is None else g_mean.reshape([-1])
    g_rstd = None if g_rstd is None else g_rstd.reshape([-1])
    if train:
        return g_out, g_x, g_w, None, None, g_mean, g_rstd
    # rstd = (running_var + eps) ** -1/2: d rstd / d running_var = -rstd ** 3 / 2
    g_var = None if g_rstd is None else g_rstd * (rstd.reshape([-1]) ** 3) * -0.5
    return g_out, g_x, g_w, g_mean, g_var, None, None


def _embedding_double_backward(
    g: Any,
    grad_output: Any,
    indices: Any,
    num_weights: int,
    padding_idx: int,
    scale_grad_by_freq: bool,
) -> tuple[Any, None]:
    # the kernel adds row i of grad_output into row indices[i] (scaled, or skipped for
    # padding_idx): its transpose reads row indices[i] back, scaled and skipped alike
    flat = indices.reshape([-1])
    rows = g.index_select(0, flat)
    if scale_grad_by_freq:
        ones = aten.ones_like.default(rows[:, :1])
        counts = aten.embedding_dense_backward.default(ones, flat, num_weights, -1, False)
        rows = rows / counts.index_select(0, flat)
    if padding_idx >= 0:
        rows = rows * (flat != padding_idx).unsqueeze(1).to(rows.dtype)
    return rows.reshape([*indices.shape, g.shape[-1]]), None  # grad_output's shape


def _nll_loss_double_backward(
    g: Any,
    grad_output: Any,
    self: Any,
    target: Any,
    weight: Any,
    reduction: int,
    ignore_index: int,
    total_weight: Any,
    *,
    needs: tuple[bool, ...],
) -> tuple[Any, ...]:
    # the kernel writes -weight[t] * s into self's class t of each kept row, where s is
    # grad_output per row (none), grad_output / total_weight (mean) or grad_output (sum)
    kept = target != ignore_index
    safe = aten.where.ScalarOther(kept, target, 0)
    hot = aten.one_hot.default(safe, self.shape[-1]).to(g.dtype) * kept.unsqueeze(-1)
    picked = (g * hot).sum(-1)  # g at each kept row's target class
    if weight is not None:
        picked = picked * (hot * weight).sum(-1)
    g_out = g_weight = g_total = None
    if needs[0]:
        g_out = -picked if reduction == 0 else -picked.sum()
        if reduction == _MEAN:
            g_out = g_out / total_weight
    if needs[3] and weight is not None:
        scale = grad_output / total_weight if reduction == _MEAN else grad_output
        per_row = (g * hot).sum(-1) * scale
        g_weight = -(hot * per_row.unsqueeze(-1)).reshape([-1, self.shape[-1]]).sum(0)
    if needs[4] and reduction == _MEAN:
        g_total = picked.sum() * grad_output / (total_weight * total_weight)
    g_self = aten.zeros_like.default(self) if needs[1] else None  # self: only its shape
    return g_out, g_self, None, g_weight, g_total


defvjp(aten.convolution_backward.default, _convolution_double_backward)
defvjp(aten.native_layer_norm_backward.default, _layer_norm_double_backward)
defvjp(aten.native_batch_norm_backward.default, _batch_norm_double_backward)
defvjp(aten.embedding_dense_backward.default, _embedding_double_backward)
defvjp(aten.nll_loss_backward.default, _nll_loss_double_backward)


def _flash_attention(
    g: Any,
    query: Any,
    key: Any,
    value: Any,
    dropout_p: float = 0.0,
    is_causal: bool = False,
    *,
    attn_mask: Any = None,
    scale: float | None = None,
    result: Any,
) -> tuple[Any, ...]:
    grads = aten._scaled_dot_product_flash_attention_for_cpu_backward.default(
        g[0], query, key, value, result[0], result[1], dropout_p, is_causal,
        attn_mask=attn_mask, scale=scale,
    )  # fmt: skip
    return (*grads, None)  # no gradient for the mask (PyTorch's runs math when it needs one)


defvjp(
    aten._scaled_dot_product_flash_attention_for_cpu.default,
    _flash_attention,
    outputs=(True, False),  # the logsumexp carries no gradient, as in PyTorch
)

defvjp(aten._safe_softmax.default, lambda g, self, dim, dtype=None, *, result: (
    aten._softmax_backward_data.default(g, result, dim, self.dtype),))  # fmt: skip
