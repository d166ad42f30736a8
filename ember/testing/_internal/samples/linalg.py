"""Sample inputs for the linear algebra ops (see ember/testing/_internal/opinfo.py)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

import ember
from ember import dtypes
from ember.testing._internal.opinfo import (
    ALL_DTYPES,
    ErrorInput,
    SampleInput,
    errors,
    samples,
)

#: bool raises NotImplementedError in PyTorch's CPU kernels; the samples check that too
MATMUL_DTYPES = ALL_DTYPES
SMALL = {"low": -3, "high": 4}  # keeps integer products exact in every integer dtype


@samples("mm.default", dtypes=MATMUL_DTYPES, atol=1e-2, rtol=1e-2)
def mm_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((2, 3), **SMALL), make((3, 4), **SMALL))
    yield SampleInput(make((1, 1), **SMALL), make((1, 1), **SMALL))
    yield SampleInput(make((3, 4), noncontiguous=True, **SMALL), make((4, 2), **SMALL))
    yield SampleInput(make((2, 0)), make((0, 3)), name="empty k")
    yield SampleInput(make((0, 3)), make((3, 2)), name="empty n")
    yield SampleInput(make((2, 3)), make((4, 5)), name="shapes cannot be multiplied")
    yield SampleInput(make((3,)), make((3, 2)), name="1-D raises")
    other = dtypes.float64 if dtype is not dtypes.float64 else dtypes.float32
    yield SampleInput(make((2, 3)), make((3, 2), dtype=other), name="dtype mismatch raises")


@samples("bmm.default", dtypes=MATMUL_DTYPES, atol=1e-2, rtol=1e-2)
def bmm_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((2, 3, 4), **SMALL), make((2, 4, 5), **SMALL))
    yield SampleInput(make((0, 3, 4)), make((0, 4, 5)))
    yield SampleInput(make((2, 3, 4), noncontiguous=True, **SMALL), make((2, 4, 2), **SMALL))
    yield SampleInput(make((2, 3, 4)), make((2, 5, 6)), name="inner mismatch raises")
    yield SampleInput(make((2, 3, 4)), make((3, 4, 6)), name="batch mismatch raises")
    yield SampleInput(make((3, 4)), make((4, 6)), name="2-D raises")


@samples("mv.default", dtypes=MATMUL_DTYPES, atol=1e-2, rtol=1e-2)
def mv_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((2, 3), **SMALL), make((3,), **SMALL))
    yield SampleInput(make((3, 4), noncontiguous=True, **SMALL), make((4,), **SMALL))
    yield SampleInput(make((0, 3)), make((3,)))
    yield SampleInput(make((2, 3)), make((4,)), name="size mismatch raises")
    yield SampleInput(make((2, 3)), make((3, 1)), name="2-D vec raises")


@samples("dot.default", dtypes=MATMUL_DTYPES, atol=1e-2, rtol=1e-2)
def dot_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((5,), **SMALL), make((5,), **SMALL))
    yield SampleInput(make((4,), noncontiguous=True, **SMALL), make((4,), **SMALL))
    yield SampleInput(make((0,)), make((0,)))
    yield SampleInput(make((2,)), make((3,)), name="size mismatch raises")
    yield SampleInput(make((2, 2)), make((2, 2)), name="2-D raises")
    other = dtypes.float64 if dtype is not dtypes.float64 else dtypes.float32
    yield SampleInput(make((2,)), make((2,), dtype=other), name="dtype mismatch raises")


@samples("matmul.default", dtypes=MATMUL_DTYPES, atol=1e-2, rtol=1e-2)
def matmul_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    m = {**SMALL}
    yield SampleInput(make((2, 3), **m), make((3, 4), **m), name="2-D @ 2-D")
    yield SampleInput(make((3,), **m), make((3,), **m), name="1-D @ 1-D")
    yield SampleInput(make((2, 3), **m), make((3,), **m), name="2-D @ 1-D")
    yield SampleInput(make((3,), **m), make((3, 4), **m), name="1-D @ 2-D")
    yield SampleInput(make((2, 3, 4), **m), make((4, 5), **m), name="3-D @ 2-D (folds)")
    yield SampleInput(make((2, 3, 4), **m), make((4,), **m), name="3-D @ 1-D (folds)")
    yield SampleInput(make((3,), **m), make((2, 3, 4), **m), name="1-D @ 3-D")
    yield SampleInput(make((3, 4), **m), make((2, 4, 3), **m), name="2-D @ 3-D")
    yield SampleInput(make((2, 3, 4), **m), make((2, 4, 5), **m), name="3-D @ 3-D")
    yield SampleInput(make((5, 1, 3, 4), **m), make((2, 4, 5), **m), name="batch broadcast")
    yield SampleInput(
        make((3, 2, 4), noncontiguous=True, **m), make((4, 5), **m), name="non-contiguous N-D"
    )
    yield SampleInput(make((0, 3, 4)), make((4, 2)), name="empty batch")
    yield SampleInput(make(()), make((2,)), name="0-D raises")
    yield SampleInput(make((2, 3)), make((4, 5)), name="shapes cannot be multiplied")
    yield SampleInput(make((2, 2, 3)), make((3, 3, 4)), name="batch mismatch raises")


@samples("outer.default", dtypes=ALL_DTYPES)
def outer_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((3,)), make((4,)))
    yield SampleInput(make((3,), noncontiguous=True), make((2,)))
    yield SampleInput(make((0,)), make((2,)))
    yield SampleInput(make((3,)), make((2,), dtype=dtypes.float64), name="promotes")
    yield SampleInput(make((2, 2)), make((2,)), name="2-D raises")


@samples("addmm.default", dtypes=MATMUL_DTYPES, atol=1e-2, rtol=1e-2)
def addmm_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    s = {**SMALL}
    yield SampleInput(make((2, 4), **s), make((2, 3), **s), make((3, 4), **s))
    yield SampleInput(make((4,), **s), make((2, 3), **s), make((3, 4), **s), name="broadcast self")
    yield SampleInput(make((2, 1), **s), make((2, 3), **s), make((3, 4), **s), beta=2, alpha=3)
    yield SampleInput(make(()), make((2, 3), **s), make((3, 4), **s), beta=0)
    yield SampleInput(make((3,)), make((2, 3)), make((3, 4)), name="self does not broadcast")
    yield SampleInput(make((2, 3)), make((2, 3)), make((4, 5)), name="mat shapes raise")
    if dtype.category == dtypes.FLOATING:
        nan = ember.from_numpy(np.full((2, 4), np.nan, dtype.np))
        yield SampleInput(nan, make((2, 3)), make((3, 4)), beta=0, name="beta=0 ignores nan")
        yield SampleInput(make((2, 4)), make((2, 3)), make((3, 4)), beta=0.5, alpha=-1.5)


@samples("addmm_.default", dtypes=(dtypes.float32, dtypes.float64, dtypes.int64))
def addmm_inplace_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    s = {**SMALL}
    yield SampleInput(make((2, 4), **s), make((2, 3), **s), make((3, 4), **s), beta=2, alpha=3)


@samples("einsum.default", dtypes=(*dtypes.INTEGRAL_DTYPES, *dtypes.FLOATING_DTYPES,
                                   dtypes.complex64), atol=1e-2, rtol=1e-2)  # fmt: skip
def einsum_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    s = {**SMALL}
    a, b = make((2, 3), **s), make((3, 4), **s)
    yield SampleInput("ij,jk->ik", [a, b])
    yield SampleInput("ij,jk", [a, b], name="implicit output")
    yield SampleInput("ij,jk->ki", [a, b])
    yield SampleInput("ij->ji", [a])
    yield SampleInput("ij->", [a])
    yield SampleInput("ii", [make((3, 3), **s)], name="trace")
    yield SampleInput("i,j->ij", [make((3,), **s), make((2,), **s)])
    yield SampleInput("bij,bjk->bik", [make((2, 2, 3), **s), make((2, 3, 4), **s)])
    yield SampleInput("...ij,...jk", [make((5, 2, 3), **s), b], name="ellipsis")
    yield SampleInput("i j , j k -> i k", [a, b], name="spaces")
    yield SampleInput("ij,jk->ik", [make((2, 3), noncontiguous=True, **s), b])
    yield SampleInput("ij,jk->ik", [a, make((4, 4))], name="sizes do not broadcast")
    yield SampleInput("ij,jk->ik", [a], name="too few operands")
    yield SampleInput("ij->ik", [a], name="output letter not in inputs")
    yield SampleInput("ijk->ij", [a], name="too many subscripts")


@errors("mm.default")
def mm_errors() -> Iterator[ErrorInput]:
    a = ember.from_numpy(np.ones((2, 3), np.float32))
    b = ember.from_numpy(np.ones((4, 5), np.float32))
    d = ember.from_numpy(np.ones((3, 2), np.float64))
    yield ErrorInput(SampleInput(a, b), RuntimeError, r"cannot be multiplied \(2x3 and 4x5\)")
    yield ErrorInput(SampleInput(a, d), RuntimeError, "same dtype")


@errors("matmul.default")
def matmul_errors() -> Iterator[ErrorInput]:
    a = ember.from_numpy(np.ones((2, 3), np.float32))
    b = ember.from_numpy(np.ones((4, 5), np.float32))
    yield ErrorInput(SampleInput(a, b), RuntimeError, r"cannot be multiplied \(2x3 and 4x5\)")
