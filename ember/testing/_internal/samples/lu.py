"""Sample inputs for the LU factorisation (NOTE [LU factors] in ``ember/ops/native/lu.py``)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import ember
from ember import dtypes
from ember.testing._internal.opinfo import EDGE_DIFFERENCES, SampleInput, samples
from ember.testing._internal.samples.linalg import (
    _LAPACK_NONFINITE,
    DOUBLE,
    LA_TOL,
    LINALG,
    _well,
)

S = SampleInput
EDGE_DIFFERENCES.update({n: _LAPACK_NONFINITE for n in (
    "linalg_lu_factor_ex", "linalg_lu_factor", "linalg_lu", "_lu_with_info", "lu_unpack",
    "linalg_lu_solve", "lu_solve")})  # fmt: skip
_SINGULAR_SOLVE = (
    frozenset({"special", "zeros"}),
    "an all-zero LU is singular: the solve divides by zero, and which entries of the result "
    "and its gradient come out inf and which NaN is LAPACK's order of operations",
)
EDGE_DIFFERENCES.update({"linalg_lu_solve": _SINGULAR_SOLVE, "lu_solve": _SINGULAR_SOLVE})
_SHAPES = ((3, 3), (2, 4, 4), (3, 5), (5, 3), (1, 1), (0, 0), (2, 0, 3))


def _factors(make: Any, shape: tuple[int, ...]) -> tuple[Any, Any]:
    LU, piv, _ = ember.ops.aten.linalg_lu_factor_ex.default(make(shape, low=-1, high=1))
    return LU, piv


@samples("linalg_lu_factor_ex.default", "linalg_lu.default", "_lu_with_info.default",
         dtypes=LINALG, **LA_TOL)  # fmt: skip
def lu_factor_ex_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    for shape in _SHAPES:
        yield S(make(shape, low=-1, high=1), name=str(shape))
    yield S(make((4, 3), low=-1, high=1, noncontiguous=True), name="nc")
    if dtype not in DOUBLE:  # (the gradient checks take the others: no derivative there)
        yield S(make((3, 3)).zero_(), name="singular")
    yield S(make((3,)), name="1-D raises")
    yield S(make((3, 3), dtypes.int64), name="integers raise")


@samples("linalg_lu_factor.default", dtypes=LINALG, **LA_TOL)
def lu_factor_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    for shape in _SHAPES:
        yield S(make(shape, low=-1, high=1), name=str(shape))
    yield S(make((3, 3), low=-1, high=1), pivot=False, name="no pivoting raises")


@samples("lu_unpack.default", dtypes=LINALG, **LA_TOL)
def lu_unpack_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    for shape in _SHAPES:
        yield S(*_factors(make, shape), name=str(shape))
    LU, piv = _factors(make, (4, 4))
    yield S(LU, piv, False, name="no data")
    yield S(LU, piv, unpack_pivots=False, name="no pivots")
    yield S(LU, piv.long(), name="int64 pivots raise")


@samples("linalg_lu_solve.default", dtypes=LINALG, **LA_TOL)
def lu_solve_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    A = _well(make, (3, 3))
    LU, piv, _ = ember.ops.aten.linalg_lu_factor_ex.default(A)
    for left in (True, False):
        for adjoint in (False, True):
            yield S(LU, piv, make((3, 3)), left=left, adjoint=adjoint)
    yield S(LU, piv, make((3, 2)), name="tall B")
    yield S(LU, piv, make((2, 3)), left=False, name="wide B on the right")
    Ab = _well(make, (2, 3, 3))
    LUb, pivb, _ = ember.ops.aten.linalg_lu_factor_ex.default(Ab)
    yield S(LUb, pivb, make((3, 1)), name="batched LU")
    yield S(LU, piv, make((2, 3, 2)), name="batched B")
    yield S(LU, piv, make((3,)), name="1-D B raises")
    yield S(LU, piv, make((4, 2)), name="rows raise")


@samples("lu_solve.default", dtypes=LINALG, **LA_TOL)
def old_lu_solve_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    LU, piv, _ = ember.ops.aten.linalg_lu_factor_ex.default(_well(make, (3, 3)))
    yield S(make((3, 2)), LU, piv)
    yield S(make((2, 3, 1)), LU, piv, name="batched")
