"""Meta rules of ``histogram``: the CPU kernels' checks and the two result shapes."""

from __future__ import annotations

from types import SimpleNamespace

from ember._shape_only import ShapeOnlyArray
from ember._tensor import Tensor, wrap_shape_only
from ember.dispatch.keys import DispatchKey
from ember.library import impl
from ember.ops.native._define import by_name
from ember.ops.native.histogram import check_bin_count, check_histogram, check_histogramdd
from ember.ops.registry import ops
from ember.return_types import histogram as histogram_t

aten = ops.aten
Meta = DispatchKey.Meta


def _results(self: Tensor, bins: int) -> histogram_t:
    d = self._edata.dtype
    hist = wrap_shape_only(ShapeOnlyArray((bins,), d))
    return histogram_t(hist, wrap_shape_only(ShapeOnlyArray((bins + 1,), d)))


def histogram_bins_tensor(a: SimpleNamespace) -> histogram_t:
    check_histogram(a.self, a.weight, a.bins)
    return _results(a.self, a.bins.numel() - 1)


def histogram_bin_ct(a: SimpleNamespace) -> histogram_t:
    check_bin_count(a.self, a.bins, a.range)
    check_histogram(a.self, a.weight)
    return _results(a.self, a.bins)


# the arguments by name (NOTE [geometry functions]): the signatures stand in the CPU kernels
impl(aten.histogram.bins_tensor, Meta)(by_name(aten.histogram.bins_tensor, histogram_bins_tensor))
impl(aten.histogram.bin_ct, Meta)(by_name(aten.histogram.bin_ct, histogram_bin_ct))


def histogramdd_bin_edges(a: SimpleNamespace) -> list[Tensor]:
    check_histogramdd(a.self, a.bins, a.range, a.weight, counts=False)
    d = a.self._edata.dtype
    return [wrap_shape_only(ShapeOnlyArray((max(b + 1, 0),), d)) for b in a.bins]


def histogramdd_from_bin_cts(a: SimpleNamespace) -> Tensor:
    check_histogramdd(a.self, a.bins, a.range, a.weight)
    return wrap_shape_only(ShapeOnlyArray(tuple(a.bins), a.self._edata.dtype))


def histogramdd_from_bin_tensors(a: SimpleNamespace) -> Tensor:
    check_histogramdd(a.self, a.bins, None, a.weight)
    shape = tuple(b.numel() - 1 for b in a.bins)
    return wrap_shape_only(ShapeOnlyArray(shape, a.self._edata.dtype))


for _op, _rule in (
    (aten._histogramdd_bin_edges.default, histogramdd_bin_edges),
    (aten._histogramdd_from_bin_cts.default, histogramdd_from_bin_cts),
    (aten._histogramdd_from_bin_tensors.default, histogramdd_from_bin_tensors),
):
    impl(_op, Meta)(by_name(_op, _rule))
