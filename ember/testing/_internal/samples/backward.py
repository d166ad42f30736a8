"""Sample inputs for the view-undoing backward ops."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ember.testing._internal.opinfo import FLOATS, SampleInput, samples


@samples("select_backward.default", dtypes=FLOATS)
def _select(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((3, 4)), [2, 3, 4], 0, 1)
    yield SampleInput(make((2, 4)), [2, 3, 4], 1, -1)
    yield SampleInput(make(()), [5], 0, 3)


@samples("slice_backward.default", dtypes=FLOATS)
def _slice(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((2, 4)), [5, 4], 0, 1, 3, 1)
    yield SampleInput(make((5, 2)), [5, 4], 1, 0, 4, 2)
    yield SampleInput(make((5, 0)), [5, 4], -1, 4, 4, 1)


@samples("diagonal_backward.default", dtypes=FLOATS)
def _diagonal(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((3,)), [3, 4], 0, 0, 1)
    yield SampleInput(make((2,)), [3, 4], 2, 0, 1)
    yield SampleInput(make((2, 2)), [3, 2, 4], -1, 0, 2)
