"""Sample inputs for ``histogram`` (NOTE [histogram bins])."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ember import dtypes
from ember.testing._internal.opinfo import SampleInput, samples

S = SampleInput
_F = (dtypes.float32, dtypes.float64)
_TOL: dict[str, float] = {"float16": 3e-3, "float32": 1e-5, "float64": 1e-7}


@samples("histogram.bin_ct", dtypes=(*_F, dtypes.int64, dtypes.float16), atol=_TOL, rtol=_TOL)
def bin_count_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    x = make((4, 5), low=-3, high=3)
    yield S(x)
    yield S(x, 7)
    yield S(x, 4, range=[-1.0, 2.0], name="range drops values outside")
    yield S(x, 3, weight=make((4, 5), low=0, high=2), name="weights")
    yield S(x, 5, density=True)
    yield S(x, 5, range=[-2.0, 2.0], weight=make((4, 5), low=0, high=1), density=True)
    yield S(make((3, 4), noncontiguous=True), 6)
    yield S(x.new_ones((3,)), 2, name="equal values widen the range")
    yield S(make((0,)), 3, name="empty")
    yield S(make(()), 2, name="0-dim")
    yield S(x, 0, name="no bins raise")
    yield S(x, 2, range=[3.0, 1.0], name="reversed range raises")
    yield S(x, 2, weight=make((3,)), name="weight shape raises")


@samples("histogram.bins_tensor", dtypes=(*_F, dtypes.int64, dtypes.float16), atol=_TOL, rtol=_TOL)
def bin_edges_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    x = make((4, 5), low=-3, high=3)
    edges = x.new_tensor([-2.0, -0.5, 0.0, 1.0, 2.5]) if dtype != dtypes.int64 else make((3,))
    yield S(x, edges)
    yield S(x, edges, weight=make((4, 5), low=0, high=2), density=True)
    yield S(make((6,), noncontiguous=True), edges, density=True)
    yield S(x, x.new_tensor([-1.0, 1.0]) if dtype != dtypes.int64 else edges, name="one bin")
    yield S(make((0, 2)), edges, name="empty")
    yield S(x, edges[:1], name="one edge raises")
    yield S(x, edges.double() if dtype != dtypes.float64 else edges.float(), name="dtypes raise")
    yield S(x, edges.view(-1, 1), name="2-D edges raise")
