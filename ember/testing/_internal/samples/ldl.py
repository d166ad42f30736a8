"""Sample inputs for the LDL factorisation (NOTE [LDL factors] in ``ember/ops/native/ldl.py``):
symmetric and hermitian matrices, indefinite ones (2x2 pivots), batches, empty ones, a
singular one (info > 0), and PyTorch's refusals."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import ember
from ember import dtypes
from ember.testing._internal.opinfo import EDGE_DIFFERENCES, SampleInput, samples
from ember.testing._internal.samples.linalg import _LAPACK_NONFINITE, LA_TOL, LINALG

S = SampleInput
EDGE_DIFFERENCES.update({n: _LAPACK_NONFINITE for n in (
    "linalg_ldl_factor_ex", "linalg_ldl_factor")})  # fmt: skip
EDGE_DIFFERENCES["linalg_ldl_solve"] = (
    frozenset({"special", "zeros"}),
    "all-zero or non-finite factors: the solve divides by zero, and which entries come out "
    "inf and which NaN is LAPACK's order of operations",
)


def _symmetric(make: Any, shape: tuple[int, ...], hermitian: bool) -> Any:
    a = make(shape, low=-1, high=1)
    t = a.mT.conj() if hermitian and a.is_complex() else a.mT
    return a + t


@samples("linalg_ldl_factor_ex.default", "linalg_ldl_factor.default", dtypes=LINALG, **LA_TOL)
def ldl_factor_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    for shape in ((3, 3), (2, 4, 4), (1, 1), (0, 0), (2, 0, 0)):
        yield S(_symmetric(make, shape, False))
        yield S(_symmetric(make, shape, True), hermitian=True)
    yield S(make((4, 4), noncontiguous=True), name="the lower triangle is read")
    x = ember.tensor([[0.0, 1.0, 2.0], [1.0, 0.0, 3.0], [2.0, 3.0, 0.0]]).to(dtype)
    yield S(x, name="2x2 pivots")
    yield S(make((3, 4)), name="non-square raises")
    yield S(make((3,)), name="1-D raises")
    if dtype == dtypes.float32:
        yield S(make((3, 3), dtype=dtypes.int64), name="integers raise")


@samples("linalg_ldl_solve.default", dtypes=LINALG, **LA_TOL)
def ldl_solve_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    factor = ember.ops.aten.linalg_ldl_factor_ex.default
    for shape, b, herm in (
        ((3, 3), (3, 2), False),
        ((2, 4, 4), (2, 4, 1), True),
        ((4, 4), (3, 4, 2), False),  # B's batch broadcasts
        ((2, 3, 3), (3, 5), False),
        ((0, 0), (0, 2), False),
    ):
        LD, piv, _ = factor(_symmetric(make, shape, herm), hermitian=herm)
        yield S(LD, piv, make(b), hermitian=herm)
    LD, piv, _ = factor(_symmetric(make, (3, 3), False))
    yield S(LD, piv, make((4, 2)), name="sizes raise")
    yield S(LD, piv, make((3,)), name="1-D B raises")
