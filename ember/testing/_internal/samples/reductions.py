"""Sample inputs for the reduction ops (see ember/testing/_internal/opinfo.py)."""

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
    REALS,
    ErrorInput,
    SampleInput,
    errors,
    samples,
)

FLOATS_AND_COMPLEX = (*FLOATS, dtypes.complex64, dtypes.complex128)


def distinct(make: Any, shape: tuple[int, ...], dtype: Any) -> Any:
    """A tensor of distinct values (a shuffled range), for ops whose tie order PyTorch leaves
    unspecified (topk)."""
    n = int(np.prod(shape))
    rng = np.random.default_rng(n)
    return ember.from_numpy((rng.permutation(n) - n // 2).astype(dtype.np).reshape(shape))


@samples("sum.default", "prod.default", dtypes=ALL_DTYPES)
def whole_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((3, 4)))
    yield SampleInput(make(()))
    yield SampleInput(make((0, 3)), name="empty")
    yield SampleInput(make((3, 4), noncontiguous=True))
    yield SampleInput(make((2, 3), low=-2, high=2), dtype=ember.float64)
    yield SampleInput(make((2, 3), low=-2, high=2), dtype=ember.int32)


@samples("mean.default", dtypes=ALL_DTYPES)
def mean_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((3, 4)))  # raises for bool and integers, as PyTorch does
    yield SampleInput(make(()))
    yield SampleInput(make((0, 3)), name="empty")
    yield SampleInput(make((3, 4), noncontiguous=True))
    if dtype.category != dtypes.COMPLEX:
        yield SampleInput(make((2, 3)), dtype=ember.float64)
    yield SampleInput(make((2, 3)), dtype=ember.int64, name="int dtype raises")


def dim_list_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    x = make((2, 3, 4))
    yield SampleInput(x, [1])
    yield SampleInput(x, 1)
    yield SampleInput(x, [0, 2], True)
    yield SampleInput(x, [-1, 0])
    yield SampleInput(x, (), True, name="empty list: every dim")
    yield SampleInput(x, None, True)
    yield SampleInput(x, [1, -2], name="repeated dim raises")
    yield SampleInput(x, 3, name="dim out of range")
    yield SampleInput(make(()), 0)
    yield SampleInput(make(()), [-1], True)
    yield SampleInput(make((0, 3)), 0, name="empty")
    yield SampleInput(make((0, 3)), 1, True, name="empty")
    yield SampleInput(make((3, 4), noncontiguous=True), 1)


@samples("sum.dim_IntList", "mean.dim", dtypes=ALL_DTYPES)
def sum_dim_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield from dim_list_samples(make, dtype)
    yield SampleInput(make((2, 3), low=-2, high=2), 1, dtype=ember.float64)
    yield SampleInput(make((2, 3), low=-2, high=2), [0], keepdim=True, dtype=ember.complex64)


@samples("prod.dim_int", dtypes=ALL_DTYPES)
def prod_dim_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    x = make((2, 3, 4), low=-3, high=3)
    yield SampleInput(x, 1)
    yield SampleInput(x, -1, True)
    yield SampleInput(make(()), 0)
    yield SampleInput(make((0, 3)), 0)
    yield SampleInput(make((3, 4), noncontiguous=True, low=-3, high=3), 1)
    yield SampleInput(x, 0, dtype=ember.float64)


def with_specials(make: Any, dtype: Any, shape: tuple[int, ...]) -> Any:
    """Values with ties, and NaNs for floating dtypes (PyTorch: first index wins, NaN wins)."""
    x = make(shape, low=-3, high=3)
    if dtype.category == dtypes.FLOATING:
        arr = x.numpy().copy()
        arr.reshape(-1)[[1, 5]] = np.nan
        return ember.from_numpy(arr)
    return x


@samples("max.default", "min.default", dtypes=ALL_DTYPES)
def extreme_all_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((3, 4)))
    yield SampleInput(with_specials(make, dtype, (3, 4)), name="nan")
    yield SampleInput(make(()))
    yield SampleInput(make((3, 4), noncontiguous=True))
    yield SampleInput(make((0, 3)), name="empty raises")


