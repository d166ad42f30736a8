"""CPU kernels of ``histogram`` (NOTE [histogram bins] in ``ember/ops/native/histogram.py``)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ember.backends.cpu._util import Tensor, quiet_block, wrap
from ember.backends.cpu.creation import _linspace
from ember.dispatch.keys import DispatchKey
from ember.library import impl
from ember.ops.native.histogram import (
    check_bin_count,
    check_histogram,
    check_histogramdd,
    check_outer_edges,
)
from ember.ops.registry import ops
from ember.return_types import histogram as histogram_t

aten = ops.aten
CPU = DispatchKey.CPU


def _count(
    x: np.ndarray, edges: np.ndarray, weight: Tensor | None, density: bool, equal: bool = False
) -> np.ndarray:
    """The (weighted) count of ``x``'s values in each bin between ``edges`` (``equal``:
    equal-width edges, where the bin is interpolated and then corrected against the edges,
    as PyTorch's kernel does, instead of searched)."""
    bins = len(edges) - 1
    v = x.ravel()
    if equal and x.dtype in (np.float32, np.float64) and edges.dtype == x.dtype and bins:
        return _count_loop(v, edges, weight, density)
    with quiet_block():
        inside, pos = _positions(v, edges, equal)
        w = None if weight is None else weight._edata.ravel()[inside]
        hist = np.bincount(pos, weights=w, minlength=bins)[:bins].astype(x.dtype)
        if density:
            hist = hist / hist.sum() / np.diff(edges)
    return np.asarray(hist, x.dtype)


def _positions(v: np.ndarray, edges: np.ndarray, equal: bool) -> tuple[np.ndarray, np.ndarray]:
    """(which values of ``v`` fall inside ``edges``, their bins): interpolated and corrected
    against the edges for equal-width ones (``equal``), else searched."""
    bins = len(edges) - 1
    inside = (v >= edges[0]) & (v <= edges[-1])  # (NaN is never inside)
    v = v[inside]
    if equal:
        left, right = float(edges[0]), float(edges[-1])
        pos = ((v - left) * (bins / (right - left))).astype(np.int64)
        np.clip(pos, 0, bins - 1, out=pos)
        pos -= edges[pos] > v
        pos += (pos < bins - 1) & (edges[np.minimum(pos + 1, bins)] <= v)
    else:
        pos = np.searchsorted(edges, v, side="right") - 1
    return inside, np.minimum(pos, bins - 1)  # the last edge belongs to the last bin


_LOOP: list[Any] = []  # histogram_kernel, imported on first use (NOTE [numba on first use])


def _count_loop(
    v: np.ndarray, edges: np.ndarray, weight: Tensor | None, density: bool
) -> np.ndarray:
    """``_count`` over equal-width bins by one compiled pass (NOTE [histogram loop])."""
    if not _LOOP:
        from ember.backends.cpu import histogram_kernel  # NOTE [numba on first use]

        _LOOP.append(histogram_kernel)
    bins = len(edges) - 1
    t = v.dtype.type
    left, right = float(edges[0]), float(edges[-1])
    w = v if weight is None else np.ascontiguousarray(weight._edata.ravel(), np.float64)
    with quiet_block():
        scale = t(bins / (right - left))
        hist = _LOOP[0].count(np.ascontiguousarray(v), w, weight is not None, edges,
                              t(left), scale).astype(v.dtype)  # fmt: skip
        if density:
            hist = hist / hist.sum() / np.diff(edges)
    return np.asarray(hist, v.dtype)


@impl(aten.histogram.bins_tensor, CPU)
def histogram_bins_tensor(
    self: Tensor, bins: Tensor, *, weight: Tensor | None = None, density: bool = False
) -> histogram_t:
    check_histogram(self, weight, bins)
    edges = np.array(bins._edata)
    return histogram_t(wrap(_count(self._edata, edges, weight, density)), wrap(edges))


