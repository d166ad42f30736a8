"""Sample inputs for ``complex``, ``polar`` and ``view_as_complex`` (float32 and float64:
float16 parts would make complex32, which ember does not have)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ember import dtypes
from ember.testing._internal.opinfo import SampleInput, samples

S = SampleInput
_PARTS = (dtypes.float32, dtypes.float64)


@samples("complex.default", "polar.default", dtypes=_PARTS)
def parts_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield S(make((3, 4)), make((3, 4)))
    yield S(make((3, 1)), make((4,)), name="broadcast")
    yield S(make(()), make((2,)), name="0-dim")
    yield S(make((0, 3)), make((3,)), name="empty")
    yield S(make((3, 4), noncontiguous=True), make((3, 4)), name="nc")
    yield S(make((2,), low=0, high=2), make((2,)), name="abs >= 0")
    other = dtypes.float64 if dtype == dtypes.float32 else dtypes.float32
    yield S(make((2,)), make((2,), other), name="mixed dtypes raise")
    yield S(make((2,), dtypes.int64), make((2,), dtypes.int64), name="integers raise")
    yield S(make((2,)), make((3,)), name="shapes raise")


@samples("view_as_complex.default", dtypes=_PARTS)
def view_as_complex_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield S(make((3, 2)))
    yield S(make((2, 3, 2)))
    yield S(make((2,)), name="one number")
    yield S(make((0, 2)), name="empty")
    yield S(make((3, 4, 2))[:, ::2], name="strided")
    yield S(make((5, 2))[1:4], name="offset")
    yield S(make((3, 3)), name="last dim not 2 raises")
    yield S(make((2, 3)).t(), name="last stride not 1 raises")
    yield S(make((9,))[1:].view(4, 2), name="odd offset raises")
    yield S(make(()), name="0-dim raises")
    yield S(make((3, 2), dtypes.int64), name="integers raise")
