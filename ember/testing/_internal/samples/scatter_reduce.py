"""Sample inputs for ``scatter_reduce``, ``index_reduce`` and ``put`` (see opinfo.py): every
reduction, with and without ``self``, repeated indices, and the errors."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import ember
from ember import dtypes
from ember.testing._internal.opinfo import ALL_DTYPES, SampleInput, samples

S = SampleInput
REALS_NO_BOOL = tuple(
    d for d in ALL_DTYPES if d.category != dtypes.COMPLEX and d is not dtypes.bool_
)


def _idx(values: list[Any]) -> Any:
    return ember.tensor(values, dtype=ember.int64)


@samples("scatter_reduce.two", "scatter_reduce_.two", dtypes=REALS_NO_BOOL, atol=1e-5, rtol=1e-5,
         meta_errors=False)  # fmt: skip
def scatter_reduce_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    idx = _idx([[0, 1, 0, 2], [2, 2, 1, 0]])
    for reduce in ("sum", "prod", "mean", "amax", "amin"):
        for include in (True, False):
            yield S(make((3, 4)), 0, idx, make((2, 4)), reduce, include_self=include,
                    name=f"{reduce} include_self={include}")  # fmt: skip
        yield S(make((4, 3), noncontiguous=True), 1, _idx([[0, 0], [2, 1]]), make((3, 3)), reduce,
                name=f"{reduce} dim 1, src larger, nc")  # fmt: skip
        yield S(make((3,)), -1, _idx([1, 1, 1]), make((3,)), reduce, name=f"{reduce} all in one")
    yield S(make((3,)), 0, _idx([]), make((0,)), "sum", name="empty index")
    yield S(make((3,)), 0, _idx([0, 0]), make((2,)), "max", name="max: amax")
    yield S(make((3,)), 0, _idx([0]), make((1,)), "add", name="unknown reduce raises")
    yield S(make((3,)), 0, _idx([3]), make((1,)), "sum", name="index out of range raises")


# (rtol 2e-3: PyTorch's index_reduce multiplies float16 in float16, ember in float32)
@samples("index_reduce.default", "index_reduce_.default", dtypes=REALS_NO_BOOL, atol=1e-5,
         rtol=2e-3, meta_errors=False)  # fmt: skip
def index_reduce_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    for reduce in ("prod", "mean", "amax", "amin"):
        for include in (True, False):
            yield S(make((3, 4)), 0, _idx([0, 2, 0]), make((3, 4)), reduce,
                    include_self=include, name=f"{reduce} include_self={include}")  # fmt: skip
        yield S(make((4, 3), noncontiguous=True), -1, _idx([2, 2]), make((4, 2)), reduce,
                name=f"{reduce} last dim, nc")  # fmt: skip
    yield S(make((3, 2)), 0, ember.tensor([1, 1], dtype=ember.int32), make((2, 2)), "mean",
            name="int32 index")  # fmt: skip
    yield S(make((3, 2)), 0, _idx([0]), make((1, 2)), "sum", name="sum raises")
    yield S(make((3, 2)), 0, _idx([0, 1]), make((1, 2)), "prod", name="count mismatch raises")
    yield S(make((3, 2)), 0, _idx([[0]]), make((1, 2)), "prod", name="2-D index raises")


@samples("put.default", "put_.default", dtypes=ALL_DTYPES, meta_errors=False)
def put_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield S(make((2, 3)), _idx([0, 4, -1]), make((3,)))  # no repeats: which write wins is
    # unspecified without accumulate (PyTorch says so), and the gradient assumes none
    yield S(make((2, 3)), _idx([[1, 1], [4, 0]]), make((2, 2)), True, name="accumulate repeats")
    yield S(make((3, 2), noncontiguous=True), _idx([1, 3]), make((2,)), name="nc: row-major")
    yield S(make(()), _idx([0]), make((1,)), name="0-dim")
    yield S(make((2, 3)), _idx([]), make((0,)), name="empty")
    yield S(make((2, 3)), _idx([6]), make((1,)), name="out of range raises")
    yield S(make((2, 3)), _idx([0, 1]), make((1,)), name="sizes differ raise")
    yield S(make((2, 3)), ember.tensor([0], dtype=ember.int32), make((1,)), name="int32 raises")
