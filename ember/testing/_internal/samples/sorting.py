"""Sample inputs for the ops built on sorted order (see ember/testing/_internal/opinfo.py).

Selections that return an index (``median(dim)``, ``nanmedian(dim)``, ``kthvalue``) get
distinct values: for tied values PyTorch's index is its algorithm's (NOTE [ties in order
statistics]). ``mode`` gets ties on purpose: its index is defined.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

import ember
from ember import dtypes
from ember.testing._internal.opinfo import (
    ALL_DTYPES,
    FLOATS,
    NUMERIC,
    ErrorInput,
    SampleInput,
    errors,
    samples,
)

S = SampleInput
NAN = float("nan")
QUANTILE_DTYPES = (dtypes.float32, dtypes.float64, dtypes.float16, dtypes.int64)


def distinct(shape: tuple[int, ...], dtype: Any, nan_at: tuple[int, ...] = ()) -> Any:
    """A tensor of distinct values (a shuffled range), with NaN at the flat positions
    ``nan_at`` (floating dtypes only)."""
    n = int(np.prod(shape))
    rng = np.random.default_rng(n)
    arr = (rng.permutation(n) - n // 2).astype(dtype.np)
    if dtype is dtypes.uint8:
        arr = rng.permutation(n).astype(np.uint8)
    if dtype.category == dtypes.FLOATING:
        arr = arr * 0.5
        arr[list(nan_at)] = np.nan
    return ember.from_numpy(arr.astype(dtype.np).reshape(shape))


def _unsupported(dtype: Any) -> bool:
    return dtype is dtypes.bool_ or dtype.category == dtypes.COMPLEX


# --------------------------------------------------------------------------- order statistics


@samples("median.default", "nanmedian.default", dtypes=ALL_DTYPES)
def median_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield S(make((3, 4)))
    yield S(make((5,), low=-2, high=2), name="ties")
    yield S(make((3, 4), noncontiguous=True), name="nc")
    yield S(make(()), name="0-dim")
    if dtype.category == dtypes.FLOATING:
        yield S(distinct((7,), dtype, nan_at=(2, 5)), name="nan")
        yield S(ember.tensor([NAN, NAN], dtype=dtype), name="all nan")
        yield S(make((0,)), name="empty")


@samples("median.dim", "nanmedian.dim", dtypes=ALL_DTYPES)
def median_dim_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    if _unsupported(dtype):
        yield S(make((3, 4)), 1, name="unsupported dtype raises")
        return
    x = distinct((3, 5), dtype)
    yield S(x, 1)
    yield S(x, 0, True)
    yield S(x, -1, keepdim=True)
    yield S(distinct((4, 6), dtype)[:, ::2], 1, name="nc")
    yield S(distinct((2, 3, 4), dtype), 1, name="3-D, middle dim")
    yield S(make(()), 0, name="0-dim")
    yield S(make((0, 3)), 1, name="empty, other dim")
    yield S(make((0, 3)), 0, name="empty dim raises")
    if dtype.category == dtypes.FLOATING:
        yield S(distinct((3, 4), dtype, nan_at=(1, 6)), 1, name="one nan in a row")
        # (a row of NaN ties: which NaN's index PyTorch reports is its algorithm's; the
        # value is checked in tests/test_tensor_api.py)


@samples("kthvalue.default", dtypes=ALL_DTYPES)
def kthvalue_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    if _unsupported(dtype):
        yield S(make((3, 4)), 1, name="unsupported dtype raises")
        return
    x = distinct((3, 5), dtype)
    yield S(x, 1)
    yield S(x, 5)
    yield S(x, 2, 0, True)
    yield S(distinct((4, 6), dtype)[:, ::2], 3, -1, name="nc")
    yield S(make(()), 1, name="0-dim")
    yield S(x, 6, name="k too large raises")
    yield S(x, 0, name="k = 0 raises")
    yield S(make((3, 0)), 1, name="empty dim raises")
    if dtype.category == dtypes.FLOATING:
        yield S(distinct((3, 4), dtype, nan_at=(1,)), 4, 1, name="nan is the largest")


@samples("mode.default", dtypes=ALL_DTYPES)
def mode_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    x = make((3, 6), low=-2, high=2)
    yield S(x)
    yield S(x, 0)
    yield S(x, 1, True)
    yield S(make((4, 6), low=-2, high=2, noncontiguous=True), -1, name="nc")
    yield S(make((2, 3, 5), low=0, high=3), 1, name="3-D")
    yield S(make(()), name="0-dim")
    yield S(make((0, 3)), 1, name="empty, other dim")
    yield S(make((0, 3)), 0, name="empty dim raises")
    # (no NaN: PyTorch's mode sorts with a comparison NaN breaks, so its answer is the sort's)


def _quantile_inputs(make: Any, dtype: Any) -> Iterator[tuple[Any, str]]:
    if dtype not in (dtypes.float32, dtypes.float64):
        yield make((3, 4)), "unsupported dtype raises"
        return
    yield distinct((3, 5), dtype), ""
    yield distinct((4, 6), dtype)[:, ::2], "nc"
    yield distinct((3, 4), dtype, nan_at=(1, 6, 7)), "nan"


@samples("quantile.scalar", "nanquantile.scalar", dtypes=QUANTILE_DTYPES)
def quantile_scalar_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    for x, name in _quantile_inputs(make, dtype):
        yield S(x, 0.3, name=name)
        yield S(x, 0.5, 1, name=name)
        yield S(x, 1.0, 0, True, name=name)
        yield S(x, 0.25, None, True, name=f"{name} keepdim, all")
        for mode in ("lower", "higher", "nearest", "midpoint", "linear"):
            yield S(x, 0.4, -1, interpolation=mode, name=f"{name} {mode}")
    if dtype in (dtypes.float32, dtypes.float64):
        x = distinct((3, 4), dtype)
        yield S(make(()), 0.5, name="0-dim")
        yield S(make(()), 0.5, 0, name="0-dim, dim 0")
        yield S(x, 1.5, name="q > 1 raises")
        yield S(x, -0.1, name="q < 0 raises")
        yield S(x, 0.5, interpolation="cubic", name="bad interpolation raises")
        yield S(make((0, 3)), 0.5, name="empty raises")
        yield S(x, 0.5, 2, name="dim out of range")


@samples("quantile.default", "nanquantile.default", dtypes=QUANTILE_DTYPES, meta_errors=False)
def quantile_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    def q(*values: float, d: Any = dtype) -> Any:
        return ember.tensor(values if len(values) != 1 else values[0], dtype=d)

    for x, name in _quantile_inputs(make, dtype):
        yield S(x, q(0.1, 0.5, 1.0), name=name)
        yield S(x, q(0.2, 0.75), 1, name=f"{name} dim 1")
        yield S(x, q(0.0, 0.6), 0, True, name=f"{name} keepdim")
        yield S(x, q(0.3), None, True, name=f"{name} 0-dim q, keepdim")
        yield S(x, q(0.5, 1 / 6), interpolation="nearest", name=f"{name} nearest")
        yield S(x, q(0.5, 0.2), 1, interpolation="midpoint", name=f"{name} midpoint")
    if dtype in (dtypes.float32, dtypes.float64):
        x = distinct((3, 4), dtype)
        other = dtypes.float64 if dtype is dtypes.float32 else dtypes.float32
        yield S(x, q(0.5, d=other), name="q dtype raises")
        yield S(x, ember.tensor([[0.5]], dtype=dtype), name="2-D q raises")
        yield S(x, q(0.5, 1.5), name="q > 1 raises")


# --------------------------------------------------------------------------- uniqueness


@samples("_unique2.default", dtypes=ALL_DTYPES)
def unique2_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    x = make((3, 5), low=-3, high=3)
    yield S(x)
    yield S(x, True, True)
    yield S(x, True, False, True, name="counts")
    yield S(x, False, True, True, name="sorted=False sorts too")
    yield S(make((4, 6), low=-3, high=3, noncontiguous=True), True, True, True, name="nc")
    yield S(make(()), True, True, True, name="0-dim")
    yield S(make((0, 3)), True, True, True, name="empty")
    if dtype.category == dtypes.FLOATING:
        yield S(ember.tensor([1.0, NAN, 2.0, NAN, 1.0], dtype=dtype), True, True, True,
                name="each nan distinct")  # fmt: skip


@samples("unique_dim.default", dtypes=ALL_DTYPES)
def unique_dim_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    rows = make((2, 3), low=-2, high=2)
    x = ember.cat([rows, rows[:1], make((1, 3), low=-2, high=2), rows[1:]])  # repeated rows
    yield S(x, 0)
    yield S(x, 1, True, True, True)
    yield S(x.t(), -1, name="transposed, dim -1")
    yield S(make((2, 4, 2), low=0, high=2), 1, name="3-D")
    yield S(make((0, 3)), 0, name="empty selected dim")
    yield S(make((2, 0)), 0, name="empty other dim raises")
    yield S(make(()), 0, name="0-dim raises")


@samples("unique_consecutive.default", dtypes=ALL_DTYPES)
def unique_consecutive_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    x = make((12,), low=-1, high=1)
    yield S(x)
    yield S(x, True, True)
    yield S(make((3, 4), low=0, high=2), False, True, name="2-D flattened, counts")
    rows = make((2, 3), low=-2, high=2)
    y = ember.cat([rows[:1], rows[:1], rows[1:], rows[:1]])
    yield S(y, True, True, 0, name="dim 0")
    yield S(y.t(), dim=1, name="dim 1, no flags: inverse and counts anyway")
    yield S(make(()), True, True, name="0-dim")
    yield S(make((0, 3)), True, True, 0, name="empty dim")
    yield S(make(()), True, True, 0, name="0-dim with dim raises")
    if dtype.category == dtypes.FLOATING:
        yield S(ember.tensor([NAN, NAN, 1.0, 1.0], dtype=dtype), True, True, name="nan")


# --------------------------------------------------------------------------- binary search


def _sorted(make: Any, shape: tuple[int, ...], dtype: Any) -> Any:
    return make(shape, low=-5, high=5).sort(-1)[0]


@samples("searchsorted.Tensor", dtypes=NUMERIC, meta_errors=False)
def searchsorted_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    seq = _sorted(make, (8,), dtype)
    values = make((3, 4), low=-6, high=6)
    yield S(seq, values)
    yield S(seq, values, right=True)
    yield S(seq, values, side="right", out_int32=True, name="side, int32")
    yield S(seq, values, right=False, side="left")
    yield S(seq, seq, name="the sequence itself (ties)")
    rows = _sorted(make, (3, 6), dtype)
    yield S(rows, make((3, 4), low=-6, high=6), name="batched rows")
    yield S(rows, make((3, 4), low=-6, high=6), right=True, name="batched rows, right")
    many = _sorted(make, (2, 20, 5), dtype)
    yield S(many, make((2, 20, 3), low=-6, high=6), name="many rows")
    order = make((6,), low=-5, high=5)
    yield S(order, values, sorter=order.argsort(), name="sorter")
    yield S(order, values, sorter=order.argsort(), right=True, name="sorter, right")
    yield S(seq, make((0,)), name="no values")
    yield S(make((0,)), values, name="empty sequence")
    yield S(seq[::2], make((5,), noncontiguous=True), name="nc")
    if dtype.category == dtypes.FLOATING:
        nan = ember.tensor([1.0, 2.0, 2.0, 3.0, NAN], dtype=dtype)
        probe = ember.tensor([NAN, 2.0, 0.0, 5.0, float("inf")], dtype=dtype)
        yield S(nan, probe, name="nan in the sequence")
        yield S(nan, probe, right=True, name="nan in the sequence, right")
        yield S(seq, probe, name="nan and inf values")
    yield S(seq, make((3,), dtypes.float64 if dtype is not dtypes.float64 else dtypes.int64),
            name="mixed dtypes")  # fmt: skip
    yield S(seq, values, right=True, side="left", name="opposite side and right raise")
    yield S(seq, values, side="middle", name="bad side raises")
    yield S(rows, make((2, 4)), name="leading dims differ raise")
    yield S(make(()), values, name="0-dim sequence raises")
    yield S(order, values, sorter=order.argsort().int(), name="int32 sorter raises")
    yield S(order, values, sorter=order.argsort()[:4], name="short sorter raises")
    yield S(order, values, sorter=order.argsort() + 6, name="sorter out of range raises")


@samples("searchsorted.Scalar", dtypes=NUMERIC)
def searchsorted_scalar_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    seq = _sorted(make, (8,), dtype)
    yield S(seq, 1)
    yield S(seq, -10, right=True)
    yield S(seq, 2, side="right", out_int32=True)
    yield S(seq, seq[3].item(), name="a value of the sequence")
    yield S(_sorted(make, (2, 4), dtype), 1, name="2-D sequence raises")


@samples("bucketize.Tensor", dtypes=NUMERIC)
def bucketize_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    edges = _sorted(make, (6,), dtype)
    values = make((3, 4), low=-6, high=6)
    yield S(values, edges)
    yield S(values, edges, right=True, out_int32=True)
    yield S(edges, edges, name="the edges themselves")
    yield S(make(()), edges, name="0-dim")
    yield S(values, _sorted(make, (2, 3), dtype), name="2-D boundaries raise")


@samples("bucketize.Scalar", dtypes=NUMERIC)
def bucketize_scalar_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    edges = _sorted(make, (6,), dtype)
    yield S(2, edges)
    yield S(-10, edges, right=True)
    yield S(edges[2].item(), edges, out_int32=True, name="an edge")


# --------------------------------------------------------------------------- counting


@samples("bincount.default", dtypes=ALL_DTYPES)
def bincount_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    if dtype.category != dtypes.INTEGRAL:
        yield S(make((5,)), name="non-integer input raises")
        return
    x = make((10,), low=0, high=7)
    yield S(x)
    yield S(x, None, 12, name="minlength")
    yield S(x, minlength=2, name="minlength below the max")
    for w in (dtypes.float32, dtypes.float64, dtypes.int64, dtypes.float16, dtypes.bool_):
        yield S(x, make((10,), w), name=f"{w.name} weights")
    yield S(make((6,), low=0, high=4, noncontiguous=True), name="nc")
    yield S(make((0,)), make((0,), dtypes.float32), 3, name="empty: int64 zeros")
    yield S(make((0,)), name="empty")
    yield S(make((2, 3), low=0, high=3), name="2-D raises")
    yield S(x, None, -1, name="negative minlength raises")
    yield S(x, make((4,), dtypes.float32), name="weights length raises")
    if dtype.is_signed:
        yield S(ember.tensor([1, -1], dtype=dtype), name="negative value raises")


@samples("histc.default", dtypes=(*FLOATS, dtypes.int64), meta_errors=False)
def histc_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    x = make((4, 5), low=-3, high=3)
    yield S(x)
    yield S(x, 7)
    yield S(x, 4, -1, 1, name="explicit range: outside left out")
    yield S(x, bins=3, min=0, max=0, name="data range")
    yield S(make((6,), noncontiguous=True), 5, name="nc")
    if dtype.category == dtypes.FLOATING:
        edges = ember.tensor([0.0, 0.25, 0.5, 1.0, 0.9999999, -0.0], dtype=dtype)
        yield S(edges, 4, 0, 1, name="edges: max in the last bin")
        yield S(ember.tensor([1.0, 1.0], dtype=dtype), 4, name="one value: range widened")
        yield S(ember.tensor([1.0, NAN, float("inf")], dtype=dtype), 4, 0, 2, name="nan, inf")
        yield S(ember.tensor([1.0, NAN], dtype=dtype), 4, name="nan in data range raises")
        yield S(make((0,)), 4, name="empty")
    yield S(x, 0, name="no bins raise")
    yield S(x, 4, 3, 1, name="min > max raises")


@errors("median.dim")
def median_errors() -> Iterator[ErrorInput]:
    yield ErrorInput(S(ember.zeros(0, 3), 0), IndexError, "non-zero size")
    yield ErrorInput(S(ember.tensor([True]), 0), NotImplementedError, "Bool")