@samples("max.dim", "min.dim", dtypes=ALL_DTYPES)
def extreme_dim_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    x = make((3, 4), low=-3, high=3)
    yield SampleInput(x, 1)
    yield SampleInput(x, 0, True)
    yield SampleInput(x, -1, keepdim=True)
    yield SampleInput(with_specials(make, dtype, (3, 4)), 1, name="nan")
    yield SampleInput(make(()), 0)
    yield SampleInput(make((3, 4), noncontiguous=True), 1)
    yield SampleInput(make((0, 3)), 1, name="empty non-reduced")
    yield SampleInput(make((0, 3)), 0, name="empty reduced raises")


@samples("max.other", "min.other", dtypes=ALL_DTYPES)
def extreme_other_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((3, 4)), make((3, 4)))
    yield SampleInput(with_specials(make, dtype, (3, 4)), make((4,)), name="nan, broadcast")
    yield SampleInput(make((3, 4)), make((), dtype=dtypes.float64), name="promotes")
    yield SampleInput(make((0, 3)), make((3,)))


@samples("amax.default", "amin.default", dtypes=ALL_DTYPES)
def amax_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    x = make((2, 3, 4), low=-3, high=3)
    yield SampleInput(x)
    yield SampleInput(x, [0, 2])
    yield SampleInput(x, 1, True)
    yield SampleInput(with_specials(make, dtype, (3, 4)), [1])
    yield SampleInput(make(()), 0)
    yield SampleInput(make((0, 3)), 1)
    yield SampleInput(make((0, 3)), name="empty raises")
    yield SampleInput(make((3, 4), noncontiguous=True), -1)


@samples("argmax.default", "argmin.default", dtypes=ALL_DTYPES)
def argmax_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    x = make((3, 4), low=-3, high=3)
    yield SampleInput(x)
    yield SampleInput(x, 1)
    yield SampleInput(x, 0, True)
    yield SampleInput(x, None, True)
    yield SampleInput(with_specials(make, dtype, (3, 4)), 1)
    yield SampleInput(with_specials(make, dtype, (3, 4)))
    yield SampleInput(make(()), 0)
    yield SampleInput(make((3, 4), noncontiguous=True), 1)
    yield SampleInput(make((0, 3)), name="empty raises")


@samples("var.correction", "std.correction", "var_mean.correction", "std_mean.correction",
         dtypes=(*FLOATS_AND_COMPLEX, dtypes.int64, dtypes.bool_))  # fmt: skip
def var_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    x = make((3, 4, 5))
    yield SampleInput(x)
    yield SampleInput(x, [1])
    yield SampleInput(x, 1, correction=0)
    yield SampleInput(x, [0, 2], correction=2.5, keepdim=True)
    yield SampleInput(x, None, correction=0, keepdim=True)
    yield SampleInput(make((1,)), name="one element: nan")
    yield SampleInput(make((3,)), correction=10, name="correction > n: inf")
    yield SampleInput(make(()))
    yield SampleInput(make((0, 3)), 0)
    yield SampleInput(make((3, 4), noncontiguous=True), 1)


@samples("var.dim", "std.dim", dtypes=(dtypes.float32, dtypes.float64, dtypes.complex64))
def var_dim_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    x = make((3, 4))
    yield SampleInput(x, [1])
    yield SampleInput(x, 0, False, True)
    yield SampleInput(x, None, unbiased=False)


@samples("var.default", "std.default", dtypes=(dtypes.float32, dtypes.float64, dtypes.int64))
def var_default_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((3, 4)))
    yield SampleInput(make((3, 4)), False)


