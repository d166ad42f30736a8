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
