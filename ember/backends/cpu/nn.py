"""CPU kernels of the neural-network ops, vectorised in NumPy.

# NOTE [im2col]
Convolution gathers every receptive field with ``sliding_window_view`` (a strided view, no
copy), lays the fields out as columns ``(N, G, C/G * k..., L)`` with one copy, and multiplies
by the weight as ``(G, O/G, C/G * k...)`` in one batched matmul, which lands directly in
``(N, O, L)`` order (contiguous NCHW, no transpose copy). The input gradient scatters the
columns back (col2im) with one strided add per kernel offset, a loop over the kernel's few
positions, never over elements. Pooling uses the same windows.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ember import dtypes
from ember.backends.cpu import torch_draws
from ember.backends.cpu._util import Tensor, as_array, quiet_block, quietly, wrap
from ember.dispatch.keys import DispatchKey
from ember.library import impl
from ember.ops.native.nn import (
    MEAN,
    NONE,
    SUM,
    avg_pool_geometry,
    check_batch_norm,
    check_dropout,
    check_embedding,
    check_embedding_renorm,
    check_indices,
    check_native_batch_norm,
    check_nll,
    check_same_size,
    conv_output_shape,
    expand_param,
    layer_norm_axes,
    loss_dtype,
    pad_shape,
    pool_geometry,
)
from ember.ops.native.nn_geometry import check_convolution_grad
from ember.ops.native.spatial import check_not_bool
from ember.ops.registry import ops
from ember.random import _source

aten = ops.aten
CPU = DispatchKey.CPU
_sw = np.lib.stride_tricks.sliding_window_view
_F32 = np.dtype(np.float32)


def _reduce(loss: np.ndarray, reduction: int) -> np.ndarray:
    """The loss reduced as ``reduction`` says; 16-bit floats accumulate in float32, as
    PyTorch's sum and mean do."""
    dt = loss.dtype
    acc = _F32 if dt in dtypes.HALF_NP else dt
    if reduction == MEAN:
        return as_array(loss.mean(dtype=acc).astype(dt) if loss.size else np.array(np.nan, dt))
    if reduction == SUM:
        return as_array(loss.sum(dtype=acc).astype(dt))
    return loss


# --------------------------------------------------------------------------- convolution


def _windows(xp: np.ndarray, k: Sequence[int], s: Sequence[int], d: Sequence[int]) -> np.ndarray:
    """Strided view ``(N, C, *out, *k)`` of the receptive fields of padded ``xp``."""
    n = len(k)
    span = tuple(d[i] * (k[i] - 1) + 1 for i in range(n))
    w = _sw(xp, span, axis=tuple(range(2, 2 + n)))
    sel = (slice(None), slice(None)) + tuple(slice(None, None, si) for si in s)
    sel += tuple(slice(None, None, di) for di in d)
    return w[sel]


def _pad_spatial(x: np.ndarray, p: Sequence[int], value: float = 0) -> np.ndarray:
    if not any(p):
        return x
    widths = [(0, 0), (0, 0)] + [(pi, pi) for pi in p]
    return np.pad(x, widths, constant_values=value)


