"""CPU kernels of the spatial nn ops (``ember/ops/native/spatial.py``), vectorized in NumPy.

# NOTE [separable resampling]
Adaptive average pooling and every upsample mode are separable: the result is the input
transformed along one spatial dim at a time. Along one dim, adaptive averaging is a small
``(out, in)`` averaging matrix (one matmul), and interpolation is a few *taps*: per output
position, the input positions read (monotone in the output position) and their weights. A
tap is one ``take`` along the dim; its adjoint adds each output gradient into the positions it
read, one ``add.reduceat`` over runs of equal positions (monotone positions make the runs
contiguous), never a loop over elements.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ember.backends.cpu._util import Tensor, as_array, quiet_block, quietly, wrap
from ember.backends.cpu.nn import (
    _col2im,
    _columns,
    argmax_last,
    batched,
    flat_index,
    register_pooling,
    scatter_indices,
)
from ember.dispatch.keys import DispatchKey
from ember.library import impl
from ember.ops.native.spatial import (
    GRID_PADDING,
    INTERPOLATING_KINDS,
    INTERPOLATION,
    UPSAMPLE,
    adaptive_bounds,
    adaptive_output,
    check_channel_shuffle,
    check_floating,
    check_fractional_backward,
    check_grad_output,
    check_group_norm,
    check_not_bool,
    check_upsample_dtype,
    col2im_shape,
    fold_geometry,
    fractional_output,
    grid_sampler_check,
    im2col_shape,
    pad_output,
    pixel_shuffle_shape,
    upsample_check,
)
from ember.ops.registry import ops

aten = ops.aten
CPU = DispatchKey.CPU

# --------------------------------------------------------------------------- 3-d pooling

register_pooling(3)


# --------------------------------------------------------------------------- adaptive pooling


def _window_sums(x: np.ndarray, starts: np.ndarray, ends: np.ndarray, axis: int) -> np.ndarray:
    """Sums of ``x`` over the windows ``[starts[o], ends[o])`` along ``axis`` (non-empty,
    monotone, possibly overlapping, the last ending at the axis' end): one ``add.reduceat``
    over the interleaved bounds, whose odd segments (from one window's end to the next one's
    start) are dropped."""
    if len(ends) > 1 and ends[-2] >= x.shape[axis]:  # reduceat's bounds must be inside
        widths = [(0, 0)] * x.ndim
        widths[axis] = (0, 1)
        x = np.pad(x, widths)  # a zero the last window's segment may include
    bounds = np.empty(2 * len(starts) - 1, np.int64)
    bounds[0::2] = starts
    bounds[1::2] = ends[:-1]
    sums = np.add.reduceat(x, bounds, axis=axis)  # the last segment runs to the array's end
    sel = [slice(None)] * x.ndim
    sel[axis] = slice(0, None, 2)
    return sums[tuple(sel)]


def _adaptive_avg(x: np.ndarray, out: Sequence[int]) -> np.ndarray:
    """Adaptive average pooling of the last ``len(out)`` dims: window sums along each dim
    (NOTE [separable resampling]), divided by each window's element count."""
    n = len(out)
    res = x
    div: Any = 1
    for i in range(n - 1, -1, -1):  # the last dim first: it shrinks the array fastest
        axis = res.ndim - n + i
        starts, ends = (np.asarray(b) for b in adaptive_bounds(res.shape[axis], out[i]))
        res = _window_sums(res, starts, ends, axis)
        div = div * (ends - starts).reshape([-1] + [1] * (n - 1 - i))
    return res / np.asarray(div, x.dtype)


def _adaptive_avg_backward(g: np.ndarray, size: Sequence[int]) -> np.ndarray:
    """The adjoint of ``_adaptive_avg``: each input position gets the sum, over the windows
    that hold it (a contiguous run of outputs), of their gradient over their element count."""
    n = len(size)
    div: Any = 1
    bounds = []
    for i in range(n):
        starts, ends = (np.asarray(b) for b in adaptive_bounds(size[i], g.shape[g.ndim - n + i]))
        div = div * (ends - starts).reshape([-1] + [1] * (n - 1 - i))
        positions = np.arange(size[i])
        # the windows holding position p: from the first that ends after p to the first that
        # starts after it
        bounds.append(
            (np.searchsorted(ends, positions, "right"), np.searchsorted(starts, positions, "right"))
        )
    res = g / np.asarray(div, g.dtype)
    for i in range(n - 1, -1, -1):
        res = _window_sums(res, *bounds[i], res.ndim - n + i)
    return res


def _register_adaptive_avg(n: int) -> None:
    name = f"_adaptive_avg_pool{n}d"

    def forward(self: Tensor, output_size: Sequence[int]) -> Tensor:
        shape = adaptive_output(self.shape, output_size, n, f"adaptive_avg_pool{n}d")
        check_floating(self, f"adaptive_avg_pool{n}d")
        x = self._edata
        if x.size == 0 or any(o == 0 for o in output_size):
            return wrap(np.zeros(shape, x.dtype))
        with quiet_block():
            res = _adaptive_avg(x, list(output_size))
        return wrap(np.ascontiguousarray(res, x.dtype))

    def backward(grad_output: Tensor, self: Tensor) -> Tensor:
        op = f"adaptive_avg_pool{n}d_backward"
        shape = adaptive_output(self.shape, grad_output.shape[-n:], n, op)
        check_grad_output(grad_output, shape, op)
        x = self._edata
        if grad_output.numel() == 0:
            return wrap(np.zeros(x.shape, x.dtype))
        g = grad_output._edata
        with quiet_block():
            res = _adaptive_avg_backward(g, list(x.shape[-n:]))
        return wrap(np.ascontiguousarray(res, x.dtype))

    impl(getattr(aten, name).default, CPU, forward)
    impl(getattr(aten, name + "_backward").default, CPU, backward)


def _window_positions(size: int, out: int) -> np.ndarray:
    """``(out, k)``: the input positions of each adaptive window, the short ones padded with
    their last position (which changes neither the max nor which one comes first)."""
    starts, ends = adaptive_bounds(size, out)
    k = max(b - a for a, b in zip(starts, ends, strict=True))
    pos = np.asarray(starts)[:, None] + np.arange(k)
    return np.minimum(pos, np.asarray(ends)[:, None] - 1)


def _register_adaptive_max(n: int) -> None:
    name = f"adaptive_max_pool{n}d"

    def forward(self: Tensor, output_size: Sequence[int]) -> tuple[Tensor, Tensor]:
        shape = adaptive_output(self.shape, output_size, n, name)
        check_floating(self, name)
        x = self._edata
        if x.size == 0 or any(o == 0 for o in output_size):
            return wrap(np.zeros(shape, x.dtype)), wrap(np.zeros(shape, np.int64))
        lead = x.ndim - n
        positions = [_window_positions(x.shape[lead + i], output_size[i]) for i in range(n)]
        win = x
        for i, pos in enumerate(positions):  # (..., o_0, k_0, ..., o_i, k_i, rest)
            axis = lead + 2 * i
            win = win.take(pos.ravel(), axis=axis)
            win = win.reshape(*win.shape[:axis], *pos.shape, *win.shape[axis + 1 :])
        outs = tuple(lead + 2 * i for i in range(n))
        ks = tuple(lead + 2 * i + 1 for i in range(n))
        win = win.transpose(*range(lead), *outs, *ks)
        flat = win.reshape(*win.shape[: lead + n], math.prod(win.shape[lead + n :]))
        arg = argmax_last(flat)
        vals = np.take_along_axis(flat, arg[..., None], axis=-1)[..., 0]
        offs = np.unravel_index(arg, tuple(p.shape[1] for p in positions))
        coords = []
        for i, pos in enumerate(positions):
            o_shape = [1] * n
            o_shape[i] = pos.shape[0]
            o_idx = np.arange(pos.shape[0]).reshape(o_shape)
            coords.append(pos[o_idx, offs[i]])
        idx = flat_index(coords, x.shape[lead:])
        return wrap(np.ascontiguousarray(vals)), wrap(idx.astype(np.int64))

    def backward(grad_output: Tensor, self: Tensor, indices: Tensor) -> Tensor:
        op = f"{name}_backward"
        check_grad_output(grad_output, indices.shape, op)
        return scatter_indices(grad_output, self, indices, n)

    impl(getattr(aten, name).default, CPU, forward)
    impl(getattr(aten, name + "_backward").default, CPU, backward)


for _n in (2, 3):
    _register_adaptive_avg(_n)
    _register_adaptive_max(_n)


# --------------------------------------------------------------------------- fractional pooling
#
# NOTE [fractional max pooling]: each (batch, channel) plane draws one sample u in [0, 1) per
# spatial dim (``random_samples[b, c]``: width first, then height, for 2-d; time, height,
# width for 3-d, as PyTorch reads them). Along a dim of input size I, kernel k and output o,
# window i starts at int((i + u) * a) - int(u * a) with a = (I - k) / (o - 1) computed in the
# input's dtype, the last window at I - k. Each window's maximum is the first largest value
# in row-major order, or its last NaN; its index is flat in the plane (h * W + w), and an
# all -inf window reports its first position. All planes and windows are one gather.


def _fractional_starts(u: np.ndarray, size: int, k: int, o: int) -> np.ndarray:
    """``(..., o)`` window starts along one dim for samples ``u`` of shape ``(...)``."""
    starts = np.empty((*u.shape, o), np.int64)
    if o > 1:
        dt = u.dtype.type
        alpha = dt(size - k) / dt(o - 1)
        i = np.arange(o - 1).astype(u.dtype)
        with quiet_block():
            starts[..., :-1] = ((i + u[..., None]) * alpha).astype(np.int64) - (
                (u * alpha).astype(np.int64)[..., None]
            )
    if o > 0:
        starts[..., -1] = size - k
    return starts


def _register_fractional_max(n: int) -> None:
    name = f"fractional_max_pool{n}d"
    # the sample column of each spatial dim
    column = (1, 0) if n == 2 else (0, 1, 2)

    def forward(
        self: Tensor, kernel_size: Sequence[int], output_size: Sequence[int], random_samples: Tensor
    ) -> tuple[Tensor, Tensor]:
        shape = fractional_output(self, kernel_size, output_size, random_samples, n)
        check_floating(self, name)
        x = self._edata
        batched = x.ndim == n + 2
        xb = x if batched else x[None]
        b, c, spatial = xb.shape[0], xb.shape[1], xb.shape[2:]
        if math.prod(shape) == 0:
            return wrap(np.zeros(shape, x.dtype)), wrap(np.zeros(shape, np.int64))
        u = random_samples._edata[:b]
        pos = []  # per dim: (b, c, 1.., o_d, 1.., 1.., k_d, 1..) positions
        for d in range(n):
            starts = _fractional_starts(
                u[..., column[d]], spatial[d], kernel_size[d], output_size[d]
            )
            p = starts[..., None] + np.arange(kernel_size[d])
            view = [b, c] + [1] * (2 * n)
            view[2 + d], view[2 + n + d] = output_size[d], kernel_size[d]
            pos.append(p.reshape(view))
        strides = [math.prod(spatial[d + 1 :]) for d in range(n)]
        flat = sum(p * st for p, st in zip(pos, strides, strict=True))
        out_shape = (b, c, *output_size)
        if math.prod(kernel_size) == 0:  # empty windows: -inf at their first position
            first = sum(
                _fractional_starts(
                    u[..., column[d]], spatial[d], kernel_size[d], output_size[d]
                ).reshape([b, c] + [output_size[d] if e == d else 1 for e in range(n)])
                * strides[d]
                for d in range(n)
            )
            vals = np.full(out_shape, -np.inf, x.dtype)
            idx = np.broadcast_to(first, out_shape).astype(np.int64)
        else:
            bi = np.arange(b).reshape([b] + [1] * (2 * n + 1))
            ci = np.arange(c).reshape([1, c] + [1] * (2 * n))
            win = xb.reshape(b, c, -1)[bi, ci, flat].reshape(*out_shape, -1)
            flat = np.broadcast_to(flat, (*out_shape, *kernel_size)).reshape(*out_shape, -1)
            nan = np.isnan(win)
            k = win.shape[-1]
            last_nan = k - 1 - np.argmax(nan[..., ::-1], axis=-1)
            arg = np.where(nan.any(axis=-1), last_nan, np.argmax(win, axis=-1))
            vals = np.take_along_axis(win, arg[..., None], axis=-1)[..., 0]
            idx = np.take_along_axis(flat, arg[..., None], axis=-1)[..., 0]
        if not batched:
            vals, idx = vals[0], idx[0]
        return wrap(np.ascontiguousarray(vals)), wrap(np.ascontiguousarray(idx, np.int64))

    def backward(
        grad_output: Tensor,
        self: Tensor,
        kernel_size: Sequence[int],
        output_size: Sequence[int],
        indices: Tensor,
    ) -> Tensor:
        check_fractional_backward(grad_output, self, indices, name)
        return scatter_indices(grad_output, self, indices, n)

    impl(getattr(aten, name).default, CPU, forward)
    impl(getattr(aten, name + "_backward").default, CPU, backward)


for _n in (2, 3):
    _register_fractional_max(_n)


# --------------------------------------------------------------------------- group norm


@impl(aten.native_group_norm.default, CPU)
def native_group_norm(
    input: Tensor,
    weight: Tensor | None,
    bias: Tensor | None,
    N: int,
    C: int,
    HxW: int,
    group: int,
    eps: float,
) -> tuple[Tensor, Tensor, Tensor]:
    check_group_norm(input, weight, bias, N, C, HxW, group)
    dt = input._edata.dtype
    x = input._edata.reshape(N, group, C // group * HxW)
    with quiet_block():
        mean = x.mean(axis=-1, dtype=dt) if x.shape[-1] else np.full((N, group), np.nan, dt)
        xc = x - mean[..., None]
        var = np.mean(xc * xc, axis=-1, dtype=dt) if x.shape[-1] else mean
        rstd = (1.0 / np.sqrt(var + np.asarray(eps, dt))).astype(dt, copy=False)
        out = (xc * rstd[..., None]).reshape(N, C, HxW)
        if weight is not None:
            out *= weight._edata[:, None]
        if bias is not None:
            out += bias._edata[:, None]
    return wrap(out.reshape(input.shape)), wrap(as_array(mean)), wrap(as_array(rstd))


@impl(aten.native_group_norm_backward.default, CPU)
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
) -> tuple[Any, Any, Any]:
    check_group_norm(input, weight, None, N, C, HxW, group)
    dt = input._edata.dtype
    g = grad_out._edata.reshape(N, C, HxW)
    r = rstd._edata.reshape(N, group, 1)
    with quiet_block():
        per_group = C // group * HxW
        xhat = (input._edata.reshape(N, group, per_group) - mean._edata.reshape(N, group, 1)) * r
        gi = gw = gb = None
        if output_mask[0]:
            a = (g * weight._edata[:, None] if weight is not None else g).reshape(
                N, group, per_group
            )
            m1 = a.mean(axis=-1, keepdims=True) if a.shape[-1] else 0
            m2 = (a * xhat).mean(axis=-1, keepdims=True) if a.shape[-1] else 0
            gi = wrap((r * (a - m1 - xhat * m2)).astype(dt, copy=False).reshape(input.shape))
        if output_mask[1]:
            gw = wrap(as_array((g * xhat.reshape(N, C, HxW)).sum(axis=(0, 2))).astype(dt))
        if output_mask[2]:
            gb = wrap(as_array(g.sum(axis=(0, 2))).astype(dt))
    return gi, gw, gb


# --------------------------------------------------------------------------- padding


def _pad_widths(padding: Sequence[int], ndim: int, n: int) -> list[tuple[int, int]]:
    """Per-dim (left, right) of ``padding`` (pairs from the last dim backwards)."""
    widths = [(0, 0)] * ndim
    for i in range(n):
        widths[ndim - 1 - i] = (padding[2 * i], padding[2 * i + 1])
    return widths


def _mode_pad(x: np.ndarray, padding: Sequence[int], n: int, mode: str) -> np.ndarray:
    """``np.pad`` by the positive pads, then the negative ones cropped off."""
    widths = _pad_widths(padding, x.ndim, n)
    grow = [(max(a, 0), max(b, 0)) for a, b in widths]
    res = np.pad(x, grow, mode=mode) if any(a or b for a, b in grow) else x.copy()
    crop = tuple(slice(max(-a, 0), res.shape[i] - max(-b, 0)) for i, (a, b) in enumerate(widths))
    return np.ascontiguousarray(res[crop])


def _mode_pad_backward(
    g: np.ndarray, shape: Sequence[int], padding: Sequence[int], n: int, reflect: bool
) -> np.ndarray:
    """The adjoint of ``_mode_pad``: the cropped parts get zeros back, then each padded
    border is folded onto the input positions it copied (one slice add per dim and side)."""
    widths = _pad_widths(padding, g.ndim, n)
    crops = [(max(-a, 0), max(-b, 0)) for a, b in widths]
    if any(a or b for a, b in crops):
        g = np.pad(g, crops)
    for axis, (a, b) in enumerate(widths):
        lo, hi = max(a, 0), max(b, 0)
        if not (lo or hi):
            continue
        size = shape[axis]

        def part(start: Any, stop: Any, step: int = 1, axis: int = axis) -> tuple[slice, ...]:
            sel = [slice(None)] * (axis + 1)
            sel[axis] = slice(start, stop, step)
            return tuple(sel)

        res = g[part(lo, lo + size)].copy()
        if reflect:
            if lo:
                res[part(1, lo + 1)] += g[part(lo - 1, None, -1)]
            if hi:
                res[part(size - 1 - hi, size - 1)] += g[part(g.shape[axis] - 1, lo + size - 1, -1)]
        else:
            if lo:
                res[part(0, 1)] += g[part(0, lo)].sum(axis=axis, keepdims=True)
            if hi:
                res[part(size - 1, size)] += g[part(lo + size, None)].sum(axis=axis, keepdims=True)
        g = res
    return np.ascontiguousarray(g)


def _register_pad(n: int, reflect: bool) -> None:
    name = f"{'reflection' if reflect else 'replication'}_pad{n}d"
    mode = "reflect" if reflect else "edge"

    def forward(self: Tensor, padding: Sequence[int]) -> Tensor:
        pad_output(self.shape, padding, n, name, reflect)
        check_not_bool(self, name)
        return wrap(_mode_pad(self._edata, padding, n, mode))

    def backward(grad_output: Tensor, self: Tensor, padding: Sequence[int]) -> Tensor:
        shape = pad_output(self.shape, padding, n, name + "_backward", reflect)
        check_grad_output(grad_output, shape, name + "_backward")
        g = _mode_pad_backward(grad_output._edata, self.shape, padding, n, reflect)
        return wrap(g.astype(self.dtype.np, copy=False))

    impl(getattr(aten, name).default, CPU, forward)
    impl(getattr(aten, name + "_backward").default, CPU, quietly(backward))


for _n in (1, 2, 3):
    for _mirror in (True, False):
        _register_pad(_n, _mirror)


# --------------------------------------------------------------------------- upsampling


def _scale(size: int, out: int, scale: float | None, dt: type) -> Any:
    """PyTorch's ``compute_scales_value``: ``1 / scale`` when a positive scale was given (the
    user's scale factor), else ``size / out``, in the kernel's float type."""
    return dt(1.0 / scale) if scale is not None and scale > 0 else dt(size) / dt(out)


def _taps(
    kind: str, size: int, out: int, scale: float | None, align_corners: bool, dt: type
) -> list[tuple[np.ndarray, np.ndarray | None]]:
    """The taps of one dim (NOTE [separable resampling]): ``(positions, weights)`` pairs,
    weights None for nearest modes. Index arithmetic follows PyTorch's CPU kernels, in
    float32 for nearest modes and in the input's float type otherwise."""
    dst = np.arange(out)
    if kind == "nearest":
        if out == size:
            return [(dst, None)]
        if out == 2 * size:
            return [(dst >> 1, None)]
        s = _scale(size, out, scale, np.float32)
        src = np.floor(dst.astype(np.float32) * s).astype(np.int64)
        return [(np.minimum(src, size - 1), None)]
    if kind == "exact":
        s = _scale(size, out, scale, np.float32)
        src = np.floor((dst.astype(np.float32) + np.float32(0.5)) * s).astype(np.int64)
        return [(np.minimum(src, size - 1), None)]
    if align_corners:
        s = dt((size - 1) / (out - 1)) if out > 1 else dt(0)
        real = dst.astype(dt) * s
    else:
        s = _scale(size, out, scale, dt)
        real = (dst.astype(dt) + dt(0.5)) * s - dt(0.5)
    if kind == "linear" and size == out:  # PyTorch's kernel weighs the same pixel 1 and 0
        return [(dst, np.ones(out, dt)), (dst, np.zeros(out, dt))]
    if kind == "linear":
        real = np.maximum(real, dt(0))
        i0 = real.astype(np.int64)
        i1 = np.minimum(i0 + 1, size - 1)
        w1 = (real - i0.astype(dt)).astype(dt)
        return [(i0, (dt(1) - w1).astype(dt)), (i1, w1)]
    # cubic: four taps around floor(real), clamped to the edges (PyTorch's A = -0.75)
    i0 = np.minimum(np.floor(real).astype(np.int64), size - 1)
    t = np.clip(real - i0.astype(dt), 0, 1).astype(dt)
    a = dt(-0.75)

    def near(x: np.ndarray) -> np.ndarray:
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x: np.ndarray) -> np.ndarray:
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    weights = (far(t + 1), near(t), near(1 - t), far(2 - t))
    return [(np.clip(i0 - 1 + j, 0, size - 1), w.astype(dt)) for j, w in enumerate(weights)]


