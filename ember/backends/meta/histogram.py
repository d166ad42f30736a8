"""Meta rules of ``histogram``: the CPU kernels' checks and the two result shapes."""

from __future__ import annotations

from collections.abc import Sequence

from ember._shape_only import ShapeOnlyArray
from ember._tensor import Tensor, wrap_shape_only
from ember.dispatch.keys import DispatchKey
from ember.library import impl
from ember.ops.native.histogram import check_bin_count, check_histogram
from ember.ops.registry import ops
from ember.return_types import histogram as histogram_t

aten = ops.aten
Meta = DispatchKey.Meta


def _results(self: Tensor, bins: int) -> histogram_t:
    d = self._edata.dtype
    hist = wrap_shape_only(ShapeOnlyArray((bins,), d))
    return histogram_t(hist, wrap_shape_only(ShapeOnlyArray((bins + 1,), d)))


@impl(aten.histogram.bins_tensor, Meta)
def histogram_bins_tensor(
    self: Tensor, bins: Tensor, *, weight: Tensor | None = None, density: bool = False
) -> histogram_t:
    check_histogram(self, weight, bins)
    return _results(self, bins.numel() - 1)


@impl(aten.histogram.bin_ct, Meta)
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
    return _results(self, bins)