@samples("logsumexp.default", dtypes=REALS)
def logsumexp_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    x = make((3, 4), low=-3, high=3)
    yield SampleInput(x, [1])
    yield SampleInput(x, 0, True)
    yield SampleInput(x, [0, 1])
    yield SampleInput(make(()), 0)
    yield SampleInput(make((0, 3)), 0, name="empty: -inf")
    if dtype.category == dtypes.FLOATING:
        inf = float("inf")
        special = np.array([[inf, inf, 1], [-inf, -inf, -inf], [np.nan, 1, 2]], dtype.np)
        yield SampleInput(ember.from_numpy(special), 1, name="infinities")
    yield SampleInput(make((3, 4), noncontiguous=True), 1)


@samples("_softmax.default", "_log_softmax.default", dtypes=ALL_DTYPES)
def softmax_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    x = make((3, 4), low=-3, high=3)
    yield SampleInput(x, 1, False)  # raises for non-floating dtypes, as PyTorch does
    yield SampleInput(x, 0, False)
    yield SampleInput(x, -1, True, name="half_to_float raises on cpu")
    yield SampleInput(make(()), 0, False)
    yield SampleInput(make((0, 3)), 0, False)
    yield SampleInput(make((3, 4), noncontiguous=True), 1, False)


@samples("_softmax_backward_data.default", "_log_softmax_backward_data.default",
         dtypes=ALL_DTYPES)  # fmt: skip
def softmax_backward_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    """A gradient and a softmax output (or a log_softmax one: any values do) of one shape."""
    g, out = make((3, 4), low=-2, high=2), make((3, 4), low=-2, high=2)
    yield SampleInput(g, out, 1, dtype)  # raises for non-floating dtypes, as PyTorch does
    yield SampleInput(g, out, 0, dtype)
    yield SampleInput(g, out, -1, ember.float64, name="another input_dtype")
    yield SampleInput(g, out, 1, ember.float16, name="half input_dtype")  # float32 raises
    yield SampleInput(make(()), make(()), 0, dtype)
    yield SampleInput(make((0, 3)), make((0, 3)), 0, dtype)
    yield SampleInput(make((3, 4), noncontiguous=True), make((3, 4), noncontiguous=True), 1, dtype)


@samples("softmax.int", "log_softmax.int", dtypes=ALL_DTYPES)
def softmax_int_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    x = make((3, 4), low=-3, high=3)
    yield SampleInput(x, 1)
    yield SampleInput(x, 0, ember.float64)
    yield SampleInput(make(()), -1)


@samples("all.default", "any.default", dtypes=ALL_DTYPES)
def all_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((3, 4), low=0, high=2))
    yield SampleInput(make((3, 4), low=1, high=3))
    yield SampleInput(make(()))
    yield SampleInput(make((0, 3)))
    yield SampleInput(make((3, 4), noncontiguous=True))


@samples("all.dim", "any.dim", dtypes=ALL_DTYPES)
def all_dim_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    x = make((3, 4), low=0, high=2)
    yield SampleInput(x, 1)
    yield SampleInput(x, -2, True)
    yield SampleInput(make(()), 0)
    yield SampleInput(make((0, 3)), 0)
    yield SampleInput(make((3, 4), noncontiguous=True, low=0, high=2), 1)


@samples("all.dims", "any.dims", dtypes=ALL_DTYPES)
def all_dims_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    x = make((2, 3, 4), low=0, high=2)
    yield SampleInput(x)
    yield SampleInput(x, [0, 2])
    yield SampleInput(x, [1], True)
    yield SampleInput(x, [], name="empty list: no dim")
    yield SampleInput(x, None, True)
    yield SampleInput(x, [0, 0], name="repeated dim raises")


@samples("linalg_vector_norm.default", dtypes=(*FLOATS_AND_COMPLEX, dtypes.int64, dtypes.bool_))
def vector_norm_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    x = make((3, 4), low=-3, high=3)
    yield SampleInput(x)
    for p in (1, 0, 3, 0.5, -1, float("inf"), float("-inf")):
        yield SampleInput(x, p, [1])
    yield SampleInput(x, 2, [0, 1], True)
    yield SampleInput(x, 2, None, False, dtype=ember.float64)
    yield SampleInput(x, 2, dtype=ember.int64, name="integer dtype raises")
    yield SampleInput(make(()), 2, 0)
    yield SampleInput(make((0, 3)))
    yield SampleInput(make((0, 3)), float("inf"), name="empty inf raises")
    yield SampleInput(make((0, 3)), -1, [1], name="empty along kept dim")
    yield SampleInput(make((3, 4), noncontiguous=True), 2, 1)


