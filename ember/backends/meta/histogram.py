"""Meta rules of ``histogram``: the CPU kernels' checks and the two result shapes."""

from __future__ import annotations

from types import SimpleNamespace

from ember._shape_only import ShapeOnlyArray
from ember._tensor import Tensor, wrap_shape_only
from ember.dispatch.keys import DispatchKey
from ember.library import impl
from ember.ops.native._define import by_name
from ember.ops.native.histogram import check_bin_count, check_histogram
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
