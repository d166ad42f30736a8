"""Derivative lines of the spatial nn ops (format: ``function_table.py``).

Each forward op differentiates through PyTorch's backward op for it (NOTE [nn backward ops] in
``ember/ops/native/nn.py``); each backward op that is linear in its gradient has the forward
op (or a gather) as its own derivative, so double backward works through them, as in
PyTorch. ``grid_sampler_{2,3}d_backward`` has none, as in PyTorch. Composite ops (``conv1d``,
``max_pool1d``, ``adaptive_avg_pool2d``, ``group_norm``, ``pad``...) need no line: their
parts are differentiated.
"""

from __future__ import annotations

from typing import Any

from ember.autograd.derivatives_nn import (
    _normalization_double_backward,
    _recorded_stats,
    register_avg_pool,
)
from ember.autograd.function_table import defvjp
from ember.autograd.grad_mode import is_grad_enabled
from ember.ops.native.spatial import INTERPOLATING_KINDS, UPSAMPLE
from ember.ops.registry import OpOverload, ops

aten = ops.aten


# --------------------------------------------------------------------------- pooling


def _max_pool_backward_grad(g: Any, self: Any, indices: Any, n: int) -> Any:
    """The derivative of a max-pooling backward op with respect to its ``grad_output``: the
    incoming gradient read at each output's argmax."""
    flat_g = g.flatten(-n) if n > 1 else g
    flat_i = indices.flatten(-n) if n > 1 else indices
    return flat_g.gather(-1, flat_i).reshape(indices.shape)


defvjp(
    aten.max_pool3d_with_indices.default,
    lambda g, self, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False, *, result: (
        aten.max_pool3d_with_indices_backward.default(
            g[0], self, kernel_size, stride, padding, dilation, ceil_mode, result[1]
        ),
    ),
)
defvjp(
    aten.max_pool3d_with_indices_backward.default,
    lambda g, grad_output, self, kernel_size, stride, padding, dilation, ceil_mode, indices: (
        _max_pool_backward_grad(g, self, indices, 3),
        aten.zeros_like.default(self),
        None,
    ),
)


register_avg_pool(3)


def _adaptive(n: int) -> None:
    avg = getattr(aten, f"_adaptive_avg_pool{n}d").default
    avg_backward = getattr(aten, f"_adaptive_avg_pool{n}d_backward").default
    mx = getattr(aten, f"adaptive_max_pool{n}d").default
    mx_backward = getattr(aten, f"adaptive_max_pool{n}d_backward").default
    defvjp(avg, lambda g, self, output_size: (avg_backward(g, self),))
    defvjp(
        avg_backward,
        lambda g, grad_output, self: (
            avg(g, list(grad_output.shape[-n:])),
            aten.zeros_like.default(self),
        ),
    )
    defvjp(mx, lambda g, self, output_size, *, result: (mx_backward(g[0], self, result[1]),))
    defvjp(
        mx_backward,
        lambda g, grad_output, self, indices: (
            _max_pool_backward_grad(g, self, indices, n),
            aten.zeros_like.default(self),
            None,
        ),
    )


for _n in (2, 3):
    _adaptive(_n)


def _fractional(n: int) -> None:
    """``fractional_max_pool{n}d``: the gradient scatters to each window's argmax; its
    backward's own derivative reads the incoming gradient there (as max pooling's)."""
    mx = getattr(aten, f"fractional_max_pool{n}d").default
    mx_backward = getattr(aten, f"fractional_max_pool{n}d_backward").default
    defvjp(
        mx,
        lambda g, self, kernel_size, output_size, random_samples, *, result: (
            mx_backward(g[0], self, kernel_size, output_size, result[1]),
            None,
        ),
    )
    defvjp(
        mx_backward,
        lambda g, grad_output, self, kernel_size, output_size, indices: (
            _max_pool_backward_grad(g, self, indices, n),
            aten.zeros_like.default(self),
            None,
        ),
    )


for _n in (2, 3):
    _fractional(_n)


# --------------------------------------------------------------------------- group norm


