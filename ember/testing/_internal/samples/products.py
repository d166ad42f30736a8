"""Sample inputs for the contractions and pairwise distances (see opinfo.py).

``cdist`` samples take both of PyTorch's paths (NOTE [cdist paths]): fewer than 26 rows
(direct) and more, or ``compute_mode=1`` (a matrix product).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import ember
from ember import dtypes
from ember.testing._internal.opinfo import ALL_DTYPES, FLOATS, SampleInput, samples

S = SampleInput
CDIST_DTYPES = (*FLOATS, dtypes.int64, dtypes.complex64)
PS = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, float("inf"))


@samples("tensordot.default", dtypes=ALL_DTYPES)
def tensordot_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield S(make((2, 3, 4)), make((4, 3, 5)), [1, 2], [1, 0])
    yield S(make((2, 3)), make((3, 4)), [1], [0], name="a matrix product")
    yield S(make((2, 3)), make((4,)), [], [], name="no dims: outer product")
    yield S(make((3, 4), noncontiguous=True), make((4, 3)), [-1, 0], [0, -1], name="nc, negative")
    yield S(make((2, 1)), make((3, 2)), [1], [0], name="size-1 dim broadcast")
    yield S(make((2, 3)), make((1, 2)), [1], [0], name="size-1 dim of other")
    yield S(make((0, 3)), make((3, 2)), [1], [0], name="empty")
    yield S(make((2, 3)), make((3, 2)), [1], [0, 1], name="lengths differ raise")
    yield S(make((2, 3)), make((4, 2)), [1], [0], name="sizes differ raise")
    yield S(make((2, 3)), make((3, 3)), [1, 1], [0, 1], name="repeated dim raises")
    other = dtypes.float64 if dtype is not dtypes.float64 else dtypes.float32
    yield S(make((2, 3)), make((3, 2), other), [1], [0], name="dtypes differ raise")


def _cdist_pairs(make: Any) -> Iterator[tuple[Any, Any, str]]:
    yield make((4, 3)), make((5, 3)), ""
    yield make((2, 4, 3)), make((5, 3)), "batch, broadcast"
    yield make((2, 1, 4, 3)), make((3, 5, 3), noncontiguous=True), "batches broadcast, nc"
    yield make((30, 3)), make((6, 3)), "over 25 rows"


@samples("cdist.default", dtypes=CDIST_DTYPES, atol=1e-4, rtol=1e-4)
def cdist_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    for x1, x2, name in _cdist_pairs(make):
        for p in PS:
            yield S(x1, x2, p, name=f"{name} p={p}")
        yield S(x1, x2, 2.0, 1, name=f"{name} mm")
        yield S(x1, x2, 2.0, 2, name=f"{name} no mm")
    x = make((4, 3))
    yield S(x, x.clone(), name="one set: distance 0 on the diagonal")
    yield S(make((0, 3)), make((2, 3)), name="no rows")
    yield S(make((3, 0)), make((2, 0)), name="no columns: zeros")
    yield S(make((3,)), make((2, 3)), name="1-D raises")
    yield S(make((3, 2)), make((2, 3)), name="columns differ raise")
    yield S(x, x, -1.0, name="negative p raises")
    yield S(x, x, 2.0, 5, name="bad compute_mode raises")
    yield S(x, make((2, 3), dtypes.float64 if dtype is not dtypes.float64 else dtypes.float32),
            name="dtypes differ raise")  # fmt: skip


@samples("_cdist_forward.default", dtypes=CDIST_DTYPES, atol=1e-4, rtol=1e-4)
def cdist_forward_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    for x1, x2, name in _cdist_pairs(make):
        for p in (0.0, 1.0, 2.0, 3.0, float("inf")):
            yield S(x1, x2, p, None, name=f"{name} p={p}")
        yield S(x1, x2, 2.0, 1, name=f"{name} mm")
    yield S(make((0, 3)), make((2, 3)), 2.0, None, name="no rows")


@samples("_cdist_backward.default", dtypes=FLOATS, atol=1e-4, rtol=1e-4)
def cdist_backward_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    if dtype is dtypes.float16:
        return
    for p in PS:
        x1, x2 = make((4, 3)), make((5, 3))
        d = ember.ops.aten._cdist_forward.default(x1, x2, p, 2)
        yield S(make((4, 5)), x1, x2, p, d, name=f"p={p}")
    x1, x2 = make((2, 4, 3)), make((5, 3))
    d = ember.ops.aten._cdist_forward.default(x1, x2, 2.0, 2)
    yield S(make((2, 4, 5)), x1, x2, 2.0, d, name="batch")
    x = make((3, 2))
    d = ember.ops.aten._cdist_forward.default(x, x, 1.5, 2)
    yield S(make((3, 3)), x, x, 1.5, d, name="zero distances")


@samples("_pdist_forward.default", dtypes=FLOATS, atol=1e-4, rtol=1e-4)
def pdist_forward_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    for p in (0.0, 0.5, 1.0, 2.0, 3.0, float("inf")):
        yield S(make((4, 3)), p, name=f"p={p}")
    yield S(make((1, 3)), name="one row")


@samples("_pdist_backward.default", dtypes=(dtypes.float32, dtypes.float64), atol=1e-4,
         rtol=1e-4)  # fmt: skip
def pdist_backward_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    for p in (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, float("inf")):
        x = make((4, 3))
        d = ember.ops.aten._pdist_forward.default(x, p)
        yield S(make((6,)), x, p, d, name=f"p={p}")
    x = make((3, 2))[[0, 0, 1]]  # two equal rows: a zero distance
    yield S(make((3,)), x, 2.0, ember.ops.aten._pdist_forward.default(x, 2.0), name="zero")


@samples("_euclidean_dist.default", dtypes=CDIST_DTYPES, atol=1e-4, rtol=1e-4)
def euclidean_dist_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield S(make((4, 3)), make((5, 3)))
    yield S(make((2, 4, 3)), make((2, 5, 3), noncontiguous=True), name="batch, nc")
    yield S(make((0, 3)), make((2, 3)), name="no rows")


@samples("inner.default", dtypes=ALL_DTYPES, atol=1e-2, rtol=1e-2)
def inner_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    s = {"low": -3, "high": 4}
    yield SampleInput(make((3,), **s), make((3,), **s))
    yield SampleInput(make((2, 3), **s), make((4, 3), **s))
    yield SampleInput(make((2, 2, 3), noncontiguous=True, **s), make((3,), **s))
    yield SampleInput(make((), **s), make((2, 3), **s), name="0-dim scales")
    yield SampleInput(make((2, 3), **s), make((), dtype=dtypes.float64), name="0-dim promotes")
    yield SampleInput(make((0, 3)), make((2, 3)), name="empty")
    yield SampleInput(make((2, 0)), make((3, 0)), name="empty contraction")
    yield SampleInput(make((2, 3)), make((3, 2)), name="last dims differ raise")


@samples("kron.default", dtypes=ALL_DTYPES)
def kron_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    s = {"low": -3, "high": 4}
    yield SampleInput(make((2, 3), **s), make((3, 2), **s))
    yield SampleInput(make((2,), **s), make((2, 3, 2), **s), name="dims differ")
    yield SampleInput(make((2, 3), noncontiguous=True, **s), make((2,), **s))
    yield SampleInput(make((), **s), make((2, 3), **s), name="0-dim")
    yield SampleInput(make((2, 3), **s), make((2,), dtype=dtypes.float64), name="promotes")
    yield SampleInput(make((0, 3)), make((2, 2)), name="empty")
