"""Sample inputs for the indexing ops (see ember/testing/_internal/opinfo.py).

``index.Tensor`` samples use integer index tensors only: a boolean mask gives a shape that
depends on its values, which the Meta rule cannot know (``tests/test_indexing.py`` checks
masks on CPU against PyTorch).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from ember import dtypes
from ember._tensor import Tensor, wrap
from ember.testing._internal.opinfo import ALL_DTYPES, ErrorInput, SampleInput, errors, samples

S = SampleInput


def idx(*values: Any, dtype: Any = np.int64) -> Tensor:
    """An index tensor of ``values`` (nested lists allowed)."""
    return wrap(np.array(values if len(values) != 1 else values[0], dtype=dtype))


# meta_errors=False: out-of-range indices are only found by reading them
@samples("index.Tensor", dtypes=ALL_DTYPES, meta_errors=False)
def index_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    x = make((3, 4, 5))
    yield S(x, [idx([0, 2])])
    yield S(x, [idx([-1, 0, 1])], name="negative")
    yield S(x, [None, idx([[0, 1], [3, 2]])], name="2-d index, middle")
    yield S(x, [idx([0, 2]), idx([1, 3])], name="adjacent pair")
    yield S(x, [idx([0, 2]), None, idx([1, 3])], name="separated: dims go first")
    yield S(x, [idx([[0], [2]]), idx([1, 3])], name="broadcast indices")
    yield S(x, [None, None, idx([4, 0], dtype=np.int32)], name="int32")
    yield S(x, [idx(1)], name="0-dim index")
    yield S(x, [idx([], dtype=np.int64)], name="empty index")
    yield S(make((0, 3)), [None, idx([1])], name="empty input")
    yield S(make((4, 6), noncontiguous=True), [idx([3, 0]), idx([5, 1])], name="noncontiguous")
    yield S(x, [idx([3])], name="out of range raises")
    yield S(x, [idx([0]), idx([0]), idx([0]), idx([0])], name="too many raise")
    yield S(x, [idx([0, 1]), idx([0, 1, 2])], name="no broadcast raises")
    yield S(x, [idx([0.0], dtype=np.float32)], name="float index raises")


def _put_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    x = make((3, 4))
    yield S(x, [idx([0, 2])], make((2, 4)))
    yield S(x, [idx([0, 2])], make((4,)), name="broadcast values")
    yield S(x, [None, idx([3, 1])], make(()), name="0-dim value")
    yield S(x, [idx([2, 0]), idx([1, 3])], make((2,)), name="pairs")
    yield S(x, [idx([0, 0, 2])], make((3, 4)), True, name="accumulate duplicates")
    yield S(x, [idx([1, 2])], make((2, 4)), accumulate=True, name="kwarg")
    yield S(x, [make((3, 4), dtypes.bool_)], make(()), name="mask")
    yield S(x, [make((3,), dtypes.bool_)], make((4,)), name="row mask")
    yield S(make((4, 6), noncontiguous=True), [idx([3])], make((6,)), name="noncontiguous")
    yield S(x, [idx([5])], make((4,)), name="out of range raises")
    yield S(x, [idx([0, 1])], make((3,)), name="values don't broadcast raise")
    yield S(x, [idx([0])], make((4,), dtypes.float64 if dtype is not dtypes.float64
                                else dtypes.float32), name="dtype mismatch raises")  # fmt: skip


samples("index_put.default", dtypes=ALL_DTYPES, meta_errors=False)(_put_samples)


@errors("index.Tensor")
def index_errors() -> Iterator[ErrorInput]:
    x = wrap(np.zeros((2, 3), np.float32))
    yield ErrorInput(S(x, [idx([5])]), IndexError, "out of bounds")
    yield ErrorInput(S(x, [idx([True], dtype=np.bool_)]), IndexError, "shape of the mask")
    yield ErrorInput(S(x, [idx([0.5], dtype=np.float32)]), IndexError, "long, int, byte or bool")


# --------------------------------------------------------------------------- take, masks,
# index_add/copy/fill (meta_errors=False: out-of-range indices and short sources are found by
# reading values)


@samples("take.default", dtypes=ALL_DTYPES, meta_errors=False)
def take_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    x = make((3, 4))
    yield S(x, idx([0, 5, 11]))
    yield S(x, idx([[-1, 2], [3, -12]]), name="negative, 2-D index")
    yield S(make((3, 4), noncontiguous=True), idx([1, 7]), name="noncontiguous")
    yield S(x, idx(4), name="0-dim index")
    yield S(make(()), idx([0, 0, -1]), name="0-dim self")
    yield S(x, idx([], dtype=np.int64), name="empty index")
    yield S(make((0,)), idx([], dtype=np.int64), name="empty both")
    yield S(make((0,)), idx([0]), name="empty self raises")
    yield S(x, idx([12]), name="out of range raises")
    yield S(x, idx([-13]), name="negative out of range raises")
    yield S(x, idx([1], dtype=np.int32), name="int32 raises")


@samples("take_along_dim.default", dtypes=ALL_DTYPES, meta_errors=False)
def take_along_dim_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    x = make((3, 4))
    yield S(x, idx([[0, 3], [1, 1], [2, 0]]), 1)
    yield S(x, idx([[2, 0, 1, 1]]), 0, name="broadcast indices")
    yield S(x, idx([[0], [3], [-1]]), -1, name="negative wraps")
    yield S(x, idx([[5], [4], [7]]), 1, name="past the end wraps")
    yield S(make((3, 1), noncontiguous=True), idx([[0, 0, 0]]), 0, name="broadcast self, nc")
    yield S(x, idx([0, 11, 5]), name="flat")
    yield S(x, idx([[0, 1]]), None, name="flat, 2-D index")
    yield S(x, idx([12]), name="flat out of range raises")
    yield S(x, idx([0, 1]), 0, name="rank mismatch raises")
    yield S(x, idx([[0]], dtype=np.int32), 1, name="int32 raises")


@samples("masked_select.default", dtypes=ALL_DTYPES)
def masked_select_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    x = make((3, 4))
    yield S(x, make((3, 4), dtypes.bool_))
    yield S(x, make((4,), dtypes.bool_), name="broadcast mask")
    yield S(make((4,)), make((3, 1), dtypes.bool_), name="broadcast both")
    yield S(make((3, 4), noncontiguous=True), make((3, 4), dtypes.bool_), name="noncontiguous")
    yield S(make(()), make((), dtypes.bool_), name="0-dim")
    yield S(make((0, 4)), make((4,), dtypes.bool_), name="empty")
    yield S(x, make((3, 4), dtypes.uint8), name="uint8 mask raises")
    yield S(x, make((2,), dtypes.bool_), name="mask that does not broadcast raises")


def _along_common(make: Any, dtype: Any) -> Iterator[tuple[Any, ...]]:
    """(self, dim, index, source, name) for index_add/index_copy: distinct indices."""
    x = make((4, 3))
    yield x, 0, idx([3, 0]), make((2, 3)), ""
    yield x, 1, idx([2, 0, 1]), make((4, 3)), "dim 1, all"
    yield x, -1, idx([1], dtype=np.int64), make((4, 1)), "dim -1"
    yield make((4, 3), noncontiguous=True), 0, idx([1, 2]), make((2, 3)), "nc self"
    yield x, 0, idx(2), make((1, 3)), "0-dim index"
    yield make(()), 0, idx([0]), make(()), "0-dim self"
    yield x, 0, idx([], dtype=np.int64), make((0, 3)), "no indices"
    yield x, 0, idx([4]), make((1, 3)), "out of range raises"
    yield x, 0, idx([[0]]), make((1, 3)), "2-D index raises"
    yield x, 0, idx([0, 1]), make((2, 2)), "source shape raises"
    yield x, 0, idx([0, 1]), make((3, 3)), "index count raises"
    other = dtypes.float64 if dtype is not dtypes.float64 else dtypes.float32
    yield x, 0, idx([0]), make((1, 3), other), "source dtype raises"


@samples("index_add.default", dtypes=ALL_DTYPES, meta_errors=False)
def index_add_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    for self, dim, index, source, name in _along_common(make, dtype):
        yield S(self, dim, index, source, name=name)
    x = make((4, 3))
    yield S(x, 0, idx([1, 1, 3]), make((3, 3)), name="repeated indices accumulate")
    yield S(x, 1, idx([0, 2], dtype=np.int32), make((4, 2)), name="int32 index")
    if dtype is not dtypes.bool_:
        yield S(x, 0, idx([2, 0]), make((2, 3)), alpha=2, name="alpha")
    yield S(x, 0, idx([-1]), make((1, 3)), name="negative raises")


@samples("index_copy.default", dtypes=ALL_DTYPES, meta_errors=False)
def index_copy_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    for self, dim, index, source, name in _along_common(make, dtype):
        yield S(self, dim, index, source, name=name)
    x = make((4, 3))
    yield S(x, 1, idx([0], dtype=np.int32), make((4, 1)), name="int32 index raises")
    yield S(x, 0, idx([-1]), make((1, 3)), name="negative raises")


def _fill_samples(make: Any, dtype: Any, value: Any) -> Iterator[SampleInput]:
    x = make((4, 3))
    yield S(x, 0, idx([3, 0]), value)
    yield S(x, 1, idx([2, 2, -1]), value, name="repeated and negative")
    yield S(make((4, 3), noncontiguous=True), -1, idx([1]), value, name="nc, dim -1")
    yield S(x, 0, idx(1), value, name="0-dim index")
    yield S(make(()), 0, idx([0]), value, name="0-dim self")
    yield S(x, 0, idx([], dtype=np.int64), value, name="no indices")
    yield S(x, 0, idx([4]), value, name="out of range raises")
    yield S(x, 0, idx([0], dtype=np.int32), value, name="int32 raises")


@samples("index_fill.int_Scalar", dtypes=ALL_DTYPES, meta_errors=False)
def index_fill_scalar_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    value = True if dtype is dtypes.bool_ else 2 if dtype.category == dtypes.INTEGRAL else -1.5
    yield from _fill_samples(make, dtype, value)


@samples("index_fill.int_Tensor", dtypes=ALL_DTYPES, meta_errors=False)
def index_fill_tensor_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield from _fill_samples(make, dtype, make(()))
    yield S(make((4, 3)), 0, idx([0]), make((1,)), name="1-D value raises")


@samples("masked_scatter.default", dtypes=ALL_DTYPES, meta_errors=False)
def masked_scatter_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    x = make((3, 4))
    yield S(x, make((3, 4), dtypes.bool_), make((12,)))
    yield S(x, make((4,), dtypes.bool_), make((3, 5)), name="broadcast mask, 2-D source")
    yield S(make((4,)), make((2, 4), dtypes.bool_), make((8,)), name="broadcast self")
    yield S(make((3, 4), noncontiguous=True), make((3, 4), dtypes.bool_), make((20,)), name="nc")
    yield S(make(()), make((), dtypes.bool_), make((1,)), name="0-dim")
    yield S(x, make((3, 4), dtypes.bool_), make((0,)), name="short source raises")
    yield S(x, make((3, 4), dtypes.uint8), make((12,)), name="uint8 mask raises")
    other = dtypes.float64 if dtype is not dtypes.float64 else dtypes.float32
    yield S(x, make((3, 4), dtypes.bool_), make((12,), other), name="source dtype raises")