@samples("norm.Scalar", dtypes=(*FLOATS_AND_COMPLEX, dtypes.int64))
def norm_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    x = make((3, 4))
    yield SampleInput(x)
    yield SampleInput(x, 1)
    yield SampleInput(x, float("inf"))
    yield SampleInput(make((0,)))


@samples("norm.ScalarOpt_dim", dtypes=(*FLOATS_AND_COMPLEX, dtypes.int64))
def norm_dim_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    x = make((3, 4))
    yield SampleInput(x, 2, [1])
    yield SampleInput(x, None, [0])
    yield SampleInput(x, 1, 0, True)
    yield SampleInput(x, 3, [0, 1])


@samples("cumsum.default", "cumprod.default", dtypes=ALL_DTYPES)
def scan_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    x = make((3, 4), low=-2, high=3)
    yield SampleInput(x, 1)
    yield SampleInput(x, -2)
    yield SampleInput(x, 0, dtype=ember.float64)
    yield SampleInput(make(()), 0)
    yield SampleInput(make((0, 3)), 0)
    yield SampleInput(make((3, 4), noncontiguous=True, low=-2, high=3), 1)
    yield SampleInput(x, 2, name="dim out of range")


@samples("cumsum_.default", "cumprod_.default", dtypes=(*NUMERIC, dtypes.complex64))
def scan_inplace_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    # bool is left out: PyTorch raises NotImplementedError for in-place scans of bool
    x = make((3, 4), low=-2, high=3)
    yield SampleInput(x, 1)
    yield SampleInput(make(()), 0)
    yield SampleInput(make((3, 4), noncontiguous=True, low=-2, high=3), 0)


@samples("sort.default", dtypes=ALL_DTYPES)
def sort_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    x = make((3, 5), low=-3, high=3)  # ties
    yield SampleInput(x)
    yield SampleInput(x, 0)
    yield SampleInput(x, -1, True)
    yield SampleInput(with_specials(make, dtype, (3, 4)), 1, True, name="nan descending")
    yield SampleInput(with_specials(make, dtype, (3, 4)), 1, name="nan")
    yield SampleInput(make(()))
    yield SampleInput(make((0, 3)), 0)
    yield SampleInput(make((3, 4), noncontiguous=True))


@samples("sort.stable", dtypes=REALS)
def sort_stable_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    x = make((3, 5), low=-3, high=3)
    yield SampleInput(x, stable=True)
    yield SampleInput(x, stable=True, dim=0, descending=True)
    yield SampleInput(x, stable=None, descending=True)
    yield SampleInput(with_specials(make, dtype, (3, 4)), stable=True, descending=True)


@samples("argsort.default", dtypes=REALS)
def argsort_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    x = make((3, 5), low=-3, high=3)
    yield SampleInput(x)
    yield SampleInput(x, 0, True)


@samples("msort.default", dtypes=REALS)
def msort_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((4, 3), low=-3, high=3))
    yield SampleInput(make((5,), low=-3, high=3))
    yield SampleInput(make((4, 3), noncontiguous=True))


@samples("argsort.stable", dtypes=REALS)
def argsort_stable_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    x = make((3, 5), low=-3, high=3)
    yield SampleInput(x, stable=True)
    yield SampleInput(x, stable=True, dim=0, descending=True)


