"""Sample inputs for the distance ops and ``bilinear`` (see opinfo.py)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ember import dtypes
from ember.testing._internal.opinfo import SampleInput, samples

F32_64 = (dtypes.float32, dtypes.float64)


@samples("cosine_similarity.default", dtypes=(*F32_64, dtypes.int64), atol=1e-5, rtol=1e-5)
def cosine_similarity_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((4, 5)), make((4, 5)))
    yield SampleInput(make((4, 5)), make((4, 5)), 0)
    yield SampleInput(make((2, 3, 4)), make((3, 4)), -1, 1e-6, name="broadcast")
    yield SampleInput(make(5), make(5), 0)
    yield SampleInput(make((4, 5), noncontiguous=True), make((1, 5)), 1)
    yield SampleInput(make((4, 5)), make((3, 5)), name="shapes clash")


@samples("pairwise_distance.default", dtypes=F32_64, atol=1e-5, rtol=1e-5)
def pairwise_distance_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    a, b = make((4, 5)), make((4, 5))
    yield SampleInput(a, b)
    yield SampleInput(a, b, 1.0)
    yield SampleInput(a, b, 3.0, 1e-3, True)
    yield SampleInput(a, b, float("inf"))
    yield SampleInput(a, make(5), name="broadcast")
    yield SampleInput(make(5), make(5))


# float32 rounds each of the 12 products of a term (values up to ~1,500 here), so an element
# that cancels to near 0 is off by ~1e-4 in any summation order: PyTorch's differs by machine
@samples("bilinear.default", dtypes=F32_64, atol={"float32": 1e-3, "float64": 1e-5}, rtol=1e-5)
def bilinear_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    w = make((6, 4, 3))
    yield SampleInput(make((5, 4)), make((5, 3)), w, make(6))
    yield SampleInput(make((2, 5, 4)), make((2, 5, 3)), w)
    yield SampleInput(make(4), make(3), w, make(6), name="unbatched")
    yield SampleInput(make((5, 3)), make((5, 3)), w, name="input1 size")
    yield SampleInput(make((5, 4)), make((4, 3)), w, name="batch sizes")


@samples("pdist.default", dtypes=(*F32_64, dtypes.float16, dtypes.int64), atol=1e-5, rtol=1e-5)
def pdist_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((5, 3)))
    for p in (0.0, 0.5, 1.0, 3.0, float("inf")):
        yield SampleInput(make((4, 3)), p, name=f"p={p}")
    yield SampleInput(make((4, 3), noncontiguous=True), p=1.5)
    yield SampleInput(make((1, 3)), name="one row")
    yield SampleInput(make((0, 3)), name="no rows")
    yield SampleInput(make((3, 0)), name="no columns")
    yield SampleInput(make((2, 3, 4)), name="3-D raises")
    yield SampleInput(make((3, 2)), -1.0, name="negative p raises")
