"""The ops built on sorted order: order statistics (``median``, ``nanmedian``, ``mode``,
``kthvalue``, ``quantile``, ``nanquantile``), uniqueness (``_unique2``, ``unique_dim``,
``unique_consecutive``: what ``ember.unique`` calls), binary search (``searchsorted``,
``bucketize``) and counting (``bincount``, ``histc``): schemas, the rules the CPU kernels and
Meta rules share, and ``quantile``'s composition.

# NOTE [ties in order statistics]
``median(dim)``, ``nanmedian(dim)`` and ``kthvalue`` return an index of the selected value;
where the value occurs more than once, which of its indices PyTorch returns depends on its
selection algorithm (its docs: "not necessarily the first occurrence"). ember's is one of
them too, so values always agree and indices agree where the value is unique; the op tests
use distinct values, and skip the edges that make ties (``EDGE_DIFFERENCES``). ``mode``
returns the smallest of the most frequent values, at the last index where it occurs: what
PyTorch's kernel gives for slices short enough for its sort to keep ties in order; for longer
ones PyTorch's index among the ties is again its sort's. A NaN equals nothing in ember's
``mode`` (each counts once); PyTorch sorts with a comparison that NaN breaks, so its result
with NaN present is its sort's.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ember import dtypes
from ember.dtypes import dtype
from ember.ops.native._define import define
from ember.ops.native.reductions import define_with_out
from ember.ops.registry import impl, ops
from ember.ops.shapes import wrap_dim

if TYPE_CHECKING:
    from ember._tensor import Tensor

F = ("function",)
Shape = tuple[int, ...]

# fmt: off
# order statistics
for _name in ("median", "nanmedian"):
    define(f"{_name}(Tensor self) -> Tensor", out=True)
    define(f"{_name}.dim(Tensor self, int dim, bool keepdim=False) -> "
           "(Tensor values, Tensor indices)", out=True, out_overload="dim_values")
define("mode(Tensor self, int dim=-1, bool keepdim=False) -> (Tensor values, Tensor indices)",
       out=True, out_overload="values")
define("kthvalue(Tensor self, SymInt k, int dim=-1, bool keepdim=False) -> "
       "(Tensor values, Tensor indices)", out=True, out_overload="values")
for _name in ("quantile", "nanquantile"):
    define(f"{_name}(Tensor self, Tensor q, int? dim=None, bool keepdim=False, *, "
           'str interpolation="linear") -> Tensor', out=True)
    define(f"{_name}.scalar(Tensor self, float q, int? dim=None, bool keepdim=False, *, "
           'str interpolation="linear") -> Tensor', out=True, out_overload="scalar_out")

# uniqueness (ember.unique and Tensor.unique are Python functions over these, as in PyTorch)
_DYNAMIC = ("dynamic_output_shape",)
_OUTS = ("*, Tensor(a!) out0, Tensor(b!) out1, Tensor(c!) out2) -> "
         "(Tensor(a!), Tensor(b!), Tensor(c!))")
define_with_out(
    "_unique2(Tensor self, bool sorted=True, bool return_inverse=False, "
    "bool return_counts=False) -> (Tensor, Tensor, Tensor)",
    "_unique2.out(Tensor self, bool sorted=True, bool return_inverse=False, "
    f"bool return_counts=False, {_OUTS}", variants=F, tags=_DYNAMIC)
define_with_out(
    "unique_dim(Tensor self, int dim, bool sorted=True, bool return_inverse=False, "
    "bool return_counts=False) -> (Tensor, Tensor, Tensor)",
    "unique_dim.out(Tensor self, int dim, bool sorted=True, bool return_inverse=False, "
    f"bool return_counts=False, {_OUTS}", variants=(), tags=_DYNAMIC)
define_with_out(
    "unique_consecutive(Tensor self, bool return_inverse=False, bool return_counts=False, "
    "int? dim=None) -> (Tensor, Tensor, Tensor)",
    "unique_consecutive.out(Tensor self, bool return_inverse=False, bool return_counts=False, "
    f"int? dim=None, {_OUTS}", variants=F, tags=_DYNAMIC)

# binary search
_SEARCH = "*, bool out_int32=False, bool right=False, str? side=None, Tensor? sorter=None"
define(f"searchsorted.Tensor(Tensor sorted_sequence, Tensor self, {_SEARCH}) -> Tensor",
       variants=F, out=True, out_overload="Tensor_out")
define(f"searchsorted.Scalar(Tensor sorted_sequence, Scalar self, {_SEARCH}) -> Tensor",
       variants=F, out=True, out_overload="Scalar_out")
define("bucketize.Tensor(Tensor self, Tensor boundaries, *, bool out_int32=False, "
       "bool right=False) -> Tensor", variants=F, out=True, out_overload="Tensor_out")
define("bucketize.Scalar(Scalar self, Tensor boundaries, *, bool out_int32=False, "
       "bool right=False) -> Tensor", variants=F, out=True, out_overload="Scalar_out")

# counting
define("bincount(Tensor self, Tensor? weights=None, SymInt minlength=0) -> Tensor",
       tags=_DYNAMIC, out=True)
define("histc(Tensor self, int bins=100, Scalar min=0, Scalar max=0) -> Tensor", out=True)
# fmt: on


# --------------------------------------------------------------------------- shared rules


def check_order_statistic(self_dtype: dtype, op: str) -> None:
    """median, nanmedian, kthvalue: real numbers only (PyTorch has no bool or complex kernel)."""
    if self_dtype is dtypes.bool_ or self_dtype.category == dtypes.COMPLEX:
        raise NotImplementedError(f"\"{op}_cpu\" not implemented for '{self_dtype._short}'")


def check_mode(self_dtype: dtype) -> None:
    if self_dtype.category == dtypes.COMPLEX:
        raise NotImplementedError(f"\"mode_cpu\" not implemented for '{self_dtype._short}'")


def along(shape: Shape, dim: int, keepdim: bool, op: str) -> tuple[int, Shape]:
    """(wrapped dim, result shape) of a selection along ``dim``; an empty ``dim`` raises
    IndexError, as in PyTorch."""
    d = wrap_dim(dim, len(shape), op)
    if not shape:
        return d, ()
    if shape[d] == 0:
        raise IndexError(f"{op}(): Expected reduction dim {d} to have non-zero size.")
    out = (
        tuple(1 if i == d else n for i, n in enumerate(shape))
        if keepdim
        else (shape[:d] + shape[d + 1 :])
    )
    return d, out


def check_kthvalue(shape: Shape, k: int, d: int) -> None:
    n = shape[d] if shape else 1
    if not 1 <= k <= n:
        raise RuntimeError(
            f"kthvalue(): selected number k out of range for dimension {d} (k = {k}, the "
            f"dimension has {n} elements)"
        )


def check_unique(self_dtype: dtype, op: str = "unique") -> None:
    if self_dtype.category == dtypes.COMPLEX:
        raise NotImplementedError(f"\"{op}\" not implemented for '{self_dtype._short}'")


def unique_dim_of(shape: Shape, dim: int, op: str = "unique_dim") -> int:
    """The wrapped dim of ``unique_dim``/``unique_consecutive(dim=)``: a 0-dim input has none,
    and a 0-sized dim that is not the one selected leaves nothing to compare."""
    if not shape:
        raise IndexError(f"{op}: Dimension specified as {dim} but tensor has no dimensions")
    d = wrap_dim(dim, len(shape), op)
    if shape[d] and 0 in shape:
        raise RuntimeError(
            f"{op}: There are 0 sized dimensions, and they aren't selected, so unique cannot be "
            f"applied (shape {list(shape)}, dim {d})"
        )
    return d


def search_plan(
    seq_shape: Shape,
    seq_dtype: dtype,
    values_shape: Shape | None,
    values_dtype: dtype | None,
    out_int32: bool,
    right: bool,
    side: str | None,
    sorter: Tensor | None,
    op: str = "torch.searchsorted()",
) -> tuple[bool, dtype]:
    """``searchsorted``'s checks (PyTorch's messages); returns (search from the right, result
    dtype). ``values_shape`` is None for a Scalar value."""
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"{op}: side can only be 'left' or 'right' but got {side}")
        if right and side == "left":
            raise RuntimeError(
                f"{op}: side and right can't be set to opposites, got side of left while right "
                "was True"
            )
        right = side == "right"
    for d in (seq_dtype, values_dtype):
        if d is not None and (d is dtypes.bool_ or d.category == dtypes.COMPLEX):
            raise NotImplementedError(f"\"searchsorted_out_cpu\" not implemented for '{d._short}'")
    if not seq_shape:
        raise RuntimeError(
            f"{op}: boundaries tensor should have positive dimension, but got 0 dimension"
        )
    if values_shape is None and len(seq_shape) != 1:
        raise RuntimeError(
            f"{op}: input value can be a scalar only when boundaries tensor dimension is 1, but "
            f"we got boundaries tensor dim({len(seq_shape)})"
        )
    if (
        values_shape is not None
        and len(seq_shape) != 1
        and tuple(seq_shape[:-1]) != tuple(values_shape[:-1])
    ):
        raise RuntimeError(
            f"{op}: boundaries tensor should be 1 dimension or the first N-1 dimensions of "
            f"boundaries tensor and input value tensor must match, but we got boundaries tensor "
            f"{list(seq_shape)} and input value tensor {list(values_shape)}"
        )
    if sorter is not None:
        if sorter.dtype is not dtypes.int64:
            raise RuntimeError(
                f"{op}: sorter must be a tensor of long dtype but got dtype {sorter.dtype._short}"
            )
        if tuple(sorter.shape) != tuple(seq_shape):
            raise RuntimeError(
                f"{op}: boundary and sorter must have the same size, but got boundary tensor "
                f"{list(seq_shape)}and got sorter tensor {list(sorter.shape)}"
            )
    return right, dtypes.int32 if out_int32 else dtypes.int64


def check_bincount(self: Tensor, weights: Tensor | None, minlength: int) -> None:
    if self.dtype.category != dtypes.INTEGRAL:
        raise NotImplementedError(
            f"\"bincount_cpu\" not implemented for '{self.dtype._short}': bincount counts "
            "non-negative integers"
        )
    if self.ndim != 1:
        raise RuntimeError(
            f"bincount only supports 1-d non-negative integral inputs (got shape "
            f"{list(self.shape)})"
        )
    if minlength < 0:
        raise RuntimeError(f"bincount: minlength should be >= 0 (got {minlength})")
    if weights is not None and (weights.ndim != 1 or weights.shape[0] != self.shape[0]):
        raise RuntimeError(
            f"bincount: weights should be 1-d and have the same length as input (input "
            f"{list(self.shape)}, weights {list(weights.shape)})"
        )


def bincount_dtype(self: Tensor, weights: Tensor | None) -> dtype:
    """int64 counts; float32 and float64 weights keep their dtype, any other weights sum in
    float64; an empty input gives int64 zeros whatever the weights (PyTorch's rule)."""
    if weights is None or self.numel() == 0:
        return dtypes.int64
    return weights.dtype if weights.dtype in (dtypes.float32, dtypes.float64) else dtypes.float64


def check_boundaries(boundaries: Tensor) -> None:
    """``bucketize``'s check (its CPU kernel and Meta rule): the boundaries are 1-d."""
    if boundaries.ndim != 1:
        raise RuntimeError(
            f"bucketize: boundaries tensor must be 1 dimension, but got dim({boundaries.ndim})"
        )


def check_histc(self_dtype: dtype, bins: int, lo: float, hi: float) -> None:
    """``histc``'s checks that need no values (the range's finiteness may: ``histc_range``)."""
    if self_dtype.category != dtypes.FLOATING:
        raise NotImplementedError(
            f"\"histogram_cpu\" not implemented for '{self_dtype._short}': histc takes floating "
            "point input"
        )
    if bins <= 0:
        raise RuntimeError(f"torch.histc: bins must be > 0, but got {bins} for bins")
    if lo > hi:
        raise RuntimeError(f"torch.histc: max must be larger than min (min {lo}, max {hi})")


def histc_range(lo: float, hi: float) -> tuple[float, float]:
    """The edges of ``histc``'s range once data has filled in ``min == max`` (a point range
    widens by 1 each side); RuntimeError if not finite."""
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise RuntimeError(f"torch.histc: range of [{lo}, {hi}] is not finite")
    return lo, hi


# --------------------------------------------------------------------------- quantile
# NOTE [quantile]: PyTorch composes quantile of other ops (CompositeImplicitAutograd), and so
# does ember: sort the values along the reduced dim (NaN last), find each quantile's rank in
# them (``q * (n - 1)``; a slice with a NaN has the NaN's rank, so quantile gives NaN, while
# nanquantile counts only the numbers), then pick the value at the rank (lower, higher,
# nearest) or interpolate between the two around it (linear, midpoint). Gradients flow through
# sort's values and lerp, as PyTorch's do.

aten = ops.aten
_MODES = ("linear", "lower", "higher", "midpoint", "nearest")


def _check_quantile(self: Tensor, q: Any, interpolation: str, op: str) -> None:
    if self.dtype not in (dtypes.float32, dtypes.float64):
        raise RuntimeError(f"{op}() input tensor must be either float or double dtype (got "
                           f"{self.dtype._short})")  # fmt: skip
    if self.numel() == 0:
        raise RuntimeError(f"{op}() input tensor must be non-empty")
    if isinstance(q, (int, float)):
        if not 0 <= q <= 1:
            raise RuntimeError(f"{op}() q must be in the range [0, 1] but got {q}")
    else:
        if q.ndim > 1:
            raise RuntimeError(f"{op}() q must be a scalar or 1D tensor")
        if q.dtype is not self.dtype:
            raise RuntimeError(f"{op}() q tensor must be same dtype as the input tensor")
        values = q._edata
        if type(values).__module__ == "numpy" and values.size:  # read on the cpu only
            if not ((values >= 0) & (values <= 1)).all():
                raise RuntimeError(f"{op}() q values must be in the range [0, 1]")
    if interpolation not in _MODES:
        raise RuntimeError(
            f"{op}() interpolation must be one of linear, lower, higher, midpoint or nearest, "
            f"but got {interpolation}"
        )


def _quantile(
    self: Tensor,
    q: Any,
    dim: int | None,
    keepdim: bool,
    interpolation: str,
    ignore_nan: bool,
) -> Tensor:
    op = "nanquantile" if ignore_nan else "quantile"
    _check_quantile(self, q, interpolation, op)
    scalar = isinstance(q, (int, float)) or q.ndim == 0
    if isinstance(q, (int, float)):
        q = aten.scalar_tensor.default(float(q), dtype=self.dtype, device=self.device)
    qs = aten.reshape.default(q, [-1])  # (Q,)
    if dim is None:
        x = aten.reshape.default(self, [-1])
        kept = [1] * self.ndim if keepdim else []
    else:
        d = wrap_dim(dim, self.ndim, op)
        x = aten.movedim.int(self, d, -1) if self.ndim else aten.reshape.default(self, [1])
        kept = list(self.shape)
        if keepdim and kept:
            kept[d] = 1
        elif kept:
            del kept[d]
    ordered = aten.sort.default(x, -1)[0]  # (..., n), NaN last
    n = ordered.shape[-1]
    batch = list(ordered.shape[:-1])
    qs = aten.view.default(qs, [1] * len(batch) + [-1])  # (1.., Q)
    nan = aten.isnan.default(ordered)
    if ignore_nan:
        count = aten.sum.dim_IntList(aten.logical_not.default(nan), [-1], True)
        ranks = aten.mul.Tensor(qs, aten.sub.Scalar(count, 1))
        ranks = aten.masked_fill.Scalar(ranks, aten.lt.Scalar(ranks, 0), n - 1)
    else:
        ranks = aten.mul.Scalar(qs, n - 1)
        shape = batch + [qs.shape[-1]]
        ranks = aten.expand.default(ranks, shape)
        ranks = aten.masked_fill.Scalar(ranks, aten.any.dim(nan, -1, True), n - 1)
    if interpolation in ("lower", "higher", "nearest"):
        pick = {"lower": aten.floor, "higher": aten.ceil, "nearest": aten.round}[interpolation]
        index = aten._to_copy.default(pick.default(ranks), dtype=dtypes.int64)
        values = aten.gather.default(ordered, -1, index)
    else:
        below = aten.floor.default(ranks)
        weights = (
            aten.full_like.default(ranks, 0.5)
            if interpolation == "midpoint"
            else aten.sub.Tensor(ranks, below)
        )
        lo = aten.gather.default(ordered, -1, aten._to_copy.default(below, dtype=dtypes.int64))
        above = aten._to_copy.default(aten.ceil.default(ranks), dtype=dtypes.int64)
        values = aten.lerp.Tensor(lo, aten.gather.default(ordered, -1, above), weights)
    # values: (batch..., Q) -> (Q, *kept), or kept for a scalar q
    values = aten.movedim.int(values, -1, 0)
    return aten.reshape.default(values, kept if scalar else [values.shape[0], *kept])


def _quantile_kernels(ignore_nan: bool) -> tuple[Any, Any]:
    def tensor_q(
        self: Tensor,
        q: Tensor,
        dim: int | None = None,
        keepdim: bool = False,
        *,
        interpolation: str = "linear",
    ) -> Tensor:
        return _quantile(self, q, dim, keepdim, interpolation, ignore_nan)

    def scalar_q(
        self: Tensor,
        q: float,
        dim: int | None = None,
        keepdim: bool = False,
        *,
        interpolation: str = "linear",
    ) -> Tensor:
        return _quantile(self, q, dim, keepdim, interpolation, ignore_nan)

    return tensor_q, scalar_q


for _name, _ignore in (("quantile", False), ("nanquantile", True)):
    _t, _s = _quantile_kernels(_ignore)
    impl(getattr(aten, _name).default, "CompositeImplicitAutograd", _t)
    impl(getattr(aten, _name).scalar, "CompositeImplicitAutograd", _s)


def reduced(shape: Sequence[int], d: int, keepdim: bool) -> Shape:
    return (
        tuple(1 if i == d else n for i, n in enumerate(shape))
        if keepdim
        else tuple(n for i, n in enumerate(shape) if i != d)
    )