def _apply_taps(x: np.ndarray, taps: list[Any], axis: int) -> np.ndarray:
    """Interpolate along ``axis``: the sum of each tap's ``take`` times its weights."""
    shape = [1] * x.ndim
    shape[axis] = -1
    res = None
    for pos, w in taps:
        part = x.take(pos, axis=axis)
        if w is not None:
            part *= w.reshape(shape)
        res = part if res is None else res.__iadd__(part)
    assert res is not None
    return res


def _apply_taps_adjoint(g: np.ndarray, taps: list[Any], axis: int, size: int) -> np.ndarray:
    """The adjoint of ``_apply_taps``: each output's gradient added into the ``size`` input
    positions it read, one ``add.reduceat`` per tap over its runs of equal positions."""
    shape = [1] * g.ndim
    shape[axis] = -1
    out_shape = list(g.shape)
    out_shape[axis] = size
    res = np.zeros(out_shape, g.dtype)
    for pos, w in taps:
        part = g if w is None else g * w.reshape(shape)
        targets, starts = np.unique(pos, return_index=True)  # pos is sorted: runs are contiguous
        sums = np.add.reduceat(part, starts, axis=axis)
        sel = [slice(None)] * g.ndim
        sel[axis] = targets  # type: ignore[call-overload]
        res[tuple(sel)] += sums
    return res