def _group_norm(
    g: Any,
    input: Any,  # noqa: A002
    weight: Any,
    bias: Any,
    N: int,  # noqa: N803
    C: int,  # noqa: N803
    HxW: int,  # noqa: N803
    group: int,
    eps: float,
    *,
    result: Any,
    needs: tuple[bool, ...],
) -> tuple[Any, ...]:
    # mean and rstd are differentiable outputs, as in PyTorch: their gradients reach the input
    # through d mean / dx = 1 / D and d rstd / dx = -rstd^3 (x - mean) / D per group of D
    mean, rstd = result[1], result[2]
    if is_grad_enabled() and input.requires_grad:  # create_graph: the stats depend on input
        # NOTE [double backward of the nn backward ops] in derivatives_nn.py
        mean, rstd = _recorded_stats(input.reshape(N, group, -1), [2], eps, keepdim=False)
    gi = gw = gb = None
    if g[0] is not None:
        gi, gw, gb = aten.native_group_norm_backward.default(
            g[0], input, mean, rstd, weight, N, C, HxW, group,
            [needs[0], weight is not None and needs[1], bias is not None and needs[2]],
        )  # fmt: skip
    if needs[0] and (g[1] is not None or g[2] is not None):
        x = input.reshape(N, group, -1)
        size = x.shape[-1]
        terms = []
        if g[1] is not None:
            terms.append((g[1] / size).unsqueeze(-1).expand(x.shape))
        if g[2] is not None:
            r = rstd.unsqueeze(-1)
            terms.append(g[2].unsqueeze(-1) * (-(r * r * r) * (x - mean.unsqueeze(-1)) / size))
        extra = terms[0] if len(terms) == 1 else terms[0] + terms[1]
        extra = extra.reshape(input.shape)
        gi = extra if gi is None else gi + extra
    return gi, gw, gb


defvjp(aten.native_group_norm.default, _group_norm)