@impl(aten.histogram.bin_ct, CPU)
def histogram_bin_ct(
    self: Tensor,
    bins: int = 100,
    *,
    range: Sequence[float] | None = None,  # noqa: A002
    weight: Tensor | None = None,
    density: bool = False,
) -> histogram_t:
    check_bin_count(self, bins, range)
    check_histogram(self, weight)
    x = self._edata
    if range is not None:
        left, right = float(range[0]), float(range[1])
    elif x.size:
        left, right = float(np.min(x)), float(np.max(x))
        check_outer_edges(left, right)
    else:
        left, right = 0.0, 1.0
    if left == right:
        left, right = left - 0.5, right + 0.5
    edges = _linspace((bins + 1,), self.dtype, left, right, bins + 1)
    return histogram_t(wrap(_count(x, edges, weight, density, True)), wrap(edges))


# --------------------------------------------------------------------------- histogramdd


def _dd_edges(
    self: Tensor,
    bins: Sequence[int],
    range: Sequence[float] | None,  # noqa: A002
) -> list[np.ndarray]:
    """Each dim's equal-width edges: over ``range`` or its coordinates' min and max (0 and 1
    without points, widened by 0.5 each way when equal), as ``histogram``'s."""
    pts = self._edata.reshape(-1, self.shape[-1])
    out = []
    for i, b in enumerate(bins):
        if range is not None:
            left, right = float(range[2 * i]), float(range[2 * i + 1])
        elif pts.shape[0]:
            left, right = float(np.min(pts[:, i])), float(np.max(pts[:, i]))
            check_outer_edges(left, right, i)
        else:
            left, right = 0.0, 1.0
        if left == right:
            left, right = left - 0.5, right + 0.5
        out.append(_linspace((b + 1,), self.dtype, left, right, b + 1))
    return out


def _dd_count(
    self: Tensor, edges: list[np.ndarray], weight: Tensor | None, density: bool, equal: bool
) -> np.ndarray:
    """The (weighted) count of the points in each D-dim bin (NOTE [histogramdd])."""
    pts = self._edata.reshape(-1, self.shape[-1])
    shape = tuple(len(e) - 1 for e in edges)
    dt = self._edata.dtype
    with quiet_block():
        inside = np.ones(pts.shape[0], dtype=bool)
        flat = np.zeros(pts.shape[0], dtype=np.int64)
        for i, e in enumerate(edges):
            into, pos = _positions(pts[:, i], e, equal)
            full = np.zeros(pts.shape[0], dtype=np.int64)
            full[into] = pos
            inside &= into
            flat = flat * shape[i] + full
        w = None if weight is None else weight._edata.reshape(-1)[inside]
        size = math.prod(shape)
        hist = np.bincount(flat[inside], weights=w, minlength=size)[:size].astype(dt)
        hist = hist.reshape(shape)
        if density:
            hist = hist / hist.sum()
            for i, e in enumerate(edges):
                view = [1] * len(edges)
                view[i] = -1
                hist = hist / np.diff(e).reshape(view)
    return np.asarray(hist, dt)


@impl(aten._histogramdd_bin_edges.default, CPU)
def histogramdd_bin_edges(
    self: Tensor,
    bins: Sequence[int],
    *,
    range: Sequence[float] | None = None,  # noqa: A002
    weight: Tensor | None = None,
    density: bool = False,
) -> list[Tensor]:
    check_histogramdd(self, bins, range, weight, counts=False)
    return [wrap(e) for e in _dd_edges(self, bins, range)]


@impl(aten._histogramdd_from_bin_cts.default, CPU)
def histogramdd_from_bin_cts(
    self: Tensor,
    bins: Sequence[int],
    *,
    range: Sequence[float] | None = None,  # noqa: A002
    weight: Tensor | None = None,
    density: bool = False,
) -> Tensor:
    check_histogramdd(self, bins, range, weight)
    return wrap(_dd_count(self, _dd_edges(self, bins, range), weight, density, True))


@impl(aten._histogramdd_from_bin_tensors.default, CPU)
def histogramdd_from_bin_tensors(
    self: Tensor, bins: Sequence[Tensor], *, weight: Tensor | None = None, density: bool = False
) -> Tensor:
    check_histogramdd(self, bins, None, weight)
    edges = [np.asarray(b._edata) for b in bins]
    return wrap(_dd_count(self, edges, weight, density, False))
