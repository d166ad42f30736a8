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


def _dd_inputs(make: Any, dtype: Any) -> Iterator[tuple[str, tuple[Any, ...], dict[str, Any]]]:
    """(name, args after self-and-bins, kwargs) of the histogramdd bin-count samples."""
    x = make((12, 2), low=-3, high=3)
    yield "", (x, [3, 4]), {}
    yield "3-d points", (make((2, 5, 3), low=-2, high=2), [2, 3, 2]), {}
    yield "range", (x, [4, 2]), {"range": [-1.0, 2.0, -2.0, 0.5]}
    yield "weights", (x, [3, 3]), {"weight": make((12,), low=0, high=2)}
    yield "density", (x, [2, 5]), {"density": True}
    w = make((12,), low=0, high=1)
    yield "all", (x, [3, 2]), {"range": [-2.0, 2.0, -1.0, 3.0], "weight": w, "density": True}
    yield "strided", (make((8, 2), noncontiguous=True), [2, 2]), {}
    yield "equal values widen", (x.new_ones((4, 2)), [2, 3]), {}
    yield "empty", (make((0, 2)), [2, 2]), {}
    yield "no bins raise", (x, [3, 0]), {}
    yield "bins per dim raise", (x, [3]), {}
    yield "1-D raises", (make((5,)), [2]), {}
    yield "range length raises", (x, [2, 2]), {"range": [0.0, 1.0]}
    yield "reversed range raises", (x, [2, 2]), {"range": [0.0, 1.0, 3.0, 1.0]}
    yield "weight shape raises", (x, [2, 2]), {"weight": make((12, 2))}


@samples("_histogramdd_from_bin_cts.default", dtypes=(*_F, dtypes.int64), atol=_TOL, rtol=_TOL)
def histogramdd_bin_ct_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    for name, args, kwargs in _dd_inputs(make, dtype):
        yield S(*args, name=name, **kwargs)


# floating only: PyTorch's internal _histogramdd_bin_edges gives integer edges for an integer
# input with a range (histogramdd itself refuses integers first); ember's refuses them
samples("_histogramdd_bin_edges.default", dtypes=_F, atol=_TOL, rtol=_TOL)(
    histogramdd_bin_ct_samples
)


@samples("histogramdd.default", dtypes=_F, atol=_TOL, rtol=_TOL)
def histogramdd_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    for name, args, kwargs in _dd_inputs(make, dtype):
        yield S(*args, name=name, **kwargs)


@samples("histogramdd.int_bins", dtypes=_F, atol=_TOL, rtol=_TOL)
def histogramdd_int_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    x = make((10, 3), low=-2, high=2)
    yield S(x, 3)
    yield S(x, 2, [-1.0, 1.0, -2.0, 2.0, 0.0, 1.0], make((10,), low=0, high=1), True)
    yield S(make((4, 1)), 5, name="one dim")


def _dd_edges(make: Any, dtype: Any) -> list[Any]:
    x = make((1,))
    if dtype == dtypes.int64:
        return [make((3,)).sort().values, make((4,)).sort().values]
    return [x.new_tensor([-2.0, -0.5, 0.5, 2.0]), x.new_tensor([-1.0, 0.0, 3.0])]


@samples("_histogramdd_from_bin_tensors.default", dtypes=(*_F, dtypes.int64), atol=_TOL,
         rtol=_TOL)  # fmt: skip
def histogramdd_bin_tensors_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    x = make((12, 2), low=-3, high=3)
    edges = _dd_edges(make, dtype)
    yield S(x, edges)
    yield S(x, edges, weight=make((12,), low=0, high=2), density=True)
    yield S(make((2, 3, 2), noncontiguous=True), edges, name="3-d points")
    yield S(make((0, 2)), edges, name="empty")
    yield S(x, edges[:1], name="bins per dim raise")
    yield S(x, [edges[0], edges[1].view(-1, 1)], name="2-D edges raise")
    other = dtypes.float64 if dtype != dtypes.float64 else dtypes.float32
    yield S(x, [edges[0], edges[1].to(other)], name="edge dtype raises")


@samples("histogramdd.TensorList_bins", dtypes=_F, atol=_TOL, rtol=_TOL)
def histogramdd_tensors_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    x = make((12, 2), low=-3, high=3)
    edges = _dd_edges(make, dtype)
    yield S(x, edges)
    yield S(x, edges, None, make((12,), low=0, high=2), True)