def _columns(
    x: np.ndarray,
    k: Sequence[int],
    s: Sequence[int],
    p: Sequence[int],
    d: Sequence[int],
    groups: int,
    out: Sequence[int] | None = None,
) -> np.ndarray:
    """im2col: ``(N, G, C/G * prod(k), L)`` (NOTE [im2col]); ``out`` keeps only the first
    windows along each dim (a transposed convolution's input gradient needs fewer)."""
    win = _windows(_pad_spatial(x, p), k, s, d)  # (N, C, *out, *k)
    n_sp = len(k)
    if out is not None:
        win = win[(slice(None), slice(None), *(slice(0, o) for o in out))]
    nb, c = x.shape[0], x.shape[1]
    sp = win.shape[2 : 2 + n_sp]
    order = (0, 1, *range(2 + n_sp, 2 + 2 * n_sp), *range(2, 2 + n_sp))
    return win.transpose(order).reshape(
        nb, groups, (c // groups) * int(np.prod(k)), int(np.prod(sp))
    )


def _geometry(weight: Any, stride: Any, padding: Any, dilation: Any) -> tuple[Any, ...]:
    n = weight.ndim - 2
    k = tuple(weight.shape[2:])
    s, p, d = (expand_param(v, n, "", "convolution") for v in (stride, padding, dilation))
    return k, s, p, d


# NOTE [transposed convolution]
# A transposed convolution is the input gradient of a plain one: its weight ``(C_in, C_out/G,
# *k)`` multiplies each input position into a column of ``C_out/G * prod(k)`` values (one
# batched matmul), and col2im adds the columns into the (padded, then cropped) output. Its
# input gradient is therefore a plain convolution of the output gradient with the same weight
# (im2col + matmul), and its weight gradient pairs the input with the output gradient's
# columns. ``output_padding`` only lengthens the output: the extra positions receive nothing.


def _transposed(x: np.ndarray, w: np.ndarray, groups: int) -> np.ndarray:
    """Columns ``(N, C_out, *k, *in)`` of a transposed convolution (NOTE [transposed
    convolution])."""
    nb, c_in = x.shape[0], x.shape[1]
    sp = x.shape[2:]
    wg = w.reshape(groups, c_in // groups, math.prod(w.shape[1:]))  # (G, C_in/G, C_out/G * K)
    xg = x.reshape(nb, groups, c_in // groups, math.prod(sp))  # (N, G, C_in/G, L)
    cols = np.matmul(wg.transpose(0, 2, 1), xg)  # (N, G, C_out/G * K, L)
    return cols.reshape(nb, w.shape[1] * groups, *w.shape[2:], *sp)


@impl(aten.convolution.default, CPU)
@quietly
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
) -> Tensor:
    shape = conv_output_shape(
        input, weight, bias, stride, padding, dilation, transposed, groups, output_padding
    )
    k, s, p, d = _geometry(weight, stride, padding, dilation)
    x, w = input._edata, weight._edata
    if transposed:
        cols = _transposed(x, w, groups)
        out = _col2im(cols, shape, k, s, p, d, x.shape[2:])
        out = np.ascontiguousarray(out) if any(p) else out
    else:
        cols = _columns(x, k, s, p, d, groups)
        o = w.shape[0]
        out = np.matmul(w.reshape(groups, o // groups, math.prod(w.shape[1:])), cols)
        out = out.reshape(shape)
    if bias is not None:
        out += bias._edata.reshape((shape[1],) + (1,) * len(k))
    return wrap(_in_dtype_of(out, x))


def _in_dtype_of(out: np.ndarray, like: np.ndarray) -> np.ndarray:
    """``out`` in ``like``'s dtype: NumPy's matmul of bfloat16 arrays (ml_dtypes) returns
    float32, which is rounded back once, after the bias, as PyTorch accumulates in float."""
    return out if out.dtype == like.dtype else out.astype(like.dtype)


def _col2im(
    dcols: np.ndarray,
    xshape: Sequence[int],
    k: Sequence[int],
    s: Sequence[int],
    p: Sequence[int],
    d: Sequence[int],
    out: Sequence[int],
) -> np.ndarray:
    """Scatter-add columns ``(N, C, *k, *out)`` back into an array of shape ``xshape``."""
    n_sp = len(k)
    padded = [xshape[2 + i] + 2 * p[i] for i in range(n_sp)]
    res = np.zeros((xshape[0], xshape[1], *padded), dcols.dtype)
    for off in itertools.product(*(range(ki) for ki in k)):
        sel = tuple(
            slice(off[i] * d[i], off[i] * d[i] + s[i] * (out[i] - 1) + 1, s[i]) for i in range(n_sp)
        )
        res[(slice(None), slice(None), *sel)] += dcols[(slice(None), slice(None), *off)]
    crop = tuple(slice(p[i], p[i] + xshape[2 + i]) for i in range(n_sp))
    return res[(slice(None), slice(None), *crop)] if any(p) else res


def _weight_grad(a: np.ndarray, cols: np.ndarray, groups: int) -> np.ndarray:
    """``sum_n a[n] @ cols[n].T`` per group: ``a`` ``(N, G, A, L)``, ``cols`` ``(N, G, B, L)``
    → ``(G, A, B)``. BLAS reads the transposed columns in place (no copy of the big im2col
    matrix); the per-sample products are summed in one go while they fit in a few million
    elements, else accumulated sample by sample (a loop over the batch, each step a GEMM)."""
    nb, g, rows, _ = a.shape
    per_sample = g * rows * cols.shape[2]
    if nb * per_sample <= 1 << 22:
        return np.matmul(a, cols.transpose(0, 1, 3, 2)).sum(axis=0)
    acc = np.matmul(a[0], cols[0].transpose(0, 2, 1))
    for n in range(1, nb):
        acc += np.matmul(a[n], cols[n].transpose(0, 2, 1))
    return acc


@impl(aten.convolution_backward.default, CPU)
@quietly
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
) -> tuple[Any, Any, Any]:
    check_convolution_grad(
        grad_output,
        conv_output_shape(
            input, weight, None, stride, padding, dilation, transposed, groups, output_padding
        ),
    )
    k, s, p, d = _geometry(weight, stride, padding, dilation)
    go, x, w = grad_output._edata, input._edata, weight._edata
    nb = go.shape[0]
    gi = gw = gb = None
    if transposed:  # NOTE [transposed convolution]
        in_sp = x.shape[2:]
        c_in = x.shape[1]
        if output_mask[0] or output_mask[1]:
            gcols = _columns(go, k, s, p, d, groups, in_sp)  # (N, G, C_out/G * K, L_in)
        if output_mask[0]:
            wg = w.reshape(groups, c_in // groups, math.prod(w.shape[1:]))
            gi = wrap(_in_dtype_of(np.matmul(wg, gcols).reshape(x.shape), x))
        if output_mask[1]:
            xg = x.reshape(nb, groups, c_in // groups, math.prod(in_sp))
            gw = wrap(_in_dtype_of(_weight_grad(xg, gcols, groups).reshape(w.shape), w))
    else:
        o = go.shape[1]
        out_sp = go.shape[2:]
        g3 = go.reshape(nb, groups, o // groups, math.prod(out_sp))  # (N, G, O/G, L)
        if output_mask[0]:
            wg = w.reshape(groups, o // groups, math.prod(w.shape[1:]))  # (G, O/G, K)
            dcols = np.matmul(wg.transpose(0, 2, 1), g3)  # (N, G, K, L)
            dcols = dcols.reshape(nb, x.shape[1], *k, *out_sp)
            gi = _col2im(dcols, x.shape, k, s, p, d, out_sp)
            gi = wrap(_in_dtype_of(np.ascontiguousarray(gi), x))
        if output_mask[1]:
            cols = _columns(x, k, s, p, d, groups)  # (N, G, K, L)
            gw = wrap(_in_dtype_of(_weight_grad(g3, cols, groups).reshape(w.shape), w))
    if output_mask[2]:
        gb = wrap(as_array(go.sum(axis=(0, *range(2, go.ndim)))))
    return gi, gw, gb


# --------------------------------------------------------------------------- pooling
# The pooling kernels below serve 2-d and 3-d pooling alike (``n`` spatial dims); the 1-d ops
# are compositions of the 2-d ones, as in PyTorch.


def batched(x: np.ndarray, n: int) -> np.ndarray:
    """``x`` with a batch dim: ``(C, *spatial)`` becomes ``(1, C, *spatial)``."""
    return x if x.ndim == n + 2 else x[None]


def _overhang(shape: Sequence[int], k: Any, s: Any, p: Any, d: Any, out: Any) -> list[int]:
    """How far the last (ceil_mode) window runs past the padded input, per spatial dim."""
    return [
        max(0, (out[i] - 1) * s[i] + d[i] * (k[i] - 1) + 1 - (shape[2 + i] + 2 * p[i]))
        for i in range(len(k))
    ]


def _pool_windows(x: np.ndarray, k: Any, s: Any, p: Any, d: Any, out: Any, fill: Any) -> np.ndarray:
    """Windows ``(N, C, *out, *k)`` over ``x`` padded with ``fill`` (right-padded further
    for ceil_mode windows that run past the end)."""
    extra = _overhang(x.shape, k, s, p, d, out)
    if any(p) or any(extra):
        widths = [(0, 0), (0, 0)] + [(p[i], p[i] + extra[i]) for i in range(len(k))]
        x = np.pad(x, widths, constant_values=fill)
    return _windows(x, k, s, d)[(slice(None), slice(None), *(slice(0, o) for o in out))]


def _lowest(dt: np.dtype[Any]) -> Any:
    return -np.inf if _floating(dt) else np.iinfo(dt).min


def _floating(dt: np.dtype[Any]) -> bool:
    """NumPy's floating dtypes and ml_dtypes' bfloat16 (kind "V")."""
    return dt.kind in "fV"


def argmax_last(flat: np.ndarray) -> np.ndarray:
    """Argmax over the last axis as PyTorch's pooling scans pick it: the first maximum, or the
    last NaN when there is one."""
    arg = flat.argmax(axis=-1)
    if _floating(flat.dtype):
        nan = np.isnan(flat)
        if nan.any():  # PyTorch's scan takes every NaN it meets: the window's last one wins
            last = flat.shape[-1] - 1 - nan[..., ::-1].argmax(axis=-1)
            arg = np.where(nan.any(axis=-1), last, arg)
    return arg


def flat_index(coords: Sequence[np.ndarray], sizes: Sequence[int]) -> np.ndarray:
    """Row-major flat index over ``sizes`` of broadcastable per-dim ``coords``."""
    idx = coords[0]
    for c, size in zip(coords[1:], sizes[1:], strict=True):
        idx = idx * size + c
    return idx


def max_pool_nd(
    self: Tensor, k: Any, s: Any, p: Any, d: Any, out: Any, n: int
) -> tuple[Tensor, Tensor]:
    """Max pooling over the last ``n`` dims: values and flat spatial argmax indices."""
    x = batched(self._edata, n)
    win = _pool_windows(x, k, s, p, d, out, _lowest(x.dtype))
    flat = win.reshape(*win.shape[: 2 + n], math.prod(win.shape[2 + n :]))
    arg = argmax_last(flat)
    vals = np.take_along_axis(flat, arg[..., None], axis=-1)[..., 0]
    offs = np.unravel_index(arg, tuple(k))
    coords = []
    for i in range(n):
        shape = [1] * n
        shape[i] = out[i]
        start = (np.arange(out[i]) * s[i] - p[i]).reshape(shape)
        coords.append(start + offs[i] * d[i])
    idx = flat_index(coords, x.shape[2:])
    if self.ndim == n + 1:
        vals, idx = vals[0], idx[0]
    return wrap(np.ascontiguousarray(vals)), wrap(idx.astype(np.int64))


def scatter_indices(grad_output: Tensor, self: Tensor, indices: Tensor, n: int) -> Tensor:
    """Add ``grad_output`` into an input-shaped zero array at flat spatial ``indices`` (the
    backward of every max pooling op), one ``bincount``; zeros for an empty ``grad_output``."""
    x = self._edata
    if grad_output.numel() == 0:
        return wrap(np.zeros(self.shape, self.dtype.np))
    plane = int(np.prod(x.shape[-n:]))
    go = grad_output._edata
    lead = int(np.prod(x.shape[:-n]))
    per_plane = math.prod(indices.shape[indices.ndim - n :])
    flat_idx = indices._edata.reshape(lead, per_plane) + (np.arange(lead) * plane)[:, None]
    res = np.bincount(flat_idx.ravel(), weights=go.reshape(-1), minlength=lead * plane)
    return wrap(res.astype(x.dtype, copy=False).reshape(x.shape))


def _avg_divisor(size: int, k: int, s: int, p: int, o: int, include_pad: bool) -> np.ndarray:
    start = np.arange(o) * s - p
    end = np.minimum(start + k, size + p)
    pool = end - start
    cs, ce = np.maximum(start, 0), np.minimum(end, size)
    return pool if include_pad else ce - cs


def _avg_div(
    shape: Sequence[int],
    k: Any,
    s: Any,
    p: Any,
    out: Any,
    include_pad: bool,
    divisor_override: int | None,
) -> Any:
    """The divisor of each output position (broadcastable over ``out``)."""
    if divisor_override is not None:  # nonzero: checked by avg_pool_geometry
        return divisor_override
    n = len(k)
    div: Any = 1
    for i in range(n):
        di = _avg_divisor(shape[-n + i], k[i], s[i], p[i], out[i], include_pad)
        div = div * di.reshape([out[i] if j == i else 1 for j in range(n)])
    return div


def avg_pool_nd(
    self: Tensor,
    k: Any,
    s: Any,
    p: Any,
    out: Any,
    count_include_pad: bool,
    divisor_override: int | None,
    n: int,
) -> Tensor:
    """Average pooling over the last ``n`` dims."""
    x = batched(self._edata, n)
    win = _pool_windows(x, k, s, p, (1,) * n, out, 0)
    total = win.sum(axis=tuple(range(-n, 0)), dtype=x.dtype)
    div = _avg_div(x.shape, k, s, p, out, count_include_pad, divisor_override)
    if x.dtype.kind in "iu":  # PyTorch divides integers truncating toward zero
        res = np.trunc(total / div).astype(x.dtype)
    else:
        res = (total / np.asarray(div, x.dtype)).astype(x.dtype, copy=False)
    return wrap(res[0] if self.ndim == n + 1 else res)


def avg_pool_backward_nd(
    grad_output: Tensor,
    self: Tensor,
    k: Any,
    s: Any,
    p: Any,
    out: Any,
    count_include_pad: bool,
    divisor_override: int | None,
    n: int,
) -> Tensor:
    """The input gradient of ``avg_pool_nd``: each window's share added back, one strided add
    per kernel offset."""
    x = batched(self._edata, n)
    go = batched(grad_output._edata, n)
    div = _avg_div(x.shape, k, s, p, out, count_include_pad, divisor_override)
    g = (go / np.asarray(div, go.dtype)).astype(x.dtype, copy=False)
    extra = _overhang(x.shape, k, s, p, (1,) * n, out)
    padded = (*x.shape[:2], *(x.shape[2 + i] + 2 * p[i] + extra[i] for i in range(n)))
    res = np.zeros(padded, x.dtype)
    for off in itertools.product(*(range(ki) for ki in k)):
        sel = tuple(slice(off[i], off[i] + s[i] * (out[i] - 1) + 1, s[i]) for i in range(n))
        res[(slice(None), slice(None), *sel)] += g
    crop = tuple(slice(p[i], p[i] + x.shape[2 + i]) for i in range(n))
    res = np.ascontiguousarray(res[(slice(None), slice(None), *crop)])
    return wrap(res[0] if self.ndim == n + 1 else res)


def register_pooling(n: int) -> None:
    """The CPU kernels of ``max_pool{n}d_with_indices``, ``avg_pool{n}d`` and their backwards
    (``n`` 2 or 3; the 3-d average pool refuses bool input, as PyTorch's)."""
    mx, avg = f"max_pool{n}d", f"avg_pool{n}d"

    def max_pool_with_indices(
        self: Tensor,
        kernel_size: Sequence[int],
        stride: Sequence[int] = (),
        padding: Sequence[int] = 0,  # type: ignore[assignment]
        dilation: Sequence[int] = 1,  # type: ignore[assignment]
        ceil_mode: bool = False,
    ) -> tuple[Tensor, Tensor]:
        k, s, p, d, out = pool_geometry(
            self.shape, kernel_size, stride, padding, dilation, ceil_mode, mx, n
        )
        return max_pool_nd(self, k, s, p, d, out, n)

    def max_pool_with_indices_backward(
        grad_output: Tensor,
        self: Tensor,
        kernel_size: Sequence[int],
        stride: Sequence[int],
        padding: Sequence[int],
        dilation: Sequence[int],
        ceil_mode: bool,
        indices: Tensor,
    ) -> Tensor:
        pool_geometry(
            self.shape, kernel_size, stride, padding, dilation, ceil_mode, mx + "_backward", n
        )
        return scatter_indices(grad_output, self, indices, n)

    @quietly
    def avg_pool(
        self: Tensor,
        kernel_size: Sequence[int],
        stride: Sequence[int] = (),
        padding: Sequence[int] = 0,  # type: ignore[assignment]
        ceil_mode: bool = False,
        count_include_pad: bool = True,
        divisor_override: int | None = None,
    ) -> Tensor:
        if n == 3:
            check_not_bool(self, avg)
        k, s, p, _, out = avg_pool_geometry(
            self.shape, kernel_size, stride, padding, ceil_mode, divisor_override, avg, n
        )
        return avg_pool_nd(self, k, s, p, out, count_include_pad, divisor_override, n)

    @quietly
    def avg_pool_backward(
        grad_output: Tensor,
        self: Tensor,
        kernel_size: Sequence[int],
        stride: Sequence[int],
        padding: Sequence[int],
        ceil_mode: bool,
        count_include_pad: bool,
        divisor_override: int | None,
    ) -> Tensor:
        op = avg + "_backward"
        k, s, p, _, out = avg_pool_geometry(
            self.shape, kernel_size, stride, padding, ceil_mode, divisor_override, op, n
        )
        return avg_pool_backward_nd(
            grad_output, self, k, s, p, out, count_include_pad, divisor_override, n
        )

    for name, kernel in (
        (mx + "_with_indices", max_pool_with_indices),
        (mx + "_with_indices_backward", max_pool_with_indices_backward),
        (avg, avg_pool),
        (avg + "_backward", avg_pool_backward),
    ):
        kernel.__name__ = kernel.__qualname__ = name
        impl(getattr(aten, name).default, CPU)(kernel)


register_pooling(2)


# --------------------------------------------------------------------------- normalization


@impl(aten.native_layer_norm.default, CPU)
def native_layer_norm(
    input: Tensor,
    normalized_shape: Sequence[int],
    weight: Tensor | None,
    bias: Tensor | None,
    eps: float,
) -> tuple[Tensor, Tensor, Tensor]:
    axis = layer_norm_axes(input, normalized_shape, weight, bias)
    x = input._edata
    dt = x.dtype
    if dt in dtypes.HALF_NP:  # computed in float32 and rounded once, as PyTorch's
        x = x.astype(_F32)
    axes = tuple(range(axis, x.ndim))
    with quiet_block():
        mean = x.mean(axis=axes, keepdims=True, dtype=x.dtype)
        xc = x - mean
        var = np.mean(xc * xc, axis=axes, keepdims=True, dtype=x.dtype)
        rstd = (1.0 / np.sqrt(var + np.asarray(eps, x.dtype))).astype(x.dtype, copy=False)
        out = xc * rstd
        if weight is not None:
            out *= weight._edata
        if bias is not None:
            out += bias._edata
    if dt is not x.dtype:
        out, mean, rstd = out.astype(dt), mean.astype(dt), rstd.astype(dt)
    # contiguous, as PyTorch's and the Meta rule's (NumPy keeps a transposed input's order,
    # so a later .view() failed; found by the random programs)
    c = np.ascontiguousarray
    return wrap(c(out)), wrap(c(as_array(mean))), wrap(c(as_array(rstd)))


@impl(aten.native_layer_norm_backward.default, CPU)
def native_layer_norm_backward(
    grad_out: Tensor,
    input: Tensor,
    normalized_shape: Sequence[int],
    mean: Tensor,
    rstd: Tensor,
    weight: Tensor | None,
    bias: Tensor | None,
    output_mask: Sequence[bool],
) -> tuple[Any, Any, Any]:
    axis = layer_norm_axes(input, normalized_shape, weight, bias)
    g, x = grad_out._edata, input._edata
    axes = tuple(range(axis, x.ndim))
    lead = tuple(range(axis))
    r = rstd._edata.reshape(x.shape[:axis] + (1,) * len(axes))
    xhat = (x - mean._edata.reshape(r.shape)) * r
    gi = gw = gb = None
    if output_mask[0]:
        gx = g * weight._edata if weight is not None else g
        m1 = gx.mean(axis=axes, keepdims=True)
        m2 = (gx * xhat).mean(axis=axes, keepdims=True)
        gi = wrap(np.ascontiguousarray((r * (gx - m1 - xhat * m2)).astype(x.dtype, copy=False)))
    if output_mask[1] and weight is not None:
        gw = wrap(as_array((g * xhat).sum(axis=lead)).astype(x.dtype, copy=False))
    if output_mask[2] and bias is not None:
        gb = wrap(as_array(g.sum(axis=lead)).astype(x.dtype, copy=False))
    return gi, gw, gb


def _channel(t: np.ndarray, ndim: int) -> np.ndarray:
    return t.reshape((1, -1) + (1,) * (ndim - 2))


@impl(aten.native_batch_norm.default, CPU)
@quietly
def native_batch_norm(
    input: Tensor,
    weight: Tensor | None,
    bias: Tensor | None,
    running_mean: Tensor | None,
    running_var: Tensor | None,
    training: bool,
    momentum: float,
    eps: float,
) -> tuple[Tensor, Tensor, Tensor]:
    check_native_batch_norm(input, weight, bias, running_mean, running_var, training)
    x = input._edata
    axes = (0, *range(2, x.ndim))
    dt = x.dtype
    if training:
        # statistics accumulate in float64 and round once, as PyTorch's CPU kernels do
        mean64 = x.mean(axis=axes, dtype=np.float64)
        c64 = x - _channel(mean64, x.ndim)
        var64 = np.mean(c64 * c64, axis=axes)
        mean = mean64.astype(dt)
        var = var64.astype(dt)
        invstd = (1.0 / np.sqrt(var64 + eps)).astype(dt, copy=False)
        xc = x - _channel(mean, x.ndim)
        n = math.prod(x.shape[a] for a in axes)  # per channel (none: no channels)
        if running_mean is not None:
            rm = running_mean._edata
            rm *= 1 - momentum
            rm += (momentum * mean).astype(rm.dtype, copy=False)
            running_mean._bump_version()
        if running_var is not None:
            rv = running_var._edata
            rv *= 1 - momentum
            rv += (momentum * var * (n / (n - 1) if n > 1 else np.inf)).astype(rv.dtype, copy=False)
            running_var._bump_version()
        out = xc * _channel(invstd, x.ndim)
        save_mean, save_invstd = mean, invstd
    else:
        assert running_mean is not None and running_var is not None  # check_native_batch_norm
        invstd = (1.0 / np.sqrt(running_var._edata + eps)).astype(dt, copy=False)
        out = (x - _channel(running_mean._edata.astype(dt, copy=False), x.ndim)) * _channel(
            invstd, x.ndim
        )
        save_mean, save_invstd = np.empty((0,), dt), np.empty((0,), dt)
    if weight is not None:
        out *= _channel(weight._edata, x.ndim)
    if bias is not None:
        out += _channel(bias._edata, x.ndim)
    return (
        wrap(out.astype(dt, copy=False)),
        wrap(save_mean),
        wrap(save_invstd.copy() if not training else save_invstd),
    )


@impl(aten.native_batch_norm_backward.default, CPU)
@quietly
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
) -> tuple[Any, Any, Any]:
    check_batch_norm(input, (weight, running_mean, running_var), False)
    g, x = grad_out._edata, input._edata
    dt = x.dtype
    axes = (0, *range(2, x.ndim))
    if train:
        assert save_mean is not None and save_invstd is not None
        mean, invstd = save_mean._edata, save_invstd._edata
    else:
        assert running_mean is not None and running_var is not None
        mean = running_mean._edata.astype(dt, copy=False)
        invstd = (1.0 / np.sqrt(running_var._edata + eps)).astype(dt, copy=False)
    inv = _channel(invstd, x.ndim)
    xhat = (x - _channel(mean, x.ndim)) * inv
    w = _channel(weight._edata, x.ndim) if weight is not None else None
    gi = gw = gb = None
    if output_mask[0]:
        gx = g * w if w is not None else g
        if train:
            m1 = gx.mean(axis=axes, keepdims=True, dtype=np.float64).astype(dt)
            m2 = (gx * xhat).mean(axis=axes, keepdims=True, dtype=np.float64).astype(dt)
            gi = wrap((inv * (gx - m1 - xhat * m2)).astype(dt, copy=False))
        else:
            gi = wrap((gx * inv).astype(dt, copy=False))
    if output_mask[1]:
        gw = wrap(as_array((g * xhat).sum(axis=axes)).astype(dt, copy=False))
    if output_mask[2]:
        gb = wrap(as_array(g.sum(axis=axes)).astype(dt, copy=False))
    return gi, gw, gb


# --------------------------------------------------------------------------- embedding


@impl(aten.embedding.default, CPU)
def embedding(
    weight: Tensor,
    indices: Tensor,
    padding_idx: int = -1,
    scale_grad_by_freq: bool = False,
    sparse: bool = False,
) -> Tensor:
    check_embedding(weight, indices)
    idx = indices._edata
    n = weight.shape[0]
    if idx.size and (idx.min() < 0 or idx.max() >= n):
        raise IndexError(f"embedding: index out of range in self (indices must be in [0, {n}))")
    return wrap(np.take(weight._edata, idx, axis=0))


def row_norms(rows: np.ndarray, p: float) -> np.ndarray:
    """The ``p``-norm of each row, as ``Tensor.norm(p)`` takes it: ``p = 0`` counts the
    non-zeros, ``±inf`` is the largest / smallest magnitude, other ``p`` (negative ones too)
    is ``sum(|x|**p) ** (1 / p)``."""
    a = np.abs(rows)
    if p == 0:
        return np.count_nonzero(a, axis=1).astype(rows.dtype)
    if math.isinf(p):
        return a.max(axis=1) if p > 0 else a.min(axis=1)
    if p == 1:
        return a.sum(axis=1)
    if p == 2:
        return np.sqrt((a * a).sum(axis=1))
    return (a ** rows.dtype.type(p)).sum(axis=1) ** rows.dtype.type(1 / p)  # 0 ** -1 is inf


@impl(aten.embedding_renorm.default, CPU)
@quietly  # inf and NaN rows: their norms and scales are inf and NaN, as in PyTorch
def embedding_renorm(self: Tensor, indices: Tensor, max_norm: float, norm_type: float) -> Tensor:
    """A copy of ``self`` whose rows named by ``indices`` (each once, however often it
    appears) are scaled by ``max_norm / (norm + 1e-7)`` where their ``norm_type``-norm
    exceeds ``max_norm``; ``embedding_renorm_`` writes it into ``self``."""
    check_embedding_renorm(self, indices)
    n = self.shape[0]
    idx = indices._edata.reshape(-1)
    if idx.size and (idx.min() < -n or idx.max() >= n):
        bad = int(idx.min()) if idx.min() < -n else int(idx.max())
        raise IndexError(
            f"embedding_renorm_: index {bad} is out of range for a weight of shape "
            f"{list(self.shape)} (indices must be in [-{n}, {n}))"
        )
    out = self._edata.copy()
    rows = np.unique(idx % n) if n else idx
    if rows.size:
        picked = out[rows]
        norms = row_norms(picked, norm_type).astype(np.float64)
        big = norms > max_norm
        # the scale is a double, applied in the weight's dtype, as PyTorch's row *= scale
        scale = (max_norm / (norms[big] + 1e-7)).astype(out.dtype)
        out[rows[big]] = picked[big] * scale[:, None]
    return wrap(out)


@impl(aten.embedding_dense_backward.default, CPU)
def embedding_dense_backward(
    grad_output: Tensor,
    indices: Tensor,
    num_weights: int,
    padding_idx: int,
    scale_grad_by_freq: bool,
) -> Tensor:
    check_indices(indices, "embedding_dense_backward")
    g = grad_output._edata
    idx = indices._edata.reshape(-1)
    dim = g.shape[-1] if g.ndim else 1
    rows = g.reshape(idx.size, dim)  # not -1: an empty index has no rows to infer it from
    if scale_grad_by_freq:
        counts = np.bincount(idx, minlength=num_weights)
        rows = rows / counts[idx][:, None].astype(g.dtype)
    if padding_idx >= 0:
        keep = idx != padding_idx
        idx, rows = idx[keep], rows[keep]
    res = np.zeros((num_weights, dim), g.dtype)
    np.add.at(res, idx, rows)
    return wrap(res)


# --------------------------------------------------------------------------- losses


def _nll_pick(
    self: Tensor, target: Tensor, weight: Tensor | None, ignore_index: int
) -> tuple[Any, ...]:
    """Per-sample (row index, class, weight) (0 where ignored), and the kept mask."""
    x = self._edata.reshape(-1, self.shape[-1]) if self.ndim else self._edata
    t = target._edata.reshape(-1).astype(np.int64, copy=False)
    c = x.shape[1]
    keep = t != ignore_index
    bad = keep & ((t < 0) | (t >= c))
    if bad.any():
        raise IndexError(
            f"nll_loss_forward: Target {int(t[bad][0])} is out of bounds (input has {c} classes)"
        )
    safe = np.where(keep, t, 0)
    w = weight._edata[safe] if weight is not None else np.ones(t.shape, x.dtype)
    w = np.where(keep, w, 0).astype(x.dtype, copy=False)
    return x, safe, w, keep


_I64 = np.dtype(np.int64)
_asarray = np.asarray
_add_reduce, _max_reduce = np.add.reduce, np.maximum.reduce


_U64 = np.dtype(np.uint64)
_ROWS: dict[int, np.ndarray] = {}  # np.arange(n) per batch size: the row of each target


def _rows(n: int) -> np.ndarray:
    r = _ROWS.get(n)
    if r is None:
        if len(_ROWS) > 64:
            _ROWS.clear()
        r = _ROWS[n] = np.arange(n)
        r.flags.writeable = False
    return r


def _plain_targets(self: Tensor, target: Tensor, weight: Any, ignore_index: int) -> Any:
    """The common classification batch: float (n, c) input, int64 (n,) targets all in
    range and none ignored, no class weights. Returns (x, rows, t), or None for the general
    path (which checks and raises)."""
    x, t = self._edata, target._edata
    if weight is not None or x.ndim != 2 or t.ndim != 1 or t.dtype is not _I64:
        return None
    n, c = x.shape
    if t.shape[0] != n or n == 0 or x.dtype.kind != "f":
        return None
    if _max_reduce(t.view(_U64)) >= c:  # one pass: a negative target is a huge unsigned one
        return None
    if 0 <= ignore_index < c and bool((t == ignore_index).any()):
        return None
    return x, _rows(n), t


@impl(aten.nll_loss_forward.default, CPU)
def nll_loss_forward(
    self: Tensor, target: Tensor, weight: Tensor | None, reduction: int, ignore_index: int
) -> tuple[Tensor, Tensor]:
    plain = _plain_targets(self, target, weight, ignore_index) if reduction != NONE else None
    if plain is not None:  # every sample counts once: total_weight is the batch size
        x, rows, t = plain
        n = x.shape[0]
        s = -_add_reduce(x[rows, t])  # a NumPy scalar of x's dtype
        total = _asarray(n, x.dtype)
        return wrap(_asarray(s / total if reduction == MEAN else s)), wrap(total)
    check_nll(self, target, weight, reduction)
    x, safe, w, keep = _nll_pick(self, target, weight, ignore_index)
    with quiet_block():  # an ignored sample's input is never read, even when it is NaN
        picked = np.where(keep, -x[np.arange(x.shape[0]), safe] * w, 0).astype(x.dtype)
    dt = x.dtype
    if reduction == NONE:
        out = picked.reshape(target.shape) if self.ndim == 2 else picked.reshape(())
        total = np.zeros((), dt) if self.ndim == 2 else as_array(w.sum(dtype=dt))  # as PyTorch
        return wrap(np.array(out, order="C")), wrap(total)
    total = as_array(w.sum(dtype=dt))
    s = as_array(picked.sum(dtype=dt))
    if reduction == MEAN:
        with quiet_block():
            s = as_array(s / total)
    return wrap(s), wrap(total)


@impl(aten.nll_loss_backward.default, CPU)
def nll_loss_backward(
    grad_output: Tensor,
    self: Tensor,
    target: Tensor,
    weight: Tensor | None,
    reduction: int,
    ignore_index: int,
    total_weight: Tensor,
) -> Tensor:
    plain = _plain_targets(self, target, weight, ignore_index) if reduction != NONE else None
    if plain is not None and grad_output._edata.ndim == 0:
        x, rows, t = plain
        go = grad_output._edata
        coef = -go if go.dtype is x.dtype else -go.astype(x.dtype)
        if reduction == MEAN:  # total_weight is n here, never 0
            coef = coef / total_weight._edata.astype(x.dtype, copy=False)
        res = np.zeros(x.shape, x.dtype)
        res[rows, t] = coef
        return wrap(res)
    check_nll(self, target, weight, reduction)
    x, safe, w, keep = _nll_pick(self, target, weight, ignore_index)
    go = grad_output._edata.reshape(-1) if reduction == NONE else grad_output._edata
    coef = -w * go
    if reduction == MEAN:
        with quiet_block():
            coef = coef / total_weight._edata
    res = np.zeros(x.shape, x.dtype)
    res[np.arange(x.shape[0]), safe] = np.where(keep, coef, 0)  # ignored targets get none
    return wrap(res.reshape(self.shape))


@impl(aten.mse_loss.default, CPU)
def mse_loss(self: Tensor, target: Tensor, reduction: int = MEAN) -> Tensor:
    dt = loss_dtype(self, target, "mse").np
    diff = self._edata.astype(dt, copy=False) - target._edata.astype(dt, copy=False)
    return wrap(_reduce(diff * diff, reduction))


@impl(aten.binary_cross_entropy_with_logits.default, CPU)
def binary_cross_entropy_with_logits(
    self: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    pos_weight: Tensor | None = None,
    reduction: int = MEAN,
) -> Tensor:
    check_same_size(self, target, "binary_cross_entropy_with_logits")
    x, t = self._edata, target._edata
    with quiet_block():
        sp = np.logaddexp(0, -x).astype(x.dtype, copy=False)  # softplus(-x) = -log_sigmoid(x)
        if pos_weight is not None:
            loss = (1 - t) * x + (1 + (pos_weight._edata - 1) * t) * sp
        else:
            loss = (1 - t) * x + sp
        if weight is not None:
            loss = loss * weight._edata
    return wrap(_reduce(np.asarray(loss, x.dtype), reduction))


@impl(aten.constant_pad_nd.default, CPU)
def constant_pad_nd(self: Tensor, pad: Sequence[int], value: Any = 0) -> Tensor:
    shape = pad_shape(self.shape, pad)
    x = self._edata
    res = np.full(shape, value, x.dtype)
    src, dst = [slice(None)] * x.ndim, [slice(None)] * x.ndim
    for i in range(len(pad) // 2):
        d = x.ndim - 1 - i
        lo, hi = pad[2 * i], pad[2 * i + 1]
        src[d] = slice(max(-lo, 0), x.shape[d] - max(-hi, 0))
        dst[d] = slice(max(lo, 0), shape[d] - max(hi, 0))
    if all(s > 0 for s in shape):
        res[tuple(dst)] = x[tuple(src)]
    return wrap(res)


# --------------------------------------------------------------------------- dropout


@impl(aten.native_dropout.default, CPU)
def native_dropout(input: Tensor, p: float, train: bool | None) -> tuple[Tensor, Tensor]:
    check_dropout(p, train)
    x = input._edata
    if train is False:
        return wrap(x.copy()), wrap(np.ones(x.shape, np.bool_))
    # PyTorch's CPU native_dropout: a Bernoulli(1 - p) mask (NOTE [torch draws])
    mask = torch_draws.bernoulli_scalar(_source(None), x.size, 1.0 - p).reshape(x.shape)
    scale = 0.0 if p == 1 else 1.0 / (1.0 - p)
    with quiet_block():  # a dropped inf: inf * 0 is nan, silently (as PyTorch's)
        out = (x * mask * np.asarray(scale, x.dtype)).astype(x.dtype, copy=False)
    return wrap(out), wrap(mask)


@impl(aten.native_dropout_backward.default, CPU)
def native_dropout_backward(grad_output: Tensor, mask: Tensor, scale: float) -> Tensor:
    g = grad_output._edata
    with quiet_block():  # a dropped inf: inf * 0 is nan, silently (as PyTorch's)
        return wrap((g * mask._edata * np.asarray(scale, g.dtype)).astype(g.dtype, copy=False))