@samples("topk.default", dtypes=(*NUMERIC, dtypes.bool_, dtypes.complex64))
def topk_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    if dtype.category in (dtypes.BOOL, dtypes.COMPLEX):
        yield SampleInput(make((3, 4)), 2, name="unsupported dtype raises")
        return
    x = distinct(make, (3, 6), dtype) if dtype is not dtypes.uint8 else make((3, 6))
    if dtype is dtypes.uint8:
        x = ember.from_numpy(np.arange(18, dtype=np.uint8)[::-1].reshape(3, 6).copy())
    yield SampleInput(x, 2)
    yield SampleInput(x, 3, 0)
    yield SampleInput(x, 2, -1, False)
    yield SampleInput(x, 0)
    yield SampleInput(x, 6, 1, True, True)
    yield SampleInput(x, 7, name="k too large raises")
    yield SampleInput(x, -1, name="negative k raises")
    yield SampleInput(make(()), 1)
    if dtype.category == dtypes.FLOATING:
        arr = np.array([[1.0, np.nan, 3.0, -2.0]], dtype.np)
        yield SampleInput(ember.from_numpy(arr), 2, name="nan is largest")


@errors("sum.dim_IntList")
def sum_errors() -> Iterator[ErrorInput]:
    x = ember.from_numpy(np.ones((2, 3), np.float32))
    yield ErrorInput(SampleInput(x, [0, -2]), RuntimeError, "appears multiple times")
    yield ErrorInput(SampleInput(x, 2), IndexError, "Dimension out of range")


@errors("mean.default")
def mean_errors() -> Iterator[ErrorInput]:
    x = ember.from_numpy(np.ones((2, 3), np.int64))
    yield ErrorInput(SampleInput(x), RuntimeError, "could not infer output dtype")


@errors("max.default")
def max_errors() -> Iterator[ErrorInput]:
    yield ErrorInput(
        SampleInput(ember.from_numpy(np.ones((0, 3), np.float32))), RuntimeError, "numel\\(\\) == 0"
    )


@errors("max.dim")
def max_dim_errors() -> Iterator[ErrorInput]:
    yield ErrorInput(
        SampleInput(ember.from_numpy(np.ones((0, 3), np.float32)), 0), IndexError, "non-zero size"
    )


@samples("trace.default", dtypes=ALL_DTYPES)
def trace_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((3, 3)))
    yield SampleInput(make((2, 4)), name="wide")
    yield SampleInput(make((4, 2), noncontiguous=True), name="tall, nc")
    yield SampleInput(make((0, 3)), name="empty")
    yield SampleInput(make((3,)), name="1-D raises")
    yield SampleInput(make((2, 2, 2)), name="3-D raises")


@samples("nansum.default", dtypes=ALL_DTYPES)
def nansum_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    x = with_specials(make, dtype, (3, 4))
    yield SampleInput(x)
    yield SampleInput(x, 1)
    yield SampleInput(x, [0, 1], True)
    yield SampleInput(x, -1, keepdim=True)
    yield SampleInput(make(()))
    yield SampleInput(make((0, 3)), 0, name="empty")
    yield SampleInput(make((3, 4), noncontiguous=True), [1])
    if dtype.category != dtypes.COMPLEX:
        yield SampleInput(make((2, 3), low=-2, high=2), 1, dtype=ember.float64)


@samples("nanmean.default", dtypes=ALL_DTYPES)
def nanmean_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    # raises for bool and integers (and complex: nansum has no complex kernel), as PyTorch
    x = with_specials(make, dtype, (3, 4))
    yield SampleInput(x)
    yield SampleInput(x, 1)
    yield SampleInput(x, [0, 1], True)
    yield SampleInput(make(()))
    yield SampleInput(make((0, 3)), 0, name="empty: NaN")
    yield SampleInput(make((3, 4), noncontiguous=True), [1])
    if dtype.category == dtypes.FLOATING:
        yield SampleInput(make((2, 3)), 1, dtype=ember.float64)
        nan = ember.full((2, 3), float("nan"), dtype=dtype)
        yield SampleInput(nan, 1, name="all NaN")


@samples("count_nonzero.dim_IntList", dtypes=ALL_DTYPES)
def count_nonzero_dims_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    x = make((3, 4), low=-1, high=2)
    yield SampleInput(x, [1])
    yield SampleInput(x, [0, -1])
    yield SampleInput(x, [], name="empty list: every dim")
    yield SampleInput(make(()), [0])
    yield SampleInput(make((0, 3)), [0], name="empty")
    yield SampleInput(make((3, 4), noncontiguous=True, low=-1, high=2), [0])
    yield SampleInput(x, [0, 0], name="repeated dim raises")