def _group_norm_double_backward(
    g: Any,
    grad_out: Any,
    input: Any,  # noqa: A002
    mean: Any,
    rstd: Any,
    weight: Any,
    N: int,  # noqa: N803
    C: int,  # noqa: N803
    HxW: int,  # noqa: N803
    group: int,
    output_mask: list[bool],
    *,
    needs: tuple[bool, ...],
) -> tuple[Any, ...]:
    # group norm is layer norm over (C / group, HxW) of each (sample, group), with a weight
    # per channel: seen as (N, group, C / group, HxW), the shared normalization formula applies
    grouped = [N, group, C // group, HxW]
    per_channel = [1, group, C // group, 1]
    gg_x, gg_w, gg_b = g
    g4 = (
        None if gg_x is None else gg_x.reshape(grouped),
        None if gg_w is None else gg_w.reshape(per_channel),
        None if gg_b is None else gg_b.reshape(per_channel),
    )
    w = None if weight is None else weight.reshape(per_channel)
    stats = [N, group, 1, 1]
    g_out, g_x, g_w, g_mean, g_rstd = _normalization_double_backward(
        g4, grad_out.reshape(grouped), input.reshape(grouped), w, mean.reshape(stats),
        rstd.reshape(stats), [2, 3], [0, 3], True,
        (needs[0], needs[1], needs[4], needs[2], needs[3]),
    )  # fmt: skip
    return (
        None if g_out is None else g_out.reshape(grad_out.shape),
        None if g_x is None else g_x.reshape(input.shape),
        None if g_mean is None else g_mean.reshape(mean.shape),
        None if g_rstd is None else g_rstd.reshape(rstd.shape),
        None if g_w is None else g_w.reshape([-1]),
    )


defvjp(aten.native_group_norm_backward.default, _group_norm_double_backward)


# --------------------------------------------------------------------------- padding


def _padding(name: str) -> None:
    forward, backward = getattr(aten, name).default, getattr(aten, name + "_backward").default
    defvjp(forward, lambda g, self, padding: (backward(g, self, padding),))
    defvjp(
        backward,
        lambda g, grad_output, self, padding: (
            forward(g, padding),
            aten.zeros_like.default(self),
        ),
    )


for _n in (1, 2, 3):
    _padding(f"reflection_pad{_n}d")
    _padding(f"replication_pad{_n}d")


# --------------------------------------------------------------------------- upsampling


def _upsample(forward: OpOverload, backward: OpOverload, n: int, corners: bool) -> None:
    """The entries of one upsample op and its backward op: each is the other's derivative
    (the backward op is linear in its gradient). One formula per arity, so each names only
    the arguments it reads (``self`` only for its shape)."""
    if corners:
        defvjp(
            forward,
            [
                lambda g, self, output_size, align_corners, scales=None: (
                    backward(g, output_size, list(self.shape), align_corners, scales),
                ),
                lambda g, self, output_size, align_corners, scales_h=None, scales_w=None: (
                    backward(g, output_size, list(self.shape), align_corners, scales_h, scales_w),
                ),
                lambda g, self, output_size, align_corners, scales_d=None, scales_h=None, scales_w=None: (  # noqa: E501
                    backward(
                        g,
                        output_size,
                        list(self.shape),
                        align_corners,
                        scales_d,
                        scales_h,
                        scales_w,
                    ),  # fmt: skip
                ),
            ][n - 1],
        )
        defvjp(
            backward,
            lambda g, grad_output, output_size, input_size, align_corners, *scales: (
                forward(g, output_size, align_corners, *scales),
            ),
        )
        return
    defvjp(
        forward,
        [
            lambda g, self, output_size, scales=None: (
                backward(g, output_size, list(self.shape), scales),
            ),
            lambda g, self, output_size, scales_h=None, scales_w=None: (
                backward(g, output_size, list(self.shape), scales_h, scales_w),
            ),
            lambda g, self, output_size, scales_d=None, scales_h=None, scales_w=None: (
                backward(g, output_size, list(self.shape), scales_d, scales_h, scales_w),
            ),
        ][n - 1],
    )
    defvjp(
        backward,
        lambda g, grad_output, output_size, input_size, *scales: (
            forward(g, output_size, *scales),
        ),
    )


for _name, _n, _kind in UPSAMPLE:
    _upsample(
        getattr(aten, _name).default,
        getattr(aten, _name + "_backward").default,
        _n,
        _kind in INTERPOLATING_KINDS,
    )


# --------------------------------------------------------------------------- sampling, shuffles


def _grid_sampler(backward: OpOverload) -> Any:
    def formula(
        g: Any,
        input: Any,  # noqa: A002
        grid: Any,
        interpolation_mode: int,
        padding_mode: int,
        align_corners: bool,
        *,
        needs: tuple[bool, ...],
    ) -> Any:
        return backward(
            g, input, grid, interpolation_mode, padding_mode, align_corners, [needs[0], needs[1]]
        )

    return formula


defvjp(aten.grid_sampler_2d.default, _grid_sampler(aten.grid_sampler_2d_backward.default))
defvjp(aten.grid_sampler_3d.default, _grid_sampler(aten.grid_sampler_3d_backward.default))
defvjp(
    aten.affine_grid_generator.default,
    lambda g, theta, size, align_corners: (
        aten.affine_grid_generator_backward.default(g, size, align_corners),
    ),
)
defvjp(
    aten.pixel_shuffle.default,
    lambda g, self, upscale_factor: (aten.pixel_unshuffle.default(g, upscale_factor),),
)
defvjp(  # the inverse permutation: shuffle the c/g groups of g back
    aten.channel_shuffle.default,
    lambda g, self, groups: (aten.channel_shuffle.default(g, self.shape[1] // groups),),
)
defvjp(
    aten.pixel_unshuffle.default,
    lambda g, self, downscale_factor: (aten.pixel_shuffle.default(g, downscale_factor),),
)
defvjp(
    aten.im2col.default,
    lambda g, self, kernel_size, dilation, padding, stride: (
        aten.col2im.default(g, list(self.shape[-2:]), kernel_size, dilation, padding, stride),
    ),
)
defvjp(
    aten.col2im.default,
    lambda g, self, output_size, kernel_size, dilation, padding, stride: (
        aten.im2col.default(g, kernel_size, dilation, padding, stride),
    ),
)
