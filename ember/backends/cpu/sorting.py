"""CPU kernels of the ops built on sorted order: NumPy partitions and sorts (order
statistics, uniqueness), ``np.searchsorted`` (binary search) and ``np.bincount`` (counting).

Shape and dtype rules live beside the schemas in ``ember/ops/native/sorting.py``, shared with
the Meta rules. Which index a tied order statistic reports: NOTE [ties in order statistics].
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ember import dtypes
from ember.backends.cpu._util import Tensor, quiet_block, wrap
from ember.dispatch.keys import DispatchKey
from ember.library import impl
from ember.ops.native.sorting import (
    along,
    bincount_dtype,
    check_bincount,
    check_boundaries,
    check_histc,
    check_kthvalue,
    check_mode,
    check_order_statistic,
    check_unique,
    histc_range,
    search_plan,
    unique_dim_of,
)
from ember.ops.registry import ops
from ember.return_types import kthvalue as kthvalue_t
from ember.return_types import median as median_t
from ember.return_types import mode as mode_t
from ember.return_types import nanmedian as nanmedian_t

aten = ops.aten
CPU = DispatchKey.CPU
_I64 = np.dtype(np.int64)


def _empty_index() -> np.ndarray:
    return np.empty((0,), _I64)


# --------------------------------------------------------------------------- order statistics


def _nan_of(dt: np.dtype[Any]) -> np.ndarray:
    """NaN in a floating dtype; PyTorch gives the same for an empty integer median (as 0)."""
    return np.asarray(np.nan if dt.kind == "f" else 0, dt)


@impl(aten.median.default, CPU)
def median(self: Tensor) -> Tensor:
    check_order_statistic(self.dtype, "median")
    x = self._edata.reshape(-1)
    if x.size == 0 or (x.dtype.kind == "f" and np.isnan(x).any()):
        return wrap(_nan_of(x.dtype))
    k = (x.size - 1) // 2
    return wrap(np.asarray(np.partition(x, k)[k]))


@impl(aten.nanmedian.default, CPU)
def nanmedian(self: Tensor) -> Tensor:
    check_order_statistic(self.dtype, "nanmedian")
    x = self._edata.reshape(-1)
    if x.dtype.kind == "f":
        x = x[~np.isnan(x)]
    if x.size == 0:
        return wrap(_nan_of(x.dtype))
    k = (x.size - 1) // 2
    return wrap(np.asarray(np.partition(x, k)[k]))


def _last_axis(x: np.ndarray, d: int) -> np.ndarray:
    """``x`` with dim ``d`` moved last (a view)."""
    return x if d == x.ndim - 1 else np.moveaxis(x, d, -1)


def _pick(x: np.ndarray, idx: np.ndarray, d: int, keepdim: bool, result: Any) -> Any:
    """Values of ``x`` (dim ``d`` last) at the last-axis positions ``idx`` (shape ``(..., 1)``),
    as a (values, indices) result with dim ``d`` kept or dropped."""
    values = np.take_along_axis(x, idx, -1)
    if keepdim:
        values, idx = np.moveaxis(values, -1, d), np.moveaxis(idx, -1, d)
    else:
        values, idx = values[..., 0], idx[..., 0]
    return result(wrap(_dense(values)), wrap(_dense(idx.astype(_I64, copy=False))))


def _dense(a: np.ndarray) -> np.ndarray:
    """``a`` C-contiguous (``np.ascontiguousarray`` would make a 0-dim array 1-dim)."""
    return a if a.flags.c_contiguous else a.copy()


def _kth(x: np.ndarray, k: int) -> np.ndarray:
    """The last-axis position ``(..., 1)`` of the ``k``-th smallest element of each slice
    (NaN largest): the value by ``np.partition``, then its first occurrence (a tie's index is
    the algorithm's: NOTE [ties in order statistics])."""
    value = np.partition(x, k, axis=-1)[..., k : k + 1]
    idx = np.argmax(x == value, axis=-1)[..., None]
    if x.dtype.kind == "f":
        nan = np.isnan(value)
        if nan.any():  # NaN equals nothing: its position is a NaN's
            idx = np.where(nan, np.argmax(np.isnan(x), -1)[..., None], idx)
    return idx


def _scalar_result(x: np.ndarray, result: Any) -> Any:
    """A selection of a 0-dim tensor: itself, at index 0."""
    return result(wrap(x.copy()), wrap(np.zeros((), _I64)))


@impl(aten.median.dim, CPU)
def median_dim(self: Tensor, dim: int, keepdim: bool = False) -> Any:
    check_order_statistic(self.dtype, "median")
    d, _ = along(self._edata.shape, dim, keepdim, "median")
    if self.ndim == 0:
        return _scalar_result(self._edata, median_t)
    x = _last_axis(self._edata, d)
    idx = _kth(x, (x.shape[-1] - 1) // 2)
    if x.dtype.kind == "f":
        nan = np.isnan(x)
        has = nan.any(-1, keepdims=True)
        if has.any():  # a slice with a NaN has median NaN, at (the first) NaN's index
            idx = np.where(has, np.argmax(nan, -1)[..., None], idx)
    return _pick(x, idx, d, keepdim, median_t)


@impl(aten.nanmedian.dim, CPU)
def nanmedian_dim(self: Tensor, dim: int, keepdim: bool = False) -> Any:
    check_order_statistic(self.dtype, "nanmedian")
    d, _ = along(self._edata.shape, dim, keepdim, "nanmedian")
    if self.ndim == 0:
        return _scalar_result(self._edata, nanmedian_t)
    x = _last_axis(self._edata, d)
    if x.dtype.kind != "f":
        return _pick(x, _kth(x, (x.shape[-1] - 1) // 2), d, keepdim, nanmedian_t)
    order = np.argsort(x, axis=-1, kind="stable")  # NaN last
    count = (~np.isnan(x)).sum(-1, keepdims=True)
    k = np.maximum((count - 1) // 2, 0)  # all NaN: the first NaN
    return _pick(x, np.take_along_axis(order, k, -1), d, keepdim, nanmedian_t)


@impl(aten.kthvalue.default, CPU)
def kthvalue(self: Tensor, k: int, dim: int = -1, keepdim: bool = False) -> Any:
    d, _ = along(self._edata.shape, dim, keepdim, "kthvalue")
    check_kthvalue(self._edata.shape, k, d)
    if self.ndim == 0:  # itself, whatever the dtype (as PyTorch)
        return _scalar_result(self._edata, kthvalue_t)
    check_order_statistic(self.dtype, "kthvalue")
    x = _last_axis(self._edata, d)
    return _pick(x, _kth(x, k - 1), d, keepdim, kthvalue_t)


@impl(aten.mode.default, CPU)
def mode(self: Tensor, dim: int = -1, keepdim: bool = False) -> Any:
    """The most frequent value of each slice (the smallest of those tied for it), at the last
    index where it occurs; NaN equals nothing, so each NaN counts once."""
    d, _ = along(self._edata.shape, dim, keepdim, "mode")
    if self.ndim == 0:  # itself, whatever the dtype (as PyTorch)
        return _scalar_result(self._edata, mode_t)
    x = _last_axis(self._edata, d)
    if x.size == 0:  # no kernel runs: no dtype check either
        shape = x.shape[:-1] + ((1,) if keepdim else ())
        empty = np.empty(shape, x.dtype)
        return mode_t(wrap(np.moveaxis(empty, -1, d) if keepdim else empty),
                      wrap(np.empty(empty.shape, _I64)))  # fmt: skip
    check_mode(self.dtype)
    n = x.shape[-1]
    order = np.argsort(x, axis=-1, kind="stable")  # equal values: indices ascending
    s = np.take_along_axis(x, order, -1)
    starts = np.ones(s.shape, bool)
    starts[..., 1:] = s[..., 1:] != s[..., :-1]
    pos = np.arange(n)
    first = np.maximum.accumulate(np.where(starts, pos, 0), axis=-1)  # start of each run
    ends = np.ones(s.shape, bool)
    ends[..., :-1] = starts[..., 1:]
    length = np.where(ends, pos - first + 1, 0)
    best = np.argmax(length, axis=-1)[..., None]  # the first longest run: the smallest value
    return _pick(x, np.take_along_axis(order, best, -1), d, keepdim, mode_t)


# --------------------------------------------------------------------------- uniqueness


def _runs(s: np.ndarray) -> np.ndarray:
    """True where a run of equal elements of the 1-D ``s`` starts (NaN equals nothing)."""
    mask = np.empty(s.shape[0], bool)
    if s.shape[0]:
        mask[0] = True
        np.not_equal(s[1:], s[:-1], out=mask[1:])
    return mask


def _row_runs(rows: np.ndarray) -> np.ndarray:
    """True where a run of equal rows of the 2-D ``rows`` starts."""
    mask = np.empty(rows.shape[0], bool)
    if rows.shape[0]:
        mask[0] = True
        mask[1:] = (rows[1:] != rows[:-1]).any(axis=1)
    return mask


def _counts(mask: np.ndarray) -> np.ndarray:
    """The length of each run, from the mask of where runs start."""
    starts = np.flatnonzero(mask)
    return np.diff(np.append(starts, mask.shape[0])).astype(_I64, copy=False)


@impl(aten._unique2.default, CPU)
def unique2(
    self: Tensor, sorted: bool = True, return_inverse: bool = False, return_counts: bool = False
) -> tuple[Tensor, Tensor, Tensor]:
    """The distinct elements, sorted (PyTorch's CPU kernel sorts whatever ``sorted`` says),
    each NaN distinct; the inverse and counts are empty unless asked for. ``np.unique``
    itself (a hash table when neither is asked for)."""
    check_unique(self.dtype)
    x = self._edata.reshape(-1)
    if not (return_inverse or return_counts):
        return wrap(np.unique(x, equal_nan=False)), wrap(_empty_index()), wrap(_empty_index())
    values, inverse, counts = np.unique(x, return_inverse=True, return_counts=True,
                                        equal_nan=False)  # fmt: skip
    inverse = inverse.reshape(self._edata.shape) if return_inverse else _empty_index()
    counts = counts if return_counts else _empty_index()
    return wrap(values), wrap(inverse.astype(_I64, copy=False)), wrap(counts.astype(_I64))


def _as_rows(x: np.ndarray, d: int) -> np.ndarray:
    """``x`` as a 2-D array of its slices along ``d``, one per row."""
    return np.moveaxis(x, d, 0).reshape(x.shape[d], -1)


def _from_rows(rows: np.ndarray, like: np.ndarray, d: int) -> np.ndarray:
    rest = tuple(n for i, n in enumerate(like.shape) if i != d)
    return _dense(np.moveaxis(rows.reshape((rows.shape[0], *rest)), 0, d))


@impl(aten.unique_dim.default, CPU)
def unique_dim(
    self: Tensor,
    dim: int,
    sorted: bool = True,
    return_inverse: bool = False,
    return_counts: bool = False,
) -> tuple[Tensor, Tensor, Tensor]:
    """The distinct slices along ``dim``, in lexicographic order; inverse and counts always
    (as PyTorch's kernel)."""
    check_unique(self.dtype, "unique_dim")
    x = self._edata
    d = unique_dim_of(x.shape, dim)
    if x.shape[d] == 0:
        return wrap(x.copy()), wrap(_empty_index()), wrap(_empty_index())
    rows = _as_rows(x, d)
    order = np.lexsort(rows.T[::-1]) if rows.shape[1] else np.arange(rows.shape[0])
    srt = rows[order]
    mask = _row_runs(srt)
    inverse = np.empty(rows.shape[0], _I64)
    inverse[order] = np.cumsum(mask) - 1
    return wrap(_from_rows(srt[mask], x, d)), wrap(inverse), wrap(_counts(mask))


@impl(aten.unique_consecutive.default, CPU)
def unique_consecutive(
    self: Tensor, return_inverse: bool = False, return_counts: bool = False, dim: int | None = None
) -> tuple[Tensor, Tensor, Tensor]:
    """One element (or slice along ``dim``) per run of equal ones, in order."""
    check_unique(self.dtype, "unique_consecutive")
    x = self._edata
    if dim is None or (x.ndim == 1 and dim == 0):  # PyTorch's flat path (flags honoured)
        flat = x.reshape(-1)
        mask = _runs(flat)
        inverse = (np.cumsum(mask) - 1).reshape(x.shape) if return_inverse else _empty_index()
        counts = _counts(mask) if return_counts else _empty_index()
        return wrap(flat[mask]), wrap(inverse.astype(_I64, copy=False)), wrap(counts)
    d = unique_dim_of(x.shape, dim, "unique_consecutive")
    if x.shape[d] == 0:
        return wrap(x.copy()), wrap(_empty_index()), wrap(_empty_index())
    rows = _as_rows(x, d)
    mask = _row_runs(rows)
    inverse = (np.cumsum(mask) - 1).astype(_I64, copy=False)
    return wrap(_from_rows(rows[mask], x, d)), wrap(inverse), wrap(_counts(mask))


# --------------------------------------------------------------------------- binary search
# NOTE [searchsorted]: PyTorch runs a plain binary search per value (lower bound:
# ``!(seq[mid] >= v)`` moves right; upper bound: ``!(seq[mid] > v)``). On a sorted sequence
# without NaN that is what ``np.searchsorted`` computes, so that is the fast path. Otherwise
# (a NaN in the sequence, or an unsorted one) the answer is an artifact of the search's
# steps, so ember runs the same steps, vectorized over every value at once.


def _binary_search(seq: np.ndarray, vals: np.ndarray, right: bool) -> np.ndarray:
    """PyTorch's search, step by step: ``seq`` (R, N), ``vals`` (R, M) -> (R, M)."""
    r, n = seq.shape
    lo = np.zeros(vals.shape, _I64)
    hi = np.full(vals.shape, n, _I64)
    rows = np.arange(r)[:, None]
    with quiet_block():
        while True:
            active = lo < hi
            if not active.any():
                return lo
            mid = lo + ((hi - lo) >> 1)
            at = seq[rows, np.minimum(mid, n - 1)]
            go_right = ~(at > vals) if right else ~(at >= vals)
            lo = np.where(active & go_right, mid + 1, lo)
            hi = np.where(active & ~go_right, mid, hi)


def _is_clean(seq: np.ndarray) -> bool:
    """Sorted along the last dim, without NaN: np.searchsorted gives PyTorch's answer."""
    if seq.dtype.kind == "f" and np.isnan(seq).any():
        return False
    return bool((seq[..., 1:] >= seq[..., :-1]).all())


def search(seq: np.ndarray, vals: np.ndarray, right: bool) -> np.ndarray:
    """Insertion points of ``vals`` in ``seq`` (1-D, or rows matching ``vals``' leading dims)."""
    side = "right" if right else "left"
    if seq.ndim == 1:
        if _is_clean(seq):
            return np.searchsorted(seq, vals, side).astype(_I64, copy=False)
        flat = vals.reshape(1, -1)
        return _binary_search(seq[None], flat, right).reshape(vals.shape)
    # rows by their explicit count: reshape(-1, 0) of an empty row is ambiguous
    rows = math.prod(seq.shape[:-1])
    n = seq.shape[-1]
    s2, v2 = seq.reshape(rows, n), vals.reshape(rows, vals.shape[-1])
    if not _is_clean(s2):
        return _binary_search(s2, v2, right).reshape(vals.shape)
    # one search over every row at once: values become global ranks (equal values, equal
    # ranks), offset by row, so the rows' keys are sorted one after another
    both = np.sort(np.concatenate([s2.ravel(), v2.ravel()]))
    width = both.size + 1
    offset = np.arange(s2.shape[0], dtype=_I64)[:, None] * width
    keys = (np.searchsorted(both, s2, "left") + offset).ravel()
    found = np.searchsorted(keys, np.searchsorted(both, v2, "left") + offset, side)
    return (found - np.arange(s2.shape[0], dtype=_I64)[:, None] * n).reshape(vals.shape)


def _searchsorted(
    seq_t: Tensor, value: Any, out_int32: bool, right: bool, side: str | None, sorter: Any
) -> Tensor:
    scalar = not isinstance(value, Tensor)
    right, rdt = search_plan(
        seq_t._edata.shape,
        seq_t.dtype,
        None if scalar else value._edata.shape,
        None if scalar else value.dtype,
        out_int32,
        right,
        side,
        sorter,
    )
    seq = seq_t._edata
    if sorter is not None:
        order = sorter._edata
        if order.size and (order.min() < 0 or order.max() >= seq.shape[-1]):
            raise RuntimeError("torch.searchsorted(): sorter index out of range")
        seq = np.take_along_axis(seq, order, -1)
    vals = np.asarray(value) if scalar else value._edata
    common = dtypes.result_type_of([seq_t, value]).np  # a Python number as a wrapped one
    seq = seq.astype(common, copy=False)
    with quiet_block():
        vals = vals.astype(common, copy=False)  # (-10 into uint8 wraps, as in PyTorch)
    return wrap(search(seq, vals, right).astype(rdt.np, copy=False))


def searchsorted(
    sorted_sequence: Tensor,
    self: Any,
    *,
    out_int32: bool = False,
    right: bool = False,
    side: str | None = None,
    sorter: Tensor | None = None,
) -> Tensor:
    """``searchsorted.Tensor`` and ``searchsorted.Scalar`` (``self`` a number)."""
    return _searchsorted(sorted_sequence, self, out_int32, right, side, sorter)


impl(aten.searchsorted.Tensor, CPU, searchsorted)
impl(aten.searchsorted.Scalar, CPU, searchsorted)


def bucketize(
    self: Any, boundaries: Tensor, *, out_int32: bool = False, right: bool = False
) -> Tensor:
    """``bucketize.Tensor`` and ``bucketize.Scalar`` (``self`` a number)."""
    check_boundaries(boundaries)
    return _searchsorted(boundaries, self, out_int32, right, None, None)


impl(aten.bucketize.Tensor, CPU, bucketize)
impl(aten.bucketize.Scalar, CPU, bucketize)


# --------------------------------------------------------------------------- counting


@impl(aten.bincount.default, CPU)
def bincount(self: Tensor, weights: Tensor | None = None, minlength: int = 0) -> Tensor:
    check_bincount(self, weights, minlength)
    x = self._edata
    rdt = bincount_dtype(self, weights).np
    if x.size == 0:
        return wrap(np.zeros((minlength,), rdt))
    w = None if weights is None else weights._edata
    try:  # (np.bincount finds a negative value in the pass it makes anyway)
        counts = np.bincount(x, w, minlength)
    except ValueError:
        raise RuntimeError(
            f"bincount only supports 1-d non-negative integral inputs (the smallest value is "
            f"{int(x.min())})"
        ) from None
    return wrap(counts.astype(rdt, copy=False))


@impl(aten.histc.default, CPU)
def histc(self: Tensor, bins: int = 100, min: Any = 0, max: Any = 0) -> Tensor:
    """Counts of the elements in ``bins`` equal-width bins over ``[min, max]`` (the data's own
    range when both are 0), in the input's dtype; NaN and elements outside are left out, and
    ``max`` falls in the last bin. Positions are computed in the input's precision, as
    PyTorch computes them."""
    check_histc(self.dtype, bins, min, max)
    x = self._edata.reshape(-1)
    lo, hi = float(min), float(max)
    if lo == hi and x.size:
        with quiet_block():
            lo, hi = float(np.min(x)), float(np.max(x))
    lo, hi = histc_range(lo, hi)
    dt = x.dtype
    left, right = dt.type(lo), dt.type(hi)
    with quiet_block():
        inside = x[(x >= left) & (x <= right)]
        pos = ((inside - left) * bins / (right - left)).astype(_I64)
    np.minimum(pos, bins - 1, out=pos)
    return wrap(np.bincount(pos, minlength=bins).astype(dt))
