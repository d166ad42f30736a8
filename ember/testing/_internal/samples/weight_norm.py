"""Sample inputs for ``norm_except_dim`` and ``_weight_norm`` (see opinfo.py)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ember import dtypes
from ember.testing._internal.opinfo import SampleInput, samples

F32_64 = (dtypes.float32, dtypes.float64)


@samples("norm_except_dim.default", dtypes=F32_64, atol=1e-5, rtol=1e-5)
def norm_except_dim_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    v = make((4, 3, 2))
    for dim in (0, 1, 2, -1):
        yield SampleInput(v, 2, dim)
    yield SampleInput(make((5, 3)), 1, 0)
    yield SampleInput(make((5, 3), noncontiguous=True), 3, 1)


@samples("_weight_norm.default", dtypes=F32_64, atol=1e-5, rtol=1e-5)
def weight_norm_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    v = make((4, 3, 2))
    yield SampleInput(v, make((4, 1, 1)), 0)
    yield SampleInput(v, make((1, 3, 1)), 1)
    yield SampleInput(v, make((1, 1, 2)), 2)
    yield SampleInput(v, make(()), -1)
    yield SampleInput(make((5, 3)), make((5, 1)))