@samples("count_nonzero.default", dtypes=ALL_DTYPES)
def count_nonzero_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    x = make((3, 4), low=-1, high=2)
    yield SampleInput(x)
    yield SampleInput(x, 1)
    yield SampleInput(x, dim=-2)
    yield SampleInput(make(()), 0)
    yield SampleInput(with_specials(make, dtype, (3, 4)), name="NaN counts")
    yield SampleInput(x, 2, name="dim out of range")


@samples("aminmax.default", dtypes=ALL_DTYPES)
def aminmax_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    x = make((3, 4), low=-3, high=3)
    yield SampleInput(x)
    yield SampleInput(x, dim=1)
    yield SampleInput(x, dim=0, keepdim=True)
    yield SampleInput(x, keepdim=True, name="every dim kept")
    yield SampleInput(with_specials(make, dtype, (3, 4)), dim=1, name="nan")
    yield SampleInput(make(()), dim=0)
    yield SampleInput(make(()))
    yield SampleInput(make((3, 4), noncontiguous=True), dim=-1)
    yield SampleInput(make((0, 3)), dim=1, name="empty non-reduced")
    yield SampleInput(make((0, 3)), name="empty raises")
    yield SampleInput(make((0, 3)), dim=0, name="empty reduced raises")


@samples("cummax.default", "cummin.default", dtypes=ALL_DTYPES)
def cum_extreme_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    x = make((3, 5), low=-2, high=3)  # ties
    yield SampleInput(x, 1)
    yield SampleInput(x, -2)
    yield SampleInput(with_specials(make, dtype, (3, 4)), 1, name="nan")
    yield SampleInput(make(()), 0)
    yield SampleInput(make((0, 3)), 0)
    yield SampleInput(make((3, 4), noncontiguous=True), 1)
    yield SampleInput(x, 2, name="dim out of range")


@samples("logcumsumexp.default", dtypes=ALL_DTYPES)
def logcumsumexp_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    x = make((3, 4))
    yield SampleInput(x, 1)  # raises for bool and integers, as PyTorch does
    yield SampleInput(x, -2)
    yield SampleInput(make(()), 0)
    yield SampleInput(make((0, 3)), 0)
    yield SampleInput(make((3, 4), noncontiguous=True), 1)
    if dtype.category == dtypes.FLOATING:
        big = ember.tensor([[100.0, 1000.0, -1000.0], [-float("inf"), 1.0, float("inf")]])
        yield SampleInput(big.to(dtype), 1, name="large and infinite")
    yield SampleInput(x, 2, name="dim out of range")


@samples("trapezoid.dx", "cumulative_trapezoid.dx", "trapz.dx", dtypes=ALL_DTYPES)
def trapezoid_dx_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    y = make((3, 4))
    yield SampleInput(y)
    yield SampleInput(y, dx=0.5)
    yield SampleInput(y, dx=2, dim=0)
    yield SampleInput(make((5,)), dim=-1)
    yield SampleInput(make((3, 4), noncontiguous=True), dx=-1.5, dim=1)
    yield SampleInput(make((3, 1)), name="one sample")
    yield SampleInput(make((2, 0)), name="no samples")
    yield SampleInput(y, dim=2, name="dim out of range")


@samples("trapezoid.x", "cumulative_trapezoid.x", "trapz.x", dtypes=ALL_DTYPES)
def trapezoid_x_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    y = make((3, 4))
    x = ember.tensor([0.0, 0.5, 2.0, 2.5])
    yield SampleInput(y, x)
    yield SampleInput(y, make((3, 4), dtype=dtypes.float64), dim=1, name="x like y")
    yield SampleInput(y, make((4, 1), dtype=dtypes.float32), dim=0, name="x broadcast")
    yield SampleInput(make((3, 4), noncontiguous=True), ember.tensor([1.0, 2.0, 4.0]), dim=0)
    yield SampleInput(make((4,)), ember.tensor([3, 1, 2, 5]), name="integer x")
    yield SampleInput(y, ember.tensor([0.0, 1.0]), name="x of another length raises")


