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

import builtins
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ember import dtypes
from ember.dispatch.keys import DispatchKey
from ember.ops.native._define import define
from ember.ops.registry import impl, ops
from ember.return_types import histogramdd as histogramdd_t

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


def check_outer_edges(left: float, right: float, dim: int = 0) -> None:
    if not (math.isfinite(left) and math.isfinite(right)):
        raise RuntimeError(
            f"torch.histogramdd: dimension {dim}'s range [{_num(left)}, {_num(right)}] is not "
            "finite"
        )
    if left > right:
        raise RuntimeError(
            f"torch.histogramdd: min should not exceed max, but got min {_num(left)} max "
            f"{_num(right)} for dimension {dim}"
        )


def _num(v: float) -> str:
    return str(int(v)) if math.isfinite(v) and v == int(v) else str(v)


# --------------------------------------------------------------------------- histogramdd
#
# NOTE [histogramdd]: the innermost dim of ``self`` holds each point's D coordinates (the
# others flatten into points). Each coordinate is binned as ``histogram`` bins one value
# (NOTE [histogram bins]), in its own dim's edges; a point counts when every coordinate falls
# inside, in the bin of those D indices. ``density`` divides by the total and by each bin's
# volume (the product of its widths). As in PyTorch, ``histogramdd`` is a composition:
# ``_histogramdd_bin_edges`` then ``_histogramdd_from_bin_cts`` for bin counts,
# ``_histogramdd_from_bin_tensors`` for given edges.
_DD_OPTS = "*, float[]? range=None, Tensor? weight=None, bool density=False"
define(f"_histogramdd_bin_edges(Tensor self, int[] bins, {_DD_OPTS}) -> Tensor[]")
define(f"_histogramdd_from_bin_cts(Tensor self, int[] bins, {_DD_OPTS}) -> Tensor")
define("_histogramdd_from_bin_tensors(Tensor self, Tensor[] bins, *, Tensor? weight=None, "
       "bool density=False) -> Tensor")  # fmt: skip
_DD_PUBLIC = "float[]? range=None, Tensor? weight=None, bool density=False"
_DD_RET = "(Tensor hist, Tensor[] bin_edges)"
define(f"histogramdd(Tensor self, int[] bins, {_DD_PUBLIC}) -> {_DD_RET}", variants=("function",))
define(f"histogramdd.int_bins(Tensor self, int bins, {_DD_PUBLIC}) -> {_DD_RET}",
       variants=("function",))  # fmt: skip
define(f"histogramdd.TensorList_bins(Tensor self, Tensor[] bins, {_DD_PUBLIC}) -> {_DD_RET}",
       variants=("function",))  # fmt: skip


def check_histogramdd(
    self: Tensor,
    bins: Sequence[int] | Sequence[Tensor],
    range: Sequence[float] | None,  # noqa: A002
    weight: Tensor | None,
    counts: bool = True,
) -> None:
    """PyTorch's checks of ``histogramdd`` that need no values (NOTE [histogramdd]); bin
    counts below 1 and the weight pass with ``counts`` False (``_histogramdd_bin_edges``
    does not check them)."""
    if self.ndim < 2:
        raise RuntimeError(
            "torch.histogramdd: input tensor should have at least 2 dimensions (points along "
            f"the innermost one), but got shape {list(self.shape)}; reshape a 1-D input to "
            "(-1, 1) or use histogram"
        )
    if self.dtype.category != dtypes.FLOATING:
        raise NotImplementedError(
            f"\"histogramdd\" not implemented for '{self.dtype._short}' (histogramdd takes "
            "floating input; convert with .float())"
        )
    d = self.shape[-1]
    if len(bins) != d:
        raise RuntimeError(
            "histogramdd: The size of bins must be equal to the innermost dimension of the "
            f"input (got {len(bins)} bins for input of shape {list(self.shape)})"
        )
    if counts and weight is not None and tuple(weight.shape) != tuple(self.shape[:-1]):
        raise RuntimeError(
            "torch.histogramdd: if weight tensor is provided it should have the same shape as "
            "the input tensor excluding its innermost dimension, but got input with shape "
            f"{list(self.shape)} and weight with shape {list(weight.shape)}"
        )
    if counts and weight is not None and weight.dtype != self.dtype:
        raise RuntimeError(
            "torch.histogramdd: if weight tensor is provided, it should have the same dtype as "
            f"the input tensor, but got input {self.dtype._short} and weight "
            f"{weight.dtype._short}"
        )
    for i, b in enumerate(bins):
        if isinstance(b, int):
            if counts and b <= 0:
                raise RuntimeError(
                    f"torch.histogram(): bins must be > 0, but got {b} for dimension {i}"
                )
            continue
        if b.ndim != 1:
            raise RuntimeError(
                "torch.histogramdd: bins tensor should have one dimension, but got "
                f"{b.ndim} dimensions in the bins tensor for dimension {i}"
            )
        if b.numel() < 1:
            raise RuntimeError(
                "torch.histogramdd: bins tensor should have at least 1 element, but got "
                f"{b.numel()} elements in the bins tensor for dimension {i}"
            )
        if b.dtype != self.dtype:
            raise RuntimeError(
                "torch.histogramdd: input tensor and bins tensors should have the same dtype, "
                f"but got input with dtype {self.dtype.name} and bins for dimension {i} with "
                f"dtype {b.dtype.name}"
            )
    if range is not None:
        if len(range) != 2 * d:
            raise RuntimeError(
                f"torch.histogramdd: for a {d}-dimensional histogram range should have "
                f"{2 * d} elements, but got {len(range)}"
            )
        for i in builtins.range(d):
            check_outer_edges(range[2 * i], range[2 * i + 1], i)


_CIA = DispatchKey.CompositeImplicitAutograd
aten = ops.aten


@impl(aten.histogramdd.default, _CIA)
def histogramdd(
    self: Tensor,
    bins: Sequence[int],
    range: Sequence[float] | None = None,  # noqa: A002
    weight: Tensor | None = None,
    density: bool = False,
) -> Any:
    """Equal-width bins, ``bins[i]`` along dim i (NOTE [histogramdd])."""
    edges = aten._histogramdd_bin_edges.default(
        self, bins, range=range, weight=weight, density=density
    )
    hist = aten._histogramdd_from_bin_cts.default(
        self, bins, range=range, weight=weight, density=density
    )
    return histogramdd_t(hist, tuple(edges))


@impl(aten.histogramdd.int_bins, _CIA)
def histogramdd_int_bins(
    self: Tensor,
    bins: int,
    range: Sequence[float] | None = None,  # noqa: A002
    weight: Tensor | None = None,
    density: bool = False,
) -> Any:
    """``bins`` equal-width bins along every dim."""
    n = self.shape[-1] if self.ndim else 1
    return histogramdd(self, [bins] * n, range, weight, density)


@impl(aten.histogramdd.TensorList_bins, _CIA)
def histogramdd_tensor_list_bins(
    self: Tensor,
    bins: Sequence[Tensor],
    range: Sequence[float] | None = None,  # noqa: A002
    weight: Tensor | None = None,
    density: bool = False,
) -> Any:
    """The given edges per dim (``range`` is ignored, as in PyTorch)."""
    hist = aten._histogramdd_from_bin_tensors.default(self, bins, weight=weight, density=density)
    return histogramdd_t(hist, tuple(bins))