# NOTE [antialiased resampling]
# ``interpolate(..., antialias=True)`` (``_upsample_bilinear2d_aa``, ``_upsample_bicubic2d_aa``)
# is separable too, but its filter widens with the downscaling factor: output ``i`` reads the
# inputs within ``support`` of its centre ``scale * (i + 0.5)`` (``support`` is the filter's
# half width, 1 for the triangle and 2 for the cubic with ``a = -0.5``, times ``scale`` when
# ``scale >= 1``, i.e. when shrinking), weighted by the filter at ``(j - centre + 0.5) /
# scale`` and normalised to sum to 1, as PIL does. ``align_corners`` only changes ``scale``
# (``(in - 1) / (out - 1)``). Along one dim this is an ``(out, in)`` matrix, built without a
# loop over pixels, and the dim is one matmul; the backward op is the transposed matmul. As
# PyTorch's kernels: the forward leaves a dim whose size does not change untouched (even when
# a given scale would make its matrix something else than the identity); the backward op
# applies both matrices.


def _fma(a: Any, b: Any, c: Any) -> Any:
    """``a * b + c`` of float32 values rounded once, as the fused multiply-add PyTorch's
    compiled cubic filter uses (the float32 product is exact in double)."""
    return (np.float64(a) * np.asarray(b, np.float64) + np.float64(c)).astype(np.float32)