@samples("dist.default", dtypes=FLOATS, atol=1e-4, rtol=1e-4)
def dist_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((2, 3)), make((2, 3)))
    for p in (0, 1, 3, float("inf"), float("-inf")):
        yield SampleInput(make((3,)), make((2, 3), noncontiguous=True), p, name=f"p={p}")
    yield SampleInput(make(()), make((2,)), name="0-dim")
    yield SampleInput(make((0,)), make((0,)), name="empty")
    yield SampleInput(make((2,)), make((3,)), name="shapes that don't broadcast raise")


@samples("renorm.default", "renorm_.default", dtypes=FLOATS, atol=1e-4, rtol=2e-3)
def renorm_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((3, 4)), 2, 0, 1.0)
    yield SampleInput(make((3, 4), noncontiguous=True), 1, -1, 2.0, name="p=1, last dim, nc")
    yield SampleInput(make((2, 3, 2)), 3, 1, 0.5, name="3-D, p=3")
    yield SampleInput(make((2, 3)), 2, 0, 100.0, name="nothing above maxnorm")
    yield SampleInput(make((3,)), 2, 0, 1.0, name="1-D raises")
    yield SampleInput(make((2, 3)), 0, 0, 1.0, name="p=0 raises")
    yield SampleInput(make((2, 3)), 2, 0, -1.0, name="negative maxnorm raises")


@samples("sum_to_size.default", dtypes=ALL_DTYPES)
def sum_to_size_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((2, 3, 4)), [3, 1])
    yield SampleInput(make((2, 3, 4)), [1, 3, 4], name="leading 1")
    yield SampleInput(make((2, 3)), [2, 3], name="same size: itself")
    yield SampleInput(make((3, 4), noncontiguous=True), [1, 1], name="nc")
    yield SampleInput(make((3, 4)), [], name="to 0-dim")
    yield SampleInput(make(()), [], name="0-dim")
    yield SampleInput(make((0, 3)), [3], name="empty summed")
    yield SampleInput(make((2, 3)), [2, 2], name="not expandable raises")
    yield SampleInput(make((3,)), [2, 3], name="more dims raise")


@samples("cov.default", dtypes=ALL_DTYPES, atol=1e-4, rtol=1e-4)
def cov_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    x = make((3, 5), low=-3, high=3)
    yield SampleInput(x)
    yield SampleInput(x, correction=0)
    yield SampleInput(make((5,), low=-3, high=3), name="one variable")
    yield SampleInput(make((3, 5), noncontiguous=True, low=-3, high=3), correction=2)
    yield SampleInput(x, fweights=ember.tensor([1, 2, 0, 3, 1]))
    yield SampleInput(x, aweights=ember.tensor([0.5, 1.0, 2.0, 0.25, 1.0]))
    yield SampleInput(
        x, fweights=ember.tensor([1, 2, 1, 3, 1]), aweights=ember.tensor([0.5, 1.0, 2.0, 0.25, 1.0])
    )
    yield SampleInput(make((2, 3, 4)), name="3-D raises")
    yield SampleInput(x, fweights=ember.tensor([1.0, 2, 0, 3, 1]), name="float fweights raise")
    yield SampleInput(x, fweights=ember.tensor([1, 2]), name="fweights of another length raise")
    yield SampleInput(x, aweights=ember.tensor([1, 2, 0, 3, 1]), name="int aweights raise")


@samples("corrcoef.default", dtypes=ALL_DTYPES, atol=1e-4, rtol=1e-4)
def corrcoef_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((3, 5), low=-3, high=3))
    yield SampleInput(make((2, 4), noncontiguous=True, low=-3, high=3))
    yield SampleInput(make((5,), low=-3, high=3), name="one variable")
    yield SampleInput(make((2, 3, 4)), name="3-D raises")
