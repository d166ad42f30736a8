"""CPU kernels of the fft ops: ``numpy.fft`` (pocketfft), which keeps float32 and complex64 in
single precision as PyTorch does. ``normalization`` (NOTE [fft decompositions] in
``ember/ops/native/fft.py``) maps onto NumPy's ``norm``: 0 scales nothing, 1 is "ortho", 2
divides by the transform's size."""

from __future__ import annotations

import math
from typing import Any, Literal

import numpy as np

from ember._tensor import Tensor, wrap
from ember.backends.cpu._util import quietly
from ember.backends.cpu.copies import empty_strided
from ember.dispatch.keys import DispatchKey
from ember.library import impl
from ember.ops.native.fft import c2c_plan, c2r_plan, fftfreq_plan, r2c_plan
from ember.ops.registry import ops

aten = ops.aten
CPU = DispatchKey.CPU

#: (normalization, forward) -> NumPy's norm for the transform's direction
_NORM: dict[tuple[int, bool], Literal["backward", "ortho", "forward"]] = {
    (0, True): "backward", (1, True): "ortho", (2, True): "forward",
    (0, False): "forward", (1, False): "ortho", (2, False): "backward",
}  # fmt: skip


Shape = tuple[int, ...]


def _laid_out(r: Any, shape: Shape, strides: Shape, dt: np.dtype[Any]) -> Tensor:
    """``r`` (NumPy's result, or a scalar for an empty one) in ``dt`` with exactly these
    strides (NOTE [fft result layout] in ``ember/ops/native/fft.py``)."""
    if isinstance(r, np.ndarray) and r.dtype == dt:
        if r.strides == tuple(s * dt.itemsize for s in strides):
            return wrap(r)
    out = empty_strided(shape, strides, dt)
    np.copyto(out, r, casting="unsafe")
    return wrap(out)


# pocketfft reports NaN and inf in its input as "invalid value" RuntimeWarnings; PyTorch's
# transforms compute them silently, so the three kernels run with NumPy's warnings off
@impl(aten._fft_c2c.default, CPU)
@quietly
def _fft_c2c(self: Tensor, dim: list[int], normalization: int, forward: bool) -> Tensor:
    shape, strides, d = c2c_plan(self, dim)
    if not dim:  # a copy
        return _laid_out(np.array(self._edata), shape, strides, d.np)
    if math.prod(shape) == 0:
        return _laid_out(0, shape, strides, d.np)
    fn = np.fft.fftn if forward else np.fft.ifftn
    r = fn(self._edata, axes=list(dim), norm=_NORM[normalization, forward])
    return _laid_out(r, shape, strides, d.np)


@impl(aten._fft_r2c.default, CPU)
@quietly
def _fft_r2c(self: Tensor, dim: list[int], normalization: int, onesided: bool) -> Tensor:
    shape, strides, d = r2c_plan(self, dim, onesided)
    if math.prod(shape) == 0:
        return _laid_out(0, shape, strides, d.np)
    norm = _NORM[normalization, True]
    a = self._edata
    if onesided:
        r = np.fft.rfftn(a, axes=list(dim), norm=norm)
    elif len(dim) == 1:
        r = _full_from_half(np.fft.rfft(a, axis=dim[0], norm=norm), dim[0], a.shape[dim[0]])
    else:
        r = np.fft.fftn(a, axes=list(dim), norm=norm)
    return _laid_out(r, shape, strides, d.np)


def _full_from_half(half: np.ndarray, axis: int, n: int) -> np.ndarray:
    """The full spectrum of a real signal from its one-sided half: ``X[n - k] = conj(X[k])``
    (half the work of a complex transform, which is what ``fft`` of a real input costs)."""
    h = half.shape[axis]
    h_last = half.ndim - 1
    src = np.moveaxis(half, axis, h_last)
    out = np.empty((*src.shape[:-1], n), half.dtype)
    out[..., :h] = src
    if n > h:
        np.conjugate(src[..., n - h : 0 : -1], out=out[..., h:])
    return np.moveaxis(out, h_last, axis)


@impl(aten._fft_c2r.default, CPU)
@quietly
def _fft_c2r(self: Tensor, dim: list[int], normalization: int, last_dim_size: int) -> Tensor:
    shape, strides, d = c2r_plan(self, dim, last_dim_size)
    if math.prod(shape) == 0:
        return _laid_out(0, shape, strides, d.np)
    sizes = [shape[k] for k in dim]
    r = np.fft.irfftn(self._edata, s=sizes, axes=list(dim), norm=_NORM[normalization, False])
    return _laid_out(r, shape, strides, d.np)


@impl(aten.fft_fftfreq.default, CPU)
def fft_fftfreq(n: int, d: float = 1.0, **options: Any) -> Tensor:
    dt = fftfreq_plan(n, "fftfreq", options)
    return wrap(np.fft.fftfreq(n, d).astype(dt.np) if n else np.zeros(0, dt.np))


@impl(aten.fft_rfftfreq.default, CPU)
def fft_rfftfreq(n: int, d: float = 1.0, **options: Any) -> Tensor:
    dt = fftfreq_plan(n, "rfftfreq", options)
    if n == 0:  # arange(1) / (0 * d), as PyTorch computes it
        return wrap(np.full(1, np.nan, dt.np))
    return wrap(np.fft.rfftfreq(n, d).astype(dt.np))
