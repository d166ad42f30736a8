"""Sample inputs for the linear algebra ops (see ember/testing/_internal/opinfo.py)."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import numpy as np

import ember
from ember import dtypes
from ember.testing._internal.opinfo import (
    ALL_DTYPES,
    EDGE_DIFFERENCES,
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


@samples("vdot.default", dtypes=MATMUL_DTYPES, atol=1e-2, rtol=1e-2)
def vdot_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((5,), **SMALL), make((5,), **SMALL))  # complex: self conjugated
    yield SampleInput(make((4,), noncontiguous=True, **SMALL), make((4,), **SMALL))
    yield SampleInput(make((1,)), make((1,)))
    yield SampleInput(make((0,)), make((0,)), name="empty (bool raises even so)")
    yield SampleInput(make((2,)), make((3,)), name="size mismatch raises")
    yield SampleInput(make((2, 2)), make((2, 2)), name="2-D raises")
    yield SampleInput(make(()), make((1,)), name="0-D raises")
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


@samples("outer.default", "ger.default", dtypes=ALL_DTYPES)
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


# =========================================================================== ember.linalg
# Matrices are built from the sample's random values so every dtype sees the same shapes:
# ``_well`` adds n to the diagonal (well conditioned), ``_spd`` is ``M M^H + n I``
# (Hermitian positive-definite). A ``.mT`` of one is the same matrix laid out column-major.

LINALG = (dtypes.float32, dtypes.float64, dtypes.complex64, dtypes.complex128)

_LAPACK_NONFINITE = (
    frozenset({"special"}),
    "LAPACK's pivoting and blocking over inf and NaN entries are its own (MKL's in PyTorch, "
    "OpenBLAS's here): which entries come out NaN is not defined",
)
EDGE_DIFFERENCES.update({
    name: _LAPACK_NONFINITE
    for name in ("linalg_cholesky_ex", "_linalg_solve_ex", "linalg_solve_ex", "_linalg_det",
                 "_linalg_slogdet", "linalg_slogdet", "slogdet", "linalg_lstsq", "_linalg_svd",
                 "linalg_svd", "svd", "_linalg_eigh", "linalg_eigh")
})  # fmt: skip
REAL_LINALG = (dtypes.float32, dtypes.float64)
LA_TOL = {"atol": 1e-4, "rtol": 1e-4}
#: the dtypes of the samples the gradient checks take (tests/test_gradcheck.py,
#: tests/test_complex_autograd.py): inputs where no derivative exists are left out of them
DOUBLE = (dtypes.float64, dtypes.complex128)


def _np(t: Any) -> np.ndarray:
    return np.asarray(t._edata)


def _well(make: Any, shape: tuple[int, ...], dtype: Any = None) -> Any:
    """A well-conditioned (diagonally dominant) matrix or batch of them."""
    a = _np(make(shape, dtype=dtype, low=-1, high=1))
    n = shape[-1]
    return ember.from_numpy((a + n * np.eye(shape[-2], n)).astype(a.dtype))


def _spd(make: Any, shape: tuple[int, ...], dtype: Any = None) -> Any:
    """A Hermitian positive-definite matrix or batch of them."""
    a = _np(make(shape, dtype=dtype, low=-1, high=1))
    h = a @ np.swapaxes(a, -1, -2).conj() + shape[-1] * np.eye(shape[-1])
    return ember.from_numpy(h.astype(a.dtype))


def _bad_dtypes(make: Any, fn: Any) -> Iterator[SampleInput]:
    """The same call with an int64, a bool and a float16 matrix: each refused."""
    for d in (dtypes.int64, dtypes.bool_, dtypes.float16):
        yield fn(make((3, 3), dtype=d), d)


# the ops that raise LinAlgError read values, which their Meta rules do not have
VALUE_ERRORS = {"meta_errors": False}


@samples("_linalg_check_errors.default", dtypes=(dtypes.int32,), **VALUE_ERRORS)
def linalg_check_errors_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    ok = ember.zeros(2, dtype=dtypes.int32)
    yield SampleInput(ok, "linalg.inv", is_matrix=False)
    yield SampleInput(ember.zeros((), dtype=dtypes.int32), "linalg.cholesky", is_matrix=True)
    for api in ("linalg.inv", "torch.linalg.solve", "linalg.cholesky", "linalg.eigh"):
        yield SampleInput(ember.tensor([0, 2], dtype=dtypes.int32), api, is_matrix=False,
                          name="raises")  # fmt: skip
    yield SampleInput(ember.tensor(3, dtype=dtypes.int32), "linalg.inv", is_matrix=True,
                      name="raises")  # fmt: skip


@samples("linalg_cholesky.default", "cholesky.default", dtypes=LINALG, **LA_TOL, **VALUE_ERRORS)
def cholesky_raising_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield from cholesky_samples(make, dtype)


@samples("linalg_cholesky_ex.default", dtypes=LINALG, **LA_TOL)
def cholesky_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(_spd(make, (3, 3)))
    yield SampleInput(_spd(make, (2, 4, 4)), name="batched")
    yield SampleInput(_spd(make, (3, 3)).mT, name="column-major")
    yield SampleInput(_spd(make, (2, 3, 3)), upper=True)
    yield SampleInput(make((0, 3, 3)), name="empty batch")
    yield SampleInput(make((2, 0, 0)), name="empty matrices")
    yield SampleInput(make((3,)), name="1-D raises")
    yield SampleInput(make((2, 3)), name="non-square raises")
    if dtype in (dtypes.float64, dtypes.complex128):
        return  # (the double-precision samples feed the gradient checks: a factorization
        # that fails has no derivative, and a float16 input would be checked in float64)
    not_pd = ember.from_numpy(np.array([[4, 2, 1], [2, 1, 3], [1, 3, 5]], dtype=dtype.np))
    yield SampleInput(not_pd, name="not positive-definite")
    yield SampleInput(ember.stack([_spd(make, (3, 3)), not_pd]), name="batch element 1 fails")
    yield from _bad_dtypes(make, lambda t, d: SampleInput(t, name=f"{d.name} raises"))


@samples("linalg_solve_triangular.default", dtypes=LINALG, **LA_TOL)
def solve_triangular_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    a, b = _well(make, (3, 3)), make((3, 2), low=-1, high=1)
    yield SampleInput(a, b, upper=True)
    yield SampleInput(a, b, upper=False)
    yield SampleInput(a, make((2, 3), low=-1, high=1), upper=True, left=False)
    yield SampleInput(a, b, upper=False, unitriangular=True)
    yield SampleInput(_well(make, (2, 3, 3)), b, upper=True, name="batch broadcast")
    yield SampleInput(a.mT, make((4, 3, 1)), upper=False, name="column-major, batched B")
    yield SampleInput(a, make((3, 2), noncontiguous=True), upper=True, left=True)
    yield SampleInput(make((0, 3, 3)), b, upper=True, name="empty batch")
    yield SampleInput(make((3, 3)), make((3, 2)), upper=True, unitriangular=True)
    yield SampleInput(a, make((4, 2)), upper=True, name="size mismatch raises")
    yield SampleInput(a, make((3,)), upper=True, name="1-D B raises")
    yield SampleInput(make((3, 2)), b, upper=True, name="non-square raises")
    other = dtypes.float64 if dtype is not dtypes.float64 else dtypes.float32
    yield SampleInput(a, make((3, 2), dtype=other), upper=True, name="dtype mismatch raises")
    yield SampleInput(make((3, 3), dtype=dtypes.int64), make((3, 2), dtype=dtypes.int64),
                      upper=True, name="int64 raises")  # fmt: skip


@samples("linalg_inv.default", "inverse.default", dtypes=LINALG, **LA_TOL, **VALUE_ERRORS)
def inv_raising_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield from inv_samples(make, dtype)


@samples("linalg_inv_ex.default", dtypes=LINALG, **LA_TOL)
def inv_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(_well(make, (3, 3)))
    yield SampleInput(_well(make, (2, 2, 4, 4)), name="batched")
    yield SampleInput(_well(make, (3, 3)).mT, name="column-major")
    yield SampleInput(make((0, 2, 2)), name="empty batch")
    yield SampleInput(make((0, 0)), name="empty matrix")
    sing = np.zeros((2, 3, 3), dtype.np)
    sing[0] = np.eye(3)
    yield SampleInput(ember.from_numpy(sing), name="batch element 1 singular")
    yield SampleInput(make((3,)), name="1-D raises")
    yield SampleInput(make((2, 3)), name="non-square raises")
    yield from _bad_dtypes(make, lambda t, d: SampleInput(t, name=f"{d.name} raises"))


def _solve_cases(make: Any, dtype: Any) -> Iterator[SampleInput]:
    a = _well(make, (3, 3))
    yield SampleInput(a, make((3, 2), low=-1, high=1))
    yield SampleInput(a, make((3,), low=-1, high=1), name="vector B")
    yield SampleInput(_well(make, (2, 3, 3)), make((3,), low=-1, high=1), name="broadcast vector")
    yield SampleInput(_well(make, (2, 3, 3)), make((2, 3), low=-1, high=1), name="batch of vectors")
    yield SampleInput(a, make((4, 1, 3, 2), low=-1, high=1), name="batch broadcast B")
    yield SampleInput(a, make((2, 3), low=-1, high=1), left=False)
    yield SampleInput(a.mT, make((3, 2), noncontiguous=True), name="non-contiguous")
    yield SampleInput(make((0, 3, 3)), make((0, 3, 1)), name="empty batch")
    yield SampleInput(ember.zeros(2, 3, 3, dtype=dtype), make((2, 3, 1)), name="singular")
    yield SampleInput(a, make((4,)), name="size mismatch raises")
    yield SampleInput(a, make((3, 2)), left=False, name="left=False mismatch raises")
    other = dtypes.float64 if dtype is not dtypes.float64 else dtypes.float32
    yield SampleInput(a, make((3, 2), dtype=other), name="dtype mismatch raises")
    yield SampleInput(make((3, 2)), make((3, 2)), name="non-square raises")


@samples("linalg_solve.default", dtypes=LINALG, **LA_TOL, **VALUE_ERRORS)
def solve_raising_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield from solve_samples(make, dtype)


@samples("_linalg_solve_ex.default", "linalg_solve_ex.default", dtypes=LINALG, **LA_TOL)
def solve_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield from _solve_cases(make, dtype)
    yield SampleInput(make((3, 3), dtype=dtypes.int64), make((3, 1), dtype=dtypes.int64),
                      name="int64 raises")  # fmt: skip


@samples("logdet.default", dtypes=LINALG, **LA_TOL)
def logdet_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    for s in det_samples(make, dtype):
        if not (s.name == "singular" and dtype.is_complex):  # PyTorch's complex add of a
            yield s  # real -inf gives a NaN imaginary part: log(0) + -inf is -inf+nanj


@samples(
    "_linalg_det.default",
    "linalg_det.default",
    "det.default",
    "_linalg_slogdet.default",
    "linalg_slogdet.default",
    "slogdet.default",
    dtypes=LINALG,
    **LA_TOL,
)
def det_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((3, 3), low=-1, high=1))
    yield SampleInput(make((2, 4, 4), low=-1, high=1), name="batched")
    yield SampleInput(make((3, 3), low=-1, high=1).mT, name="column-major")
    yield SampleInput(_spd(make, (3, 3)), name="positive-definite")
    yield SampleInput(make((1, 1)))
    yield SampleInput(make((0, 0)), name="empty matrix")
    yield SampleInput(make((2, 0, 0)), name="empty matrices")
    yield SampleInput(ember.zeros(3, 3, dtype=dtype), name="singular")
    yield SampleInput(make((3,)), name="1-D raises")
    yield SampleInput(make((2, 3)), name="non-square raises")
    yield from _bad_dtypes(make, lambda t, d: SampleInput(t, name=f"{d.name} raises"))


@samples("cross.default", dtypes=(*LINALG, dtypes.int64), **LA_TOL)
def cross_positional_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    for s in cross_samples(make, dtype):
        yield SampleInput(*s.args, s.kwargs["dim"], name=s.name)
    yield SampleInput(make((4, 3)), make((4, 3)), name="first dim of size 3")
    yield SampleInput(make((4, 2)), make((4, 2)), name="no dim of size 3 raises")


@samples("linalg_cross.default", dtypes=(*LINALG, dtypes.int64), **LA_TOL)
def cross_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((4, 3)), make((4, 3)), dim=1)
    yield SampleInput(make((3, 2)), make((3, 2)), dim=0)
    yield SampleInput(make((3,)), make((3,)), dim=-1)
    yield SampleInput(make((2, 1, 3)), make((1, 4, 3)), dim=-1, name="broadcast")
    yield SampleInput(make((3, 4), noncontiguous=True), make((3, 4)), dim=0)
    yield SampleInput(make((0, 3)), make((0, 3)), dim=1)
    other = dtypes.float64 if dtype is not dtypes.float64 else dtypes.float32
    yield SampleInput(make((4, 3)), make((4, 3), dtype=other), dim=1, name="mixed dtypes raise")
    yield SampleInput(make((4, 2)), make((4, 2)), dim=1, name="size 2 raises")
    yield SampleInput(make((4, 3)), make((3,)), dim=-1, name="ndim mismatch raises")


# NOTE [gauge of singular and eigen vectors]: each singular vector pair (each eigenvector) is
# defined up to a sign (a phase for complex matrices), which LAPACK picks: MKL's in PyTorch and
# OpenBLAS's here agree on the samples below (checked by the value and gradient tests), not on
# every matrix. tests/test_linalg_namespace.py checks the decompositions on other inputs
# through what the sign does not change (reconstructions, |U|, gradients of such losses).


@samples("_linalg_svd.default", "linalg_svd.default", "svd.default", dtypes=LINALG, **LA_TOL)
def svd_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    """Shapes whose singular vectors MKL and OpenBLAS give alike (NOTE [gauge of singular and
    eigen vectors]): square 2x2 and tall with two columns."""
    yield SampleInput(make((2, 2), low=-1, high=1))
    yield SampleInput(make((4, 2), low=-1, high=1), False, name="tall")
    yield SampleInput(make((2, 4, 2), low=-1, high=1), name="batched tall")
    yield SampleInput(make((3, 1), low=-1, high=1), name="one column")
    yield SampleInput(make((1, 3), low=-1, high=1), name="one row")
    yield SampleInput(make((0, 3)), name="empty")
    yield SampleInput(make((3,)), name="1-D raises")
    yield from _bad_dtypes(make, lambda t, d: SampleInput(t, name=f"{d.name} raises"))


@samples("linalg_svdvals.default", dtypes=LINALG, **LA_TOL)
def svdvals_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((3, 3), low=-1, high=1))
    yield SampleInput(make((4, 2), low=-1, high=1), name="tall")
    yield SampleInput(make((2, 2, 5), low=-1, high=1), name="wide batched")
    yield SampleInput(make((3, 3), noncontiguous=True), name="non-contiguous")
    yield SampleInput(make((0, 2, 3)), name="empty batch")
    yield SampleInput(make((3,)), name="1-D raises")
    yield SampleInput(make((3, 3)), driver="gesvd", name="driver raises")
    yield from _bad_dtypes(make, lambda t, d: SampleInput(t, name=f"{d.name} raises"))


@samples("linalg_cond.default", dtypes=LINALG, **LA_TOL)
def cond_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((3, 3), low=-1, high=1))
    yield SampleInput(make((2, 3, 3), low=-1, high=1), p=-2, name="batched p=-2")
    yield SampleInput(make((4, 2), low=-1, high=1), p=2, name="tall p=2")
    for p in (1, -1, math.inf, -math.inf):
        yield SampleInput(make((3, 3), low=-1, high=1), p=p, name=f"p={p}")
    yield SampleInput(make((0, 0)), name="empty")
    yield SampleInput(make((2, 3)), p=1, name="non-square p=1 raises")
    yield SampleInput(make((3,)), name="1-D raises")
    yield SampleInput(make((3, 3)), p=3, name="p=3 raises")


@samples("linalg_cond.p_str", dtypes=LINALG, **LA_TOL)
def cond_str_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((3, 3), low=-1, high=1), "fro")
    yield SampleInput(make((2, 3, 3), low=-1, high=1), "nuc", name="batched nuc")
    yield SampleInput(make((2, 0, 0)), "fro", name="empty batch")
    yield SampleInput(make((2, 3)), "nuc", name="non-square raises")
    yield SampleInput(make((3, 3)), "max", name="unknown norm raises")


@samples("qr.default", dtypes=LINALG, **LA_TOL)
def qr_some_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((3, 3), low=-1, high=1))
    yield SampleInput(make((4, 3), low=-1, high=1), name="tall, some")
    yield SampleInput(make((3, 4), low=-1, high=1), False, name="wide, not some")
    yield SampleInput(make((2,)), name="1-D raises")


# (not float16: PyTorch's half-precision matrix_exp overflows to inf for entries of [-1, 1];
# ember's computes in float32: docs/fidelity.md)
@samples("linalg_matrix_exp.default", "matrix_exp.default", dtypes=LINALG, atol=1e-4, rtol=1e-4)
def matrix_exp_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((3, 3), low=-1, high=1))
    yield SampleInput(make((2, 4, 4), low=-1, high=1), name="batched")
    yield SampleInput(make((3, 3), low=-1, high=1, noncontiguous=True), name="nc")
    yield SampleInput(make((1, 1), low=-1, high=1), name="1x1")
    yield SampleInput(make((0, 0)), name="empty")
    yield SampleInput(make((2, 3)), name="not square raises")
    yield SampleInput(make((3,)), name="1-D raises")


@samples("linalg_qr.default", dtypes=LINALG, **LA_TOL)
def qr_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((3, 3), low=-1, high=1))
    yield SampleInput(make((4, 3), low=-1, high=1), name="tall")
    yield SampleInput(make((2, 2, 3), low=-1, high=1), name="wide batched")
    if dtype not in DOUBLE:  # (the double-precision samples feed the gradient tests, and
        # neither library differentiates it: tests/test_linalg_namespace.py checks the error)
        yield SampleInput(make((4, 3), low=-1, high=1), "complete")
    yield SampleInput(make((3, 4), low=-1, high=1), "complete", name="wide complete")
    if dtype not in DOUBLE:
        yield SampleInput(make((4, 3), low=-1, high=1), mode="r")
    yield SampleInput(make((3, 3), noncontiguous=True), name="non-contiguous")
    yield SampleInput(make((0, 3)), name="empty")
    if dtype not in DOUBLE:
        yield SampleInput(make((3, 0)), "complete", name="empty complete")
    yield SampleInput(make((3, 3)), "full", name="bad mode raises")
    yield SampleInput(make((3,)), name="1-D raises")
    yield from _bad_dtypes(make, lambda t, d: SampleInput(t, name=f"{d.name} raises"))


@samples("_linalg_eigh.default", "linalg_eigh.default", dtypes=LINALG, **LA_TOL)
def eigh_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    """2x2 matrices, whose eigenvectors MKL and OpenBLAS give alike (NOTE [gauge of singular
    and eigen vectors]); eigvalsh, which has no such freedom, takes larger ones."""
    yield SampleInput(_spd(make, (2, 2)))
    yield SampleInput(_spd(make, (2, 2)), "U")
    yield SampleInput(_spd(make, (3, 2, 2)).mT, name="batched, column-major")
    yield from _eigh_errors(make)


def _eigh_errors(make: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((0, 2, 2)), name="empty batch")
    yield SampleInput(make((3, 3)), "X", name="bad UPLO raises")
    yield SampleInput(make((2, 3)), name="non-square raises")
    yield from _bad_dtypes(make, lambda t, d: SampleInput(t, name=f"{d.name} raises"))


@samples("linalg_eigvalsh.default", dtypes=LINALG, **LA_TOL)
def eigvalsh_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(_spd(make, (3, 3)))
    yield SampleInput(_spd(make, (3, 3)), "U")
    yield SampleInput(_spd(make, (2, 4, 4)).mT, name="batched, column-major")
    yield SampleInput(make((3, 3), low=-1, high=1), name="reads one triangle")
    yield from _eigh_errors(make)


def _pinv_inputs(make: Any) -> Iterator[Any]:
    yield make((3, 3), low=-1, high=1)
    yield make((4, 2), low=-1, high=1)
    yield make((2, 3, 5), low=-1, high=1)


@samples("linalg_pinv.atol_rtol_tensor", dtypes=LINALG, **LA_TOL)
def pinv_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    for a in _pinv_inputs(make):
        yield SampleInput(a)
    yield SampleInput(_spd(make, (3, 3)), hermitian=True)
    a = make((4, 3), low=-1, high=1)
    yield SampleInput(a, atol=ember.tensor(0.5, dtype=dtypes.float64), name="atol")
    yield SampleInput(a, rtol=ember.tensor(1e-3, dtype=dtypes.float64), name="rtol")
    if dtype in (dtypes.float32, dtypes.complex64):  # (singular values dropped: no derivative)
        yield SampleInput(a[:2], rtol=ember.tensor(0.9, dtype=dtypes.float64), name="rtol drops")
    yield SampleInput(make((0, 3)), name="empty")
    yield SampleInput(make((3,)), name="1-D raises")
    yield from _bad_dtypes(make, lambda t, d: SampleInput(t, name=f"{d.name} raises"))


@samples("linalg_pinv.atol_rtol_float", dtypes=LINALG, **LA_TOL)
def pinv_float_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    a = make((4, 3), low=-1, high=1)
    # tolerances that drop singular values leave no derivative: single precision only
    big = 0.5 if dtype not in DOUBLE else 1e-3
    yield SampleInput(a, atol=big)
    yield SampleInput(a, rtol=big)
    yield SampleInput(a, atol=big / 5, rtol=big / 2)
    yield SampleInput(_spd(make, (3, 3)), rtol=0.01, hermitian=True)


@samples("linalg_pinv.default", "pinverse.default", dtypes=LINALG, **LA_TOL)
def pinv_rcond_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((4, 3), low=-1, high=1), 0.3)
    yield SampleInput(make((2, 3, 2), low=-1, high=1), 1e-15)


@samples("linalg_pinv.rcond_tensor", dtypes=LINALG, **LA_TOL)
def pinv_rcond_tensor_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((4, 3), low=-1, high=1), ember.tensor(0.3))
    yield SampleInput(make((2, 3, 3), low=-1, high=1), ember.tensor([0.1, 0.6]), hermitian=False)


@samples("linalg_lstsq.default", dtypes=LINALG, **LA_TOL)
def lstsq_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    tall, b = make((5, 3), low=-1, high=1), make((5, 2), low=-1, high=1)
    yield SampleInput(tall, b)
    for driver in ("gelsy", "gelsd", "gelss", "gels"):
        yield SampleInput(tall, b, driver=driver)
    yield SampleInput(make((3, 3), low=-1, high=1), make((3, 2), low=-1, high=1), driver="gelsd")
    yield SampleInput(make((3, 5), low=-1, high=1), make((3, 2), low=-1, high=1), driver="gelss",
                      name="wide")  # fmt: skip
    yield SampleInput(make((2, 5, 3), low=-1, high=1), make((5, 2), low=-1, high=1),
                      driver="gelsd", name="vector-like b")  # fmt: skip
    yield SampleInput(tall, make((5,), low=-1, high=1), driver="gelsd", name="vector b")
    yield SampleInput(make((2, 5, 3), low=-1, high=1), make((2, 5, 1), low=-1, high=1),
                      0.1, driver="gelsd", name="batched rcond")  # fmt: skip
    if dtype in (dtypes.float32, dtypes.complex64):  # (no derivative at a rank-deficient
        # matrix, so not among the double-precision samples the gradient checks take)
        rank1 = ember.from_numpy(np.repeat(_np(make((5, 1))), 3, axis=1))
        yield SampleInput(rank1, b, name="rank deficient")  # (gelsy: no residuals)
    yield SampleInput(tall, b, driver="gelsx", name="bad driver raises")
    yield SampleInput(tall, make((4, 2)), name="size mismatch raises")
    yield SampleInput(make((3,)), make((3,)), name="1-D raises")
    yield SampleInput(make((3, 3), dtype=dtypes.int64), make((3, 1), dtype=dtypes.int64),
                      name="int64 raises")  # fmt: skip


@samples("linalg_matrix_rank.atol_rtol_tensor", dtypes=LINALG)
def matrix_rank_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((3, 3), low=-1, high=1))
    yield SampleInput(ember.from_numpy(np.repeat(_np(make((4, 1))), 3, axis=1)), name="rank 1")
    yield SampleInput(make((2, 3, 5), low=-1, high=1), atol=ember.tensor(0.5, dtype=dtypes.float64))
    yield SampleInput(_spd(make, (3, 3)), hermitian=True)
    yield SampleInput(make((4, 3)), rtol=ember.tensor(0.5, dtype=dtypes.float64))
    yield SampleInput(make((3,)), name="1-D raises")
    yield SampleInput(make((3, 3), dtype=dtypes.int64), name="int64 raises")


@samples("linalg_matrix_rank.atol_rtol_float", dtypes=LINALG)
def matrix_rank_float_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((3, 4), low=-1, high=1), atol=0.5)
    yield SampleInput(make((3, 4), low=-1, high=1), rtol=0.5)
    yield SampleInput(_spd(make, (3, 3)), atol=1.0, rtol=0.1, hermitian=True)


@samples("linalg_matrix_rank.default", dtypes=LINALG)
def matrix_rank_tol_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((3, 4), low=-1, high=1), 0.5)
    yield SampleInput(_spd(make, (3, 3)), 3.0, True)


@samples("linalg_matrix_rank.tol_tensor", dtypes=LINALG)
def matrix_rank_tol_tensor_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((2, 3, 4), low=-1, high=1), ember.tensor([0.5, 1.5]))


@samples("linalg_matrix_power.default", "matrix_power.default",
         dtypes=(*LINALG, dtypes.int64), **LA_TOL)  # fmt: skip
def matrix_power_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    a = make((3, 3), low=-1, high=2)
    for n in (0, 1, 2, 3, 6):
        yield SampleInput(a, n)
    yield SampleInput(make((2, 3, 3), low=-1, high=2), 5, name="batched")
    yield SampleInput(make((0, 2, 2)), 3, name="empty batch")
    if dtype.category >= dtypes.FLOATING:
        yield SampleInput(_well(make, (3, 3)), -1)
        yield SampleInput(_well(make, (2, 3, 3)), -4, name="batched inverse")
    else:
        yield SampleInput(a, -1, name="negative power of integers raises")
    yield SampleInput(make((2, 3)), 2, name="non-square raises")
    yield SampleInput(make((3,)), 2, name="1-D raises")


@samples("linalg_vander.default", dtypes=(*LINALG, dtypes.int64), **LA_TOL)
def linalg_vander_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((3,), low=-2, high=2))
    yield SampleInput(make((2, 3), low=-2, high=2), N=4, name="batch, N")
    yield SampleInput(make((4,), noncontiguous=True, low=-2, high=2), N=2)
    yield SampleInput(make((2, 0), low=-2, high=2), N=3, name="empty batch")
    yield SampleInput(make((3,)), N=1, name="N=1 raises")
    yield SampleInput(make(()), name="0-d raises")
    yield SampleInput(make((3,), dtype=dtypes.bool_), name="bool raises")


@samples("linalg_vecdot.default", dtypes=LINALG, **LA_TOL)
def vecdot_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((3, 4)), make((3, 4)))
    yield SampleInput(make((3, 4)), make((4,)), dim=-1, name="broadcast")
    yield SampleInput(make((3, 4)), make((3, 4)), dim=0)
    yield SampleInput(make((4,), noncontiguous=True), make((4,)))
    yield SampleInput(make((0, 3)), make((0, 3)))
    other = dtypes.float64 if dtype is not dtypes.float64 else dtypes.float32
    yield SampleInput(make((3,)), make((3,), dtype=other), name="mixed dtypes raise")
    yield SampleInput(make((3,), dtype=dtypes.int64), make((3,), dtype=dtypes.int64),
                      name="int64 raises")  # fmt: skip


@samples("linalg_multi_dot.default", dtypes=LINALG, **LA_TOL)
def multi_dot_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput([make((3, 4)), make((4, 2))])
    yield SampleInput([make((2, 3)), make((3, 3)), make((3, 5)), make((5, 1))])
    yield SampleInput([make((4,)), make((4, 3)), make((3, 2))], name="1-D first")
    yield SampleInput([make((2, 4)), make((4, 3)), make((3,))], name="1-D last")
    yield SampleInput([make((4,)), make((4,))], name="two vectors")
    yield SampleInput([make((6, 2)), make((2, 6)), make((6, 2))], name="order matters")
    yield SampleInput([make((3, 4))], name="one tensor raises")
    yield SampleInput([make((3, 4)), make((5, 2))], name="sizes raise")
    yield SampleInput([make((2, 3, 4)), make((4, 2))], name="3-D raises")


@samples("chain_matmul.default", dtypes=LINALG, **LA_TOL)
def chain_matmul_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput([make((3, 4)), make((4, 2))])
    yield SampleInput([make((2, 3)), make((3, 3), noncontiguous=True), make((3, 5))])
    yield SampleInput([make((3, 4))], name="one matrix: a copy")
    yield SampleInput([make((0, 4)), make((4, 2))], name="empty")
    yield SampleInput([], name="none raise")
    yield SampleInput([make((4,)), make((4, 3))], name="1-D raises")
    yield SampleInput([make((3, 4)), make((5, 2))], name="sizes raise")


@samples("linalg_diagonal.default", dtypes=LINALG)
def linalg_diagonal_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((3, 4)))
    yield SampleInput(make((2, 3, 3)), offset=1)
    yield SampleInput(make((2, 3, 4)), offset=-1, dim1=0, dim2=2)


@samples("linalg_matmul.default", dtypes=LINALG, **LA_TOL)
def linalg_matmul_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((2, 3)), make((3, 4)))
    yield SampleInput(make((2, 2, 3)), make((3,)))


MATRIX_ORDS = (1, -1, 2, -2, math.inf, -math.inf)


@samples("linalg_matrix_norm.default", dtypes=LINALG, **LA_TOL)
def matrix_norm_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    a = make((3, 4), low=-1, high=1)
    for order in MATRIX_ORDS:
        yield SampleInput(a, order)
    yield SampleInput(make((2, 3, 4), low=-1, high=1), 1, dim=(0, 2), keepdim=True)
    yield SampleInput(make((2, 3, 4), low=-1, high=1), math.inf, dim=(-1, 0))
    yield SampleInput(make((2, 3, 4), low=-1, high=1), -2, (2, 1), True)
    yield SampleInput(make((3, 4), noncontiguous=True), -math.inf)
    yield SampleInput(a, 2, dtype=dtypes.float64 if dtype.is_floating_point else dtypes.complex128)
    yield SampleInput(a, 3, name="ord 3 raises")
    yield SampleInput(a, 1, dim=(0, 0), name="same dims raise")
    yield SampleInput(make((3,)), 1, name="1-D raises")
    yield SampleInput(make((3, 3), dtype=dtypes.int64), 1, name="int64 raises")


@samples("linalg_matrix_norm.str_ord", dtypes=LINALG, **LA_TOL)
def matrix_norm_str_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    a = make((3, 4), low=-1, high=1)
    yield SampleInput(a)
    yield SampleInput(a, "nuc")
    yield SampleInput(make((2, 3, 4)), "fro", (0, 2), True)
    yield SampleInput(make((2, 3, 4), low=-1, high=1), "nuc", dim=(2, 1), keepdim=True)
    yield SampleInput(a, "inf", name="bad ord raises")


@samples("linalg_norm.default", dtypes=LINALG, **LA_TOL)
def linalg_norm_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    a = make((3, 4), low=-1, high=1)
    yield SampleInput(a)
    yield SampleInput(make((2, 3, 4)), name="all dims, no ord")
    yield SampleInput(a, 2)
    yield SampleInput(a, -math.inf)
    yield SampleInput(make((5,)), 3)
    yield SampleInput(make((5,)), 0.5)
    yield SampleInput(a, None, 1)
    yield SampleInput(a, 3, dim=1, keepdim=True)
    yield SampleInput(make((2, 3, 4), low=-1, high=1), 1, (0, 2))
    yield SampleInput(make((2, 3, 4)), 2, name="3-D with ord raises")
    yield SampleInput(make((2, 3, 4)), 2, (0, 1, 2), name="3 dims raise")


@samples("linalg_norm.ord_str", dtypes=LINALG, **LA_TOL)
def linalg_norm_str_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    a = make((3, 4), low=-1, high=1)
    yield SampleInput(a, "fro")
    yield SampleInput(a, "nuc", keepdim=True)
    yield SampleInput(make((2, 3, 4), low=-1, high=1), "nuc", (0, 2))
    yield SampleInput(make((2, 3, 4)), "fro", name="3-D without dim raises")


@samples("frobenius_norm.dim", dtypes=LINALG, **LA_TOL)
def frobenius_norm_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((3, 4)), [0, 1])
    yield SampleInput(make((2, 3, 4)), [2], True)


@samples("nuclear_norm.default", dtypes=LINALG, **LA_TOL)
def nuclear_norm_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((3, 4), low=-1, high=1))
    yield SampleInput(make((3, 4), low=-1, high=1), True)
    yield SampleInput(make((2, 3, 4), low=-1, high=1), name="batched")


@samples("nuclear_norm.dim", dtypes=LINALG, **LA_TOL)
def nuclear_norm_dim_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((2, 3, 4), low=-1, high=1), [0, 2])
    yield SampleInput(make((3, 4), low=-1, high=1), [1, 0], True)


@samples("baddbmm.default", dtypes=MATMUL_DTYPES, atol=1e-2, rtol=1e-2)
def baddbmm_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    s = {**SMALL}
    yield SampleInput(make((2, 3, 4), **s), make((2, 3, 5), **s), make((2, 5, 4), **s))
    yield SampleInput(make((3, 4), **s), make((2, 3, 5), **s), make((2, 5, 4), **s), beta=2,
                      alpha=3, name="broadcast self")  # fmt: skip
    yield SampleInput(make((2, 3, 4), noncontiguous=True, **s), make((2, 3, 5), **s),
                      make((2, 5, 4), noncontiguous=True, **s), name="noncontiguous")  # fmt: skip
    yield SampleInput(make((0, 3, 4)), make((0, 3, 5)), make((0, 5, 4)), name="empty")
    if dtype.category != dtypes.BOOL:  # (PyTorch's bool one fails casting its int64 zeros)
        yield SampleInput(make(()), make((2, 3, 0)), make((2, 0, 4)), name="inner size 0")
    yield SampleInput(make((2, 3)), make((2, 3, 5)), make((2, 5, 4)), name="self raises")
    yield SampleInput(make((2, 3, 4)), make((2, 3, 5)), make((2, 4, 4)), name="shapes raise")
    yield SampleInput(make((3, 5)), make((3, 5)), make((5, 4)), name="2-D raises")
    if dtype.category == dtypes.FLOATING:
        nan = ember.from_numpy(np.full((2, 3, 4), np.nan, dtype.np))
        yield SampleInput(nan, make((2, 3, 5)), make((2, 5, 4)), beta=0, name="beta=0")
        yield SampleInput(make((2, 3, 4)), make((2, 3, 5)), make((2, 5, 4)), beta=0.5,
                          alpha=-1.5)  # fmt: skip
        yield SampleInput(make((2, 3, 4), dtype=dtypes.float64), make((2, 3, 5)),
                          make((2, 5, 4)), name="dtypes differ raise")  # fmt: skip


@samples("addbmm.default", dtypes=MATMUL_DTYPES, atol=1e-2, rtol=1e-2)
def addbmm_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    s = {**SMALL}
    yield SampleInput(make((3, 4), **s), make((2, 3, 5), **s), make((2, 5, 4), **s))
    yield SampleInput(make((4,), **s), make((2, 3, 5), **s), make((2, 5, 4), **s), beta=2,
                      alpha=3, name="broadcast self")  # fmt: skip
    yield SampleInput(make((3, 4), **s), make((2, 3, 5), noncontiguous=True, **s),
                      make((2, 5, 4), **s), name="noncontiguous")  # fmt: skip
    if dtype.category != dtypes.BOOL:  # (PyTorch's bool one fails casting its int64 zeros)
        yield SampleInput(make((3, 4)), make((0, 3, 5)), make((0, 5, 4)), name="no batches")
    yield SampleInput(make((2, 3)), make((2, 3, 5)), make((2, 5, 4)), name="self raises")
    yield SampleInput(make((3, 4)), make((2, 3, 5)), make((3, 5, 4)), name="batches raise")
    if dtype.category == dtypes.FLOATING:
        nan = ember.from_numpy(np.full((3, 4), np.nan, dtype.np))
        yield SampleInput(nan, make((2, 3, 5)), make((2, 5, 4)), beta=0, name="beta=0")
        yield SampleInput(make((3, 4)), make((2, 3, 5)), make((2, 5, 4)), beta=0.5, alpha=-1.5)


@samples("addmv.default", dtypes=MATMUL_DTYPES, atol=1e-2, rtol=1e-2)
def addmv_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    s = {**SMALL}
    yield SampleInput(make((3,), **s), make((3, 5), **s), make((5,), **s))
    yield SampleInput(make((1,), **s), make((3, 5), **s), make((5,), **s), beta=2, alpha=3,
                      name="broadcast self")  # fmt: skip
    yield SampleInput(make((), **s), make((3, 5), noncontiguous=True, **s), make((5,), **s),
                      name="0-dim self, noncontiguous")  # fmt: skip
    yield SampleInput(make((0,)), make((0, 5)), make((5,)), name="empty")
    yield SampleInput(make((2,)), make((3, 5)), make((5,)), name="self raises")
    yield SampleInput(make((3,)), make((3, 5)), make((4,)), name="vec raises")
    if dtype.category == dtypes.FLOATING:
        nan = ember.from_numpy(np.full((3,), np.nan, dtype.np))
        yield SampleInput(nan, make((3, 5)), make((5,)), beta=0, name="beta=0")
        yield SampleInput(make((3,)), make((3, 5)), make((5,)), beta=0.5, alpha=-1.5)


@samples("addr.default", dtypes=MATMUL_DTYPES, atol=1e-2, rtol=1e-2)
def addr_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    s = {**SMALL}
    yield SampleInput(make((3, 4), **s), make((3,), **s), make((4,), **s))
    yield SampleInput(make((4,), **s), make((3,), **s), make((4,), **s), name="broadcast self")
    yield SampleInput(make((3, 4), noncontiguous=True, **s), make((3,), noncontiguous=True, **s),
                      make((4,), **s), name="noncontiguous")  # fmt: skip
    yield SampleInput(make((3, 4), **s), make((3,), **s), make((4,), dtype=dtypes.float64, **s),
                      name="promotes")  # fmt: skip
    yield SampleInput(make((0, 4)), make((0,)), make((4,)), name="empty")
    yield SampleInput(make((3, 4)), make((3, 1)), make((4,)), name="2-D vec raises")
    yield SampleInput(make((2, 4)), make((3,)), make((4,)), name="self raises")
    if dtype.category == dtypes.BOOL:
        yield SampleInput(make((3, 4)), make((3,)), make((4,)), beta=False, alpha=True)
        yield SampleInput(make((3, 4)), make((3,)), make((4,)), beta=2, name="int beta")
    elif dtype.category == dtypes.FLOATING:
        nan = ember.from_numpy(np.full((3, 4), np.nan, dtype.np))
        yield SampleInput(nan, make((3,)), make((4,)), beta=0, name="beta=0")
        yield SampleInput(make((3, 4)), make((3,)), make((4,)), beta=0.5, alpha=-1.5)
    elif dtype.category == dtypes.INTEGRAL:
        yield SampleInput(make((3, 4)), make((3,)), make((4,)), beta=2, alpha=-1)
        yield SampleInput(make((3, 4)), make((3,)), make((4,)), alpha=0.5, name="float raises")
        yield SampleInput(make((3, 4)), make((3,)), make((4,)), beta=True, name="bool raises")


@samples("vander.default", dtypes=ALL_DTYPES)
def vander_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    x = make((4,), low=-3, high=3)
    yield SampleInput(x)
    yield SampleInput(x, 3)
    yield SampleInput(x, 5, True)
    yield SampleInput(x, N=1, increasing=True)
    yield SampleInput(x, 0)
    yield SampleInput(make((4,), noncontiguous=True, low=-3, high=3), 2)
    yield SampleInput(make((0,)), 3, name="empty")
    yield SampleInput(make((2, 2)), name="2-D raises")
    yield SampleInput(x, -1, name="negative N raises")