def _mul_add(a: Any, b: Any, c: Any) -> Any:
    return a * b + c


def aa_taps(
    kind: str, size: int, out: int, scale: float | None, align_corners: bool, dt: type
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The taps of antialiased resampling along one dim (NOTE [antialiased resampling]):
    ``(out, width)`` input positions (clipped into range), weights (in the input's float
    type, as PyTorch computes them) and whether each tap is read at all."""
    # in the input's float type, with PyTorch's roundings: its scalars are of that type, and
    # the expressions that mix them with double literals are in double. At an inf or NaN
    # input, whether a weight is exactly 0 decides between inf and NaN.
    f8 = np.float64
    if align_corners:
        s = dt(size - 1) / dt(out - 1) if out > 1 else dt(0)
    else:
        s = _scale(size, out, scale, dt)
    half = 1.0 if kind == "linear_aa" else 2.0
    support = dt(half * f8(s)) if s >= 1 else dt(half)
    inv = dt(1.0 / f8(s)) if s >= 1 else dt(1)
    width = int(math.ceil(support)) * 2 + 1  # the most inputs one output reads
    centre = (f8(s) * (np.arange(out) + 0.5)).astype(dt)
    lo = np.maximum(((centre - support).astype(f8) + 0.5).astype(np.int64), 0)
    hi = np.minimum(((centre + support).astype(f8) + 0.5).astype(np.int64), size)
    count = np.clip(hi - lo, 0, width)
    j = np.arange(width)
    read = j[None, :] < count[:, None]
    pos = lo[:, None] + j[None, :]
    offset = (pos.astype(dt) - centre[:, None]).astype(f8) + 0.5
    x = np.abs((offset * f8(inv)).astype(dt))
    if kind == "linear_aa":
        w = np.where(x < 1, dt(1) - x, dt(0))
    else:
        a = dt(-0.5)
        fma = _fma if dt is np.float32 else _mul_add
        near = fma(fma(a + 2, x, -(a + 3)) * x, x, dt(1))
        far = fma(fma(fma(a, x, -5 * a), x, 8 * a), x, -4 * a)
        w = np.where(x < 1, near, np.where(x < 2, far, dt(0)))
    w = np.where(read, w, dt(0)).astype(dt)
    total = w.sum(axis=1, keepdims=True)
    w = (w / np.where(total != 0, total, dt(1))).astype(dt)  # a row of zeros stays zeros
    return np.minimum(pos, size - 1), w, read


def aa_matrix(taps: tuple[np.ndarray, np.ndarray, np.ndarray], size: int) -> np.ndarray:
    """The ``(out, size)`` matrix of one dim's taps (one scattered add, no Python loop)."""
    pos, w, read = taps
    m = np.zeros((pos.shape[0], size), w.dtype)
    rows = np.broadcast_to(np.arange(pos.shape[0])[:, None], pos.shape)
    np.add.at(m, (rows[read], pos[read]), w[read])
    return m


def _aa_by_taps(
    x: np.ndarray, taps: tuple[np.ndarray, np.ndarray, np.ndarray], axis: int, size: int,
    adjoint: bool,
) -> np.ndarray:  # fmt: skip
    """One dim of antialiased resampling (or its adjoint) tap by tap, for inputs with inf or
    NaN: an input no tap reads contributes nothing (a matmul would multiply it by 0), one a
    tap reads with weight 0 gives NaN, as in PyTorch's loops. A loop over the taps (a few per
    output), not over pixels."""
    pos, w, read = taps
    shape = [1] * x.ndim
    shape[axis] = -1
    if not adjoint:
        res = np.zeros(x.shape[:axis] + (pos.shape[0],) + x.shape[axis + 1 :], x.dtype)
        for j in range(pos.shape[1]):
            part = x.take(pos[:, j], axis=axis) * w[:, j].reshape(shape)
            res += np.where(read[:, j].reshape(shape), part, x.dtype.type(0))
        return res
    res = np.zeros(x.shape[:axis] + (size,) + x.shape[axis + 1 :], x.dtype)
    moved, g = np.moveaxis(res, axis, 0), np.moveaxis(x, axis, 0)  # a view of res
    extra = (1,) * (g.ndim - 1)
    for j in range(pos.shape[1]):
        keep = read[:, j]
        np.add.at(moved, pos[keep, j], g[keep] * w[keep, j].reshape(-1, *extra))
    return res


def _upsample_aa(
    x: np.ndarray,
    output_size: Sequence[int],
    kind: str,
    align_corners: bool,
    scales: Sequence[float | None],
    adjoint_of: Sequence[int] | None = None,
) -> np.ndarray:
    """Antialiased resampling of the last two dims of ``x`` (or, with ``adjoint_of`` the
    input's spatial size, its adjoint applied to a gradient): two matmuls."""
    dt = x.dtype.type
    adjoint = adjoint_of is not None
    sizes = adjoint_of if adjoint_of is not None else x.shape[-2:]
    res = x
    for i in (1, 0):  # the width first, as PyTorch
        if not adjoint and output_size[i] == sizes[i]:
            continue  # PyTorch's forward skips a dim it does not resize
        taps = aa_taps(kind, sizes[i], output_size[i], scales[i], align_corners, dt)
        axis = x.ndim - 2 + i
        if not np.isfinite(res).all():
            res = _aa_by_taps(res, taps, axis, sizes[i], adjoint)
            continue
        m = aa_matrix(taps, sizes[i])
        if i == 1:
            res = np.matmul(res, m if adjoint else m.T)
        else:
            res = np.matmul(m.T if adjoint else m, res)
    if res is x:  # no dim resized: a copy of its own (NOTE [storage roots]), never the input
        res = np.array(x, order="C")
    return res


def _upsample(
    x: np.ndarray,
    output_size: Sequence[int],
    kind: str,
    align_corners: bool,
    scales: Sequence[float | None],
    adjoint_of: Sequence[int] | None = None,
) -> np.ndarray:
    """Resample the last ``n`` dims of ``x`` to ``output_size`` (or, with ``adjoint_of`` the
    input's spatial size, apply the adjoint to a gradient of the output size)."""
    if kind.endswith("_aa"):
        return _upsample_aa(x, output_size, kind, align_corners, scales, adjoint_of)
    n = len(output_size)
    dt = x.dtype.type if x.dtype.kind == "f" else np.float32
    res = x
    for i in range(n - 1, -1, -1):  # last dim first
        axis = x.ndim - n + i
        size = adjoint_of[i] if adjoint_of is not None else x.shape[axis]
        taps = _taps(kind, size, output_size[i], scales[i], align_corners, dt)
        if adjoint_of is None:
            res = _apply_taps(res, taps, axis)
        else:
            res = _apply_taps_adjoint(res, taps, axis, size)
    return res


def _register_upsample(name: str, n: int, kind: str) -> None:
    corners = kind in INTERPOLATING_KINDS

    def forward(self: Tensor, output_size: Sequence[int], *rest: Any) -> Tensor:
        align_corners, scales = (rest[0], rest[1:]) if corners else (False, rest)
        shape = upsample_check(self.shape, output_size, n, name)
        check_upsample_dtype(self, kind, name)
        x = self._edata
        scales = tuple(scales) + (None,) * (n - len(scales))
        if x.size == 0:
            return wrap(np.zeros(shape, x.dtype))
        return wrap(np.ascontiguousarray(_upsample(x, output_size, kind, align_corners, scales)))

    def backward(
        grad_output: Tensor, output_size: Sequence[int], input_size: Sequence[int], *rest: Any
    ) -> Tensor:
        align_corners, scales = (rest[0], rest[1:]) if corners else (False, rest)
        shape = upsample_check(input_size, output_size, n, name + "_backward")
        check_grad_output(grad_output, shape, name + "_backward")
        g = grad_output._edata
        scales = tuple(scales) + (None,) * (n - len(scales))
        if g.size == 0:
            return wrap(np.zeros(tuple(input_size), g.dtype))
        res = _upsample(g, output_size, kind, align_corners, scales, list(input_size[2:]))
        return wrap(np.ascontiguousarray(res.astype(g.dtype, copy=False)))

    impl(getattr(aten, name).default, CPU, quietly(forward))
    impl(getattr(aten, name + "_backward").default, CPU, quietly(backward))


for _name, _n, _kind in UPSAMPLE:
    _register_upsample(_name, _n, _kind)


# --------------------------------------------------------------------------- grid sampling
# NOTE [grid sampling]
# Each output point reads the input at the point its grid entry names (x along the last dim,
# then y, then z), unnormalized from [-1, 1] to pixel coordinates and brought inside by the
# padding mode. Bilinear sampling adds the 2^n surrounding pixels with their weights (those
# outside the input count as 0); nearest reads the pixel at the rounded point. The input
# gradient adds each weighted output gradient back with one ``bincount`` over (sample,
# channel, pixel) keys; the grid
# gradient is each weight's derivative times the pixels it weighs, chained through the
# padding mode's derivative (0 where a coordinate was clipped, -1 where reflected). Pixels are
# read channels-last (the input laid out ``(N * H * W, C)`` once), so each corner is one
# ``take`` of whole rows rather than a gather of single values.


def _reflect(c: np.ndarray, low2: int, high2: int) -> tuple[np.ndarray, np.ndarray]:
    """Reflect coordinates into [low2 / 2, high2 / 2], with the derivative (+-1)."""
    if low2 == high2:
        return np.zeros_like(c), np.zeros_like(c)
    lo = low2 / 2
    span = (high2 - low2) / 2
    c = c - lo
    sign = np.where(c < 0, -1.0, 1.0).astype(c.dtype)
    c = np.abs(c)
    extra = np.fmod(c, span)
    flips = np.floor(c / span)
    even = flips % 2 == 0
    out = np.where(even, extra + lo, span - extra + lo).astype(c.dtype)
    return out, np.where(even, sign, -sign).astype(c.dtype)


def _clip(c: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """Clip coordinates into [0, size - 1], with the derivative (0 where clipped)."""
    grad = ((c > 0) & (c < size - 1)).astype(c.dtype)
    return np.clip(c, 0, size - 1).astype(c.dtype), grad


def _source(
    coord: np.ndarray, size: int, padding_mode: int, align_corners: bool
) -> tuple[np.ndarray, np.ndarray]:
    """Pixel coordinates of normalized ``coord`` along a dim of ``size``, and d(pixel)/d(coord)
    (PyTorch's ``grid_sampler_compute_source_index_set_grad``)."""
    dt = coord.dtype.type
    if align_corners:
        scale = dt((size - 1) / 2)
        c = ((coord + dt(1)) / dt(2)) * dt(size - 1)
    else:
        scale = dt(size / 2)
        c = ((coord + dt(1)) * dt(size) - dt(1)) / dt(2)
    grad = np.full_like(c, scale)
    if padding_mode == GRID_PADDING["border"]:
        c, g = _clip(c, size)
        grad = grad * g
    elif padding_mode == GRID_PADDING["reflection"]:
        low2, high2 = (0, 2 * (size - 1)) if align_corners else (-1, 2 * size - 1)
        c, g1 = _reflect(c, low2, high2)
        c, g2 = _clip(c, size)
        grad = grad * g1 * g2
    return c.astype(dt, copy=False), grad.astype(dt, copy=False)


# NOTE [bicubic grid sampling]
# Bicubic sampling (2-D only) reads the 4 x 4 pixels around the unnormalized point, at offsets
# -1..2 from its floor, weighted per dim by Keys' cubic convolution (``A = -0.75``) of the
# fractional part. Unlike bilinear and nearest, the padding mode is not applied to the point
# but to each tap's integer position (a ``'border'`` tap reads the edge pixel, a
# ``'reflection'`` tap its mirror, a ``'zeros'`` tap outside reads 0), as in PyTorch; so the
# grid gradient is the weights' derivatives times the unnormalizing scale only, with no
# padding factor.

#: PyTorch's bicubic grid-sampling kernel: Keys' cubic convolution with ``A = -0.75``
_CUBIC_A = -0.75


def _cubic_weights(t: np.ndarray) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """The four cubic-convolution weights of the taps at offsets -1, 0, 1, 2 from
    ``floor(c)`` for fractional parts ``t``, and their derivatives in ``t``."""
    dt = t.dtype.type
    a = dt(_CUBIC_A)
    one = dt(1)

    def near(x: np.ndarray) -> np.ndarray:  # |x| <= 1
        return ((a + 2) * x - (a + 3)) * x * x + one

    def far(x: np.ndarray) -> np.ndarray:  # 1 < |x| < 2
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    def d_near(x: np.ndarray) -> np.ndarray:
        return (3 * (a + 2) * x - 2 * (a + 3)) * x

    def d_far(x: np.ndarray) -> np.ndarray:
        return (3 * a * x - 10 * a) * x + 8 * a

    u = one - t
    weights = [far(t + one), near(t), near(u), far(u + one)]
    # the distances to the taps at 1 and 2 fall as t grows
    derivs = [d_far(t + one), d_near(t), -d_near(u), -d_far(u + one)]
    return weights, derivs


def _tap_positions(
    pos: np.ndarray, size: int, padding_mode: int, align_corners: bool
) -> tuple[np.ndarray, np.ndarray]:
    """Integer tap positions (floats) brought inside by the padding mode, as PyTorch's bicubic
    kernel does tap by tap: the clipped int64 index and whether the tap reads the input."""
    if padding_mode == GRID_PADDING["border"]:
        pos = _clip(pos, size)[0]
    elif padding_mode == GRID_PADDING["reflection"]:
        low2, high2 = (0, 2 * (size - 1)) if align_corners else (-1, 2 * size - 1)
        pos = _clip(_reflect(pos, low2, high2)[0], size)[0]
    inside = (pos > -1) & (pos < size)  # False at NaN
    idx = np.clip(np.where(inside, pos, 0), 0, size - 1).astype(np.int64)
    return idx, inside


def _grid_corners(
    input: Tensor,
    grid: Tensor,
    interpolation_mode: int,
    padding_mode: int,
    align_corners: bool,
    with_grad: bool = False,
) -> tuple[list[Any], list[np.ndarray], tuple[int, ...]]:
    """Per corner (tap): flat index (N, L), weight (N, L), in-bounds mask and, ``with_grad``,
    the weight's derivatives in each pixel coordinate (None for nearest); the pixel
    coordinates' derivatives in the grid per spatial dim; the output's spatial shape."""
    n = input.ndim - 2
    spatial = input.shape[2:]
    g = grid._edata
    out_sp = tuple(g.shape[1:-1])
    flat = g.reshape(g.shape[0], math.prod(out_sp), n)
    bicubic = interpolation_mode == INTERPOLATION["bicubic"]
    coords, grads = [], []
    corners: list[Any] = []
    for d in range(n):  # grid's last entry is x, along the last spatial dim
        # bicubic pads each tap, not the sampled point (NOTE [bicubic grid sampling])
        pad = GRID_PADDING["zeros"] if bicubic else padding_mode
        c, gr = _source(flat[..., n - 1 - d], spatial[d], pad, align_corners)
        coords.append(c)
        grads.append(gr)
    if interpolation_mode == INTERPOLATION["nearest"]:
        pos = [np.rint(c).astype(np.int64) for c in coords]
        inside = np.logical_and.reduce([(p >= 0) & (p < spatial[d]) for d, p in enumerate(pos)])
        idx = flat_index([np.clip(p, 0, spatial[d] - 1) for d, p in enumerate(pos)], spatial)
        corners.append((idx, inside.astype(g.dtype), inside, None))
        return corners, grads, out_sp
    lows = [np.floor(c) for c in coords]
    fracs = [c - lw for c, lw in zip(coords, lows, strict=True)]
    if bicubic:
        taps = [range(-1, 3)] * n
        per_dim = [_cubic_weights(f) for f in fracs]
        weights = [w for w, _ in per_dim]
        derivs = [dw for _, dw in per_dim]
        positions = [
            [_tap_positions(lw + k, spatial[d], padding_mode, align_corners) for k in taps[d]]
            for d, lw in enumerate(lows)
        ]
    else:
        taps = [range(2)] * n
        weights = [[1 - f, f] for f in fracs]
        derivs = [[-np.ones_like(f), np.ones_like(f)] for f in fracs]
        positions = []
        for d, lw in enumerate(lows):
            per = []
            for k in taps[d]:
                p = lw.astype(np.int64) + k
                inside = (p >= 0) & (p < spatial[d])
                per.append((np.clip(p, 0, spatial[d] - 1), inside))
            positions.append(per)
    for ks in itertools.product(*(range(len(t)) for t in taps)):
        inside = np.logical_and.reduce([positions[d][k][1] for d, k in enumerate(ks)])
        w = weights[0][ks[0]]
        for d in range(1, n):
            w = w * weights[d][ks[d]]
        idx = flat_index([positions[d][k][0] for d, k in enumerate(ks)], spatial)
        dws = None
        if with_grad:
            dws = []
            for e in range(n):
                dw = derivs[e][ks[e]]
                for d in range(n):
                    if d != e:
                        dw = dw * weights[d][ks[d]]
                dws.append(dw)
        corners.append((idx, np.where(inside, w, 0).astype(g.dtype), inside, dws))
    return corners, grads, out_sp


def _rows(x: np.ndarray) -> np.ndarray:
    """``x`` ``(N, C, *spatial)`` channels-last: ``(N * prod(spatial), C)``, one row a pixel."""
    nb, c = x.shape[:2]
    plane = math.prod(x.shape[2:])
    return np.ascontiguousarray(x.reshape(nb, c, plane).transpose(0, 2, 1)).reshape(nb * plane, c)


def _gather_rows(x: np.ndarray, corners: list[Any]) -> np.ndarray:
    """The weighted sum of the corners' pixels, ``(N, C, L)``: ``x`` is laid out channels-last
    once, so each corner is one ``take`` of whole rows of C values (NOTE [grid sampling])."""
    nb, c = x.shape[:2]
    rows = _rows(x)
    offset = (np.arange(nb) * math.prod(x.shape[2:]))[:, None]
    res = None
    for idx, w, inside, _ in corners:
        part = np.take(rows, (idx + offset).ravel(), axis=0)
        part *= w.reshape(-1, 1)
        if not inside.all():  # a corner outside reads nothing (not 0 * inf)
            part[~inside.ravel()] = 0
        res = part if res is None else res.__iadd__(part)
    assert res is not None
    return np.ascontiguousarray(res.reshape(nb, -1, c).transpose(0, 2, 1))


def _register_grid_sampler(n: int) -> None:
    name = f"grid_sampler_{n}d"

    def forward(
        input: Tensor,
        grid: Tensor,
        interpolation_mode: int,
        padding_mode: int,
        align_corners: bool,
    ) -> Tensor:
        grid_sampler_check(input, grid, n, interpolation_mode)
        x = input._edata
        nb, c = x.shape[:2]
        out_shape = (nb, c, *grid.shape[1:-1])
        if x.size == 0 or grid.numel() == 0:
            return wrap(np.zeros(out_shape, x.dtype))
        corners, _, _ = _grid_corners(input, grid, interpolation_mode, padding_mode, align_corners)
        res = _gather_rows(x, corners).reshape(out_shape)
        if interpolation_mode == INTERPOLATION["bicubic"]:
            # a point with an inf or NaN coordinate has NaN weights: PyTorch's result is NaN
            # there even where every tap falls outside (0 * NaN)
            bad = ~np.isfinite(grid._edata).all(axis=-1)
            if bad.any():
                res[np.broadcast_to(bad[:, None], res.shape)] = np.nan
        return wrap(res)

    def backward(
        grad_output: Tensor,
        input: Tensor,
        grid: Tensor,
        interpolation_mode: int,
        padding_mode: int,
        align_corners: bool,
        output_mask: Sequence[bool],
    ) -> tuple[Any, Any]:
        grid_sampler_check(input, grid, n, interpolation_mode)
        x = input._edata
        nb, c = x.shape[:2]
        check_grad_output(grad_output, (nb, c, *grid.shape[1:-1]), f"{name}_backward")
        if x.size == 0 or grid.numel() == 0:  # an empty batch, channels or output
            gi = wrap(np.zeros(x.shape, x.dtype)) if output_mask[0] else None
            gg = wrap(np.zeros(grid.shape, grid._edata.dtype)) if output_mask[1] else None
            return gi, gg
        go = grad_output._edata.reshape(nb, c, math.prod(grad_output.shape[2:]))
        plane = math.prod(x.shape[2:])
        gi = gg = None
        corners, grads, _ = _grid_corners(
            input, grid, interpolation_mode, padding_mode, align_corners, output_mask[1]
        )
        if output_mask[0]:
            keys, vals = [], []
            base = (np.arange(nb * c) * plane).reshape(nb, c, 1)
            for idx, w, _, _ in corners:
                keys.append((base + idx[:, None, :]).ravel())
                vals.append((go * w[:, None, :]).ravel())
            acc = np.bincount(np.concatenate(keys), np.concatenate(vals), minlength=nb * c * plane)
            gi = wrap(acc.astype(x.dtype, copy=False).reshape(x.shape))
        if output_mask[1]:
            g = grid._edata
            flat_grad = np.zeros((nb, go.shape[2], n), g.dtype)
            if interpolation_mode != INTERPOLATION["nearest"]:
                rows = _rows(x)
                go_rows = go.transpose(0, 2, 1).reshape(-1, c)
                offset = (np.arange(nb) * plane)[:, None]
                for idx, _, inside, dws in corners:
                    vals = np.take(rows, (idx + offset).ravel(), axis=0)
                    dot = np.einsum("rc,rc->r", vals, go_rows).reshape(idx.shape)
                    dot = np.where(inside, dot, 0)  # (N, L)
                    for e in range(n):
                        flat_grad[..., n - 1 - e] += dot * dws[e] * grads[e]
            gg = wrap(flat_grad.reshape(g.shape))
        return gi, gg

    impl(getattr(aten, name).default, CPU, quietly(forward))
    impl(getattr(aten, name + "_backward").default, CPU, quietly(backward))


for _n in (2, 3):
    _register_grid_sampler(_n)


# --------------------------------------------------------------------------- pixel shuffle


@impl(aten.channel_shuffle.default, CPU)
def channel_shuffle(self: Tensor, groups: int) -> Tensor:
    """Channels ``(g, c/g)`` read as ``(c/g, g)``: channel ``i * (c/g) + j`` moves to
    ``j * g + i``."""
    check_channel_shuffle(self.shape, groups)
    x = self._edata
    n, c = x.shape[0], x.shape[1]
    y = x.reshape(n, groups, c // groups, *x.shape[2:]).swapaxes(1, 2)
    return wrap(np.array(y, order="C").reshape(x.shape))  # a copy, as PyTorch's


@impl(aten.pixel_shuffle.default, CPU)
def pixel_shuffle(self: Tensor, upscale_factor: int) -> Tensor:
    shape = pixel_shuffle_shape(self.shape, upscale_factor, "pixel_shuffle", True)
    x, r = self._edata, upscale_factor
    c, h, w = shape[-3], self.shape[-2], self.shape[-1]
    lead = x.shape[:-3]
    k = len(lead)
    y = x.reshape(*lead, c, r, r, h, w).transpose(*range(k), k, k + 3, k + 1, k + 4, k + 2)
    return wrap(np.array(y, order="C").reshape(shape))  # a copy, even for a factor of 1


@impl(aten.pixel_unshuffle.default, CPU)
def pixel_unshuffle(self: Tensor, downscale_factor: int) -> Tensor:
    shape = pixel_shuffle_shape(self.shape, downscale_factor, "pixel_unshuffle", False)
    x, r = self._edata, downscale_factor
    c, h, w = self.shape[-3], shape[-2], shape[-1]
    lead = x.shape[:-3]
    k = len(lead)
    y = x.reshape(*lead, c, h, r, w, r).transpose(*range(k), k, k + 2, k + 4, k + 1, k + 3)
    return wrap(np.array(y, order="C").reshape(shape))  # a copy, even for a factor of 1


# --------------------------------------------------------------------------- im2col / col2im


@impl(aten.im2col.default, CPU)
def im2col(
    self: Tensor,
    kernel_size: Sequence[int],
    dilation: Sequence[int],
    padding: Sequence[int],
    stride: Sequence[int],
) -> Tensor:
    shape = im2col_shape(self.shape, kernel_size, dilation, padding, stride)
    check_floating(self, "im2col")
    k, d, p, s = fold_geometry(kernel_size, dilation, padding, stride, "im2col")
    x = batched(self._edata, 2)
    if x.shape[0] == 0:
        return wrap(np.zeros(shape, x.dtype))
    cols = _columns(x, k, s, p, d, 1)
    return wrap(np.ascontiguousarray(cols.reshape(shape)))


@impl(aten.col2im.default, CPU)
@quietly
def col2im(
    self: Tensor,
    output_size: Sequence[int],
    kernel_size: Sequence[int],
    dilation: Sequence[int],
    padding: Sequence[int],
    stride: Sequence[int],
) -> Tensor:
    shape = col2im_shape(self.shape, output_size, kernel_size, dilation, padding, stride)
    check_floating(self, "col2im")
    k, d, p, s = fold_geometry(kernel_size, dilation, padding, stride, "col2im")
    x = self._edata if self.ndim == 3 else self._edata[None]
    full = (x.shape[0], *shape[-3:])
    if x.shape[0] == 0:
        return wrap(np.zeros(shape, x.dtype))
    blocks = [(full[2 + i] + 2 * p[i] - (d[i] * (k[i] - 1) + 1)) // s[i] + 1 for i in range(2)]
    dcols = x.reshape(x.shape[0], full[1], *k, *blocks)
    res = np.ascontiguousarray(_col2im(dcols, full, k, s, p, d, blocks))
    return wrap(res.reshape(shape))
