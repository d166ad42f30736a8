"""``histogram`` (issue 18): counts of a tensor's values in equal-width bins (``bins`` an int,
over ``range`` or the values' own range) or between given edges (``bins`` a tensor),
optionally weighted and normalised to a density, as ``torch.histogram``.

# NOTE [histogram bins]
PyTorch's edges for a bin count are ``linspace(left, right, bins + 1)`` in the input's dtype,
``left``/``right`` the range or the values' min and max (0 and 1 when there are none, widened
by 0.5 each way when equal). A value ``v`` falls in bin ``i`` when ``edges[i] <= v <
edges[i + 1]``; the last bin also holds ``v == edges[-1]``; values outside the edges (and
NaN) are not counted. PyTorch finds the bin by interpolation corrected against the edges,
which equals a binary search of the edges: ember searches them (``np.searchsorted``).
``density`` divides by the total and each bin's width. The checks are shared by the CPU
kernel and the Meta rule here; ``hist`` is not differentiable (backward raises, as in
PyTorch)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ember import dtypes
from ember.ops.native._define import define

if TYPE_CHECKING:
    from ember._tensor import Tensor

_OPTS = "*, Tensor? weight=None, bool density=False"
define(f"histogram.bins_tensor(Tensor self, Tensor bins, {_OPTS}) -> "
       "(Tensor hist, Tensor bin_edges)", out=True, out_overload="bins_tensor_out")  # fmt: skip
define("histogram.bin_ct(Tensor self, int bins=100, *, float[]? range=None, "
       "Tensor? weight=None, bool density=False) -> (Tensor hist, Tensor bin_edges)", out=True,
       out_overload="bin_ct_out")  # fmt: skip


def check_histogram(self: Tensor, weight: Tensor | None, bins: Tensor | None = None) -> None:
    """PyTorch's checks that need no values: a floating input, weights of its shape and
    dtype, a 1-D edge tensor of its dtype with at least two edges."""
    if self.dtype.category != dtypes.FLOATING:
        raise NotImplementedError(
            f"\"histogramdd\" not implemented for '{self.dtype._short}' (histogram takes "
            "floating input; convert with .float())"
        )
    if weight is not None and tuple(weight.shape) != tuple(self.shape):
        raise RuntimeError(
            "torch.histogramdd: if weight tensor is provided it should have the same shape as "
            f"the input tensor excluding its innermost dimension, but got input with shape "
            f"{list(self.shape)} and weight with shape {list(weight.shape)}"
        )
    if weight is not None and weight.dtype != self.dtype:
        raise RuntimeError(
            f"torch.histogramdd: if weight tensor is provided, it should have the same dtype as "
            f"the input tensor, but got input {self.dtype._short} and weight "
            f"{weight.dtype._short}"
        )
    if bins is not None:
        if bins.ndim != 1:
            raise RuntimeError(
                "torch.histogramdd: bins tensor should have one dimension, but got "
                f"{bins.ndim} dimensions in the bins tensor for dimension 0"
            )
        if bins.numel() < 2:
            raise RuntimeError("torch.histogram(): bins must be > 0, but got 0 for dimension 0")
        if bins.dtype != self.dtype:
            raise RuntimeError(
                "torch.histogramdd: input tensor and bins tensors should have the same dtype, "
                f"but got input with dtype {self.dtype.name} and bins for dimension 0 with "
                f"dtype {bins.dtype.name}"
            )


def check_bin_count(self: Tensor, bins: int, range: Sequence[float] | None) -> None:  # noqa: A002
    if range is None and self.dtype == dtypes.float16 and self.numel():  # (no half min/max)
        raise NotImplementedError(
            "\"histogramdd\" not implemented for 'Half' without a range: pass range=(min, max) "
            "or convert with .float()"
        )
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    if range is not None:
        if len(range) != 2:
            raise RuntimeError(
                f"torch.histogram(): range should have 2 elements, but got {len(range)}"
            )
        check_outer_edges(range[0], range[1])


def check_outer_edges(left: float, right: float) -> None:
    if not (math.isfinite(left) and math.isfinite(right)):
        raise RuntimeError(
            f"torch.histogramdd: dimension 0's range [{_num(left)}, {_num(right)}] is not finite"
        )
    if left > right:
        raise RuntimeError(
            f"torch.histogramdd: min should not exceed max, but got min {_num(left)} max "
            f"{_num(right)} for dimension 0"
        )


def _num(v: float) -> str:
    return str(int(v)) if math.isfinite(v) and v == int(v) else str(v)
