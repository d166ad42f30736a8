"""Sample inputs for the special functions (see ember/testing/_internal/opinfo.py): values on
each side of the functions' poles and branch points, integers (cast to float), float16,
broadcasting, non-contiguous inputs, and the dtypes PyTorch refuses."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import ember
from ember import dtypes
from ember.ops.native.special import BESSEL, POLYNOMIALS
from ember.testing._internal.opinfo import EDGE_DIFFERENCES, SampleInput, samples

REAL = (dtypes.float32, dtypes.float64)
WITH_INTS = (dtypes.float16, *REAL, dtypes.int64, dtypes.bool_)
TOL: dict[str, float] = {}  # the default tolerances of each dtype

EDGE_DIFFERENCES.update({
    name: (
        frozenset({"special", "zeros"}),
        "at -1, -2, ... and ±inf PyTorch's polygamma of order >= 1 is its Hurwitz zeta's "
        "overflow (6.6e32 for polygamma(1, -1), NaN for polygamma(2, inf)); ember gives "
        "SciPy's limits (inf, 0)",
    )
    for name in ("polygamma", "digamma", "special_polygamma", "special_digamma", "special_psi")
})  # fmt: skip


def _unary(make: Any, dtype: Any, low: float = -3, high: float = 3) -> Iterator[SampleInput]:
    yield SampleInput(make((3, 4), low=low, high=high))
    yield SampleInput(make((5,), noncontiguous=True, low=low, high=high))
    yield SampleInput(make(()))
    yield SampleInput(make((0, 2)))
    if dtype.category < dtypes.FLOATING:
        return
    yield SampleInput(make((3,), dtype=dtypes.complex64), name="complex")


@samples("erfc.default", "exp2.default", "sinc.default", "i0.default", "special_erfc.default",
         "special_exp2.default", "special_sinc.default", "special_i0.default",
         "special_entr.default", "special_log_ndtr.default", "special_erfcx.default",
         "special_i0e.default", "special_i1.default", "special_i1e.default",
         "special_ndtr.default", "special_expit.default", "special_expm1.default",
         "special_log1p.default", "special_erf.default", dtypes=WITH_INTS, **TOL)  # fmt: skip
def unary_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield from _unary(make, dtype)


def bessel_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    """Negative arguments too (NaN where the function is real only for x > 0: y, k)."""
    yield from _unary(make, dtype, low=-4, high=6)
    if dtype.category >= dtypes.FLOATING:
        yield SampleInput(make((4,), low=20, high=60), name="large")


# PyTorch 2.13's float64 Bessel and Airy functions are good to about 3e-7 and 2e-5 relative
# (ember's are SciPy's cephes kernels, good to float64's precision: docs/fidelity.md), so
# float64 compares at those tolerances
_F64_BESSEL = {"float64": 1e-6, "int64": 1e-6}
samples(
    *(f"special_{n}.default" for n in BESSEL if n != "airy_ai"),
    dtypes=(*REAL, dtypes.int64),
    atol=_F64_BESSEL,
    rtol=_F64_BESSEL,
)(bessel_samples)
samples("special_airy_ai.default", dtypes=(*REAL, dtypes.int64),
        atol={"float64": 1e-5, "int64": 1e-5}, rtol={"float64": 5e-5, "int64": 5e-5})(
    bessel_samples
)  # fmt: skip


@samples("lgamma.default", "digamma.default", "special_gammaln.default",
         "special_digamma.default", "special_psi.default", dtypes=WITH_INTS, **TOL)  # fmt: skip
def gamma_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield from _unary(make, dtype, low=-4.5, high=6)
    if dtype.category >= dtypes.FLOATING:
        yield SampleInput(ember.tensor([-2.5, -1.5, -0.5, 0.5, 1.0, 2.0], dtype=dtype))


@samples("erfinv.default", "special_erfinv.default", "special_ndtri.default",
         dtypes=WITH_INTS, **TOL)  # fmt: skip
def unit_interval_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    if dtype.category < dtypes.FLOATING:
        yield from _unary(make, dtype)
        return
    yield from _unary(make, dtype, low=-0.99, high=0.99)
    if dtype.category >= dtypes.FLOATING:
        yield SampleInput(ember.tensor([-1.0, 1.0, 0.0, 0.999, 1.5], dtype=dtype))


@samples("logit.default", "special_logit.default", dtypes=WITH_INTS, **TOL)
def logit_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    if dtype.category < dtypes.FLOATING:
        yield from _unary(make, dtype)
        return
    yield from _unary(make, dtype, low=0.01, high=0.99)
    if dtype.category >= dtypes.FLOATING:
        x = ember.tensor([-0.5, 0.0, 0.05, 0.5, 0.97, 1.0, 1.5], dtype=dtype)
        yield SampleInput(x, name="outside [0, 1]")
        yield SampleInput(x, 0.1, name="eps clamps")
        yield SampleInput(x, eps=0.25)


@samples("polygamma.default", "special_polygamma.default", dtypes=WITH_INTS, **TOL)
def polygamma_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    for n in (0, 1, 2, 3):
        yield SampleInput(n, make((3, 4), low=0.2, high=5))
    if dtype.category >= dtypes.FLOATING:  # (integers would land on the poles)
        x = make((5,), noncontiguous=True, low=-3.7, high=-0.3)
        yield SampleInput(1, x, name="negative x")
    yield SampleInput(2, make(()))
    yield SampleInput(-1, make((3,)), name="negative order raises")


@samples("mvlgamma.default", "special_multigammaln.default", dtypes=WITH_INTS, **TOL)
def mvlgamma_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((3, 4), low=1, high=6), 1)
    yield SampleInput(make((3, 4), low=2, high=6), 3)
    yield SampleInput(make((5,), noncontiguous=True, low=3, high=6), p=4)
    yield SampleInput(make((3,), low=-1, high=1), 2, name="below (p-1)/2")
    yield SampleInput(make((3,), low=2, high=6), 0, name="p=0 raises")


@samples("xlogy.Tensor", "special_xlogy.default", "special_xlog1py.default", dtypes=WITH_INTS,
         **TOL)  # fmt: skip
def xlogy_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((3, 4), low=-2, high=3), make((3, 4), low=0.1, high=4))
    yield SampleInput(make((3, 1)), make((4,)), name="broadcast")
    yield SampleInput(make((4,), noncontiguous=True), make((4,)))
    yield SampleInput(make((3,)), make((3,), dtype=dtypes.float64), name="promotes")
    if dtype.category >= dtypes.FLOATING:
        x = ember.tensor([0.0, 0.0, 0.0, 1.0, 2.0, 0.0], dtype=dtype)
        y = ember.tensor([0.0, -1.0, -2.0, -1.0, 0.0, float("nan")], dtype=dtype)
        yield SampleInput(x, y, name="x = 0 and y <= 0, or NaN")
        yield SampleInput(make((3,), dtype=dtypes.complex64), make((3,)), name="complex raises")


# the Hurwitz zeta function: x > 1 and q > 0 converge; x = 1 is inf, x < 1 NaN, and q <= 0
# gives PyTorch's (and SciPy's) values of the formal series
@samples("special_zeta.default", dtypes=(dtypes.float32, dtypes.float64, dtypes.int64), **TOL)
def zeta_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((3, 4), low=1.5, high=5), make((3, 4), low=0.5, high=3))
    yield SampleInput(make((3, 1), low=2, high=4), make((4,), low=1, high=2), name="broadcast")
    yield SampleInput(make((4,), low=2, high=3, noncontiguous=True), make((4,), low=1, high=2))
    if dtype.category >= dtypes.FLOATING:
        x = ember.tensor([1.0, 0.5, 2.0, 2.0, 2.0, 3.0], dtype=dtype)
        q = ember.tensor([1.0, 1.0, 0.0, -1.5, -2.0, 1e-30], dtype=dtype)
        yield SampleInput(x, q, name="poles and formal values")
    yield SampleInput(make((3,), dtype=dtypes.complex64), make((3,)), name="complex raises")
    yield SampleInput(make((3,), dtype=dtypes.float16), make((3,)), name="float16 raises")


@samples("special_zeta.self_scalar", dtypes=(dtypes.float32, dtypes.float64), **TOL)
def zeta_self_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(2.5, make((3, 4), low=0.5, high=3))
    yield SampleInput(3, make((4,), low=1, high=2), name="int x")


@samples("special_zeta.other_scalar", dtypes=(dtypes.float32, dtypes.float64), **TOL)
def zeta_other_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((3, 4), low=1.5, high=5), 1.5)
    yield SampleInput(make((4,), low=2, high=3), 1, name="int q")


@samples("xlogy.Scalar_Other", "special_xlogy.other_scalar", "special_xlog1py.other_scalar",
         dtypes=WITH_INTS, **TOL)  # fmt: skip
def xlogy_other_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((3, 4)), 2.5)
    yield SampleInput(make((3,)), -0.5)
    yield SampleInput(make((3,)), 3)
    if dtype.category >= dtypes.FLOATING:
        yield SampleInput(ember.tensor([0.0, 1.0], dtype=dtype), -1.0, name="x = 0, y <= -1")


@samples("xlogy.Scalar_Self", "special_xlogy.self_scalar", "special_xlog1py.self_scalar",
         dtypes=WITH_INTS, **TOL)  # fmt: skip
def xlogy_self_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(2.5, make((3, 4), low=0.1, high=4))
    yield SampleInput(0.0, make((3,), low=-2, high=2))
    yield SampleInput(-1, make((3,)))


@samples("special_round.default", dtypes=REAL)
def special_round_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((3, 4)))
    yield SampleInput(make((3, 4)), decimals=2)
    yield SampleInput(make((3,)), decimals=-1)


@samples("special_logsumexp.default", dtypes=REAL, **TOL)
def special_logsumexp_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((3, 4)), 1)
    yield SampleInput(make((3, 4)), [0, 1], True)
    yield SampleInput(make((2, 3, 4), noncontiguous=True), -1)


@samples("special_softmax.default", "special_log_softmax.default", dtypes=REAL, **TOL)
def special_softmax_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((3, 4)), 1)
    yield SampleInput(make((3, 4)), 0, dtype=dtypes.float64)
    yield SampleInput(make((2, 3, 4), noncontiguous=True), -1)


# --------------------------------------------------------------------------- polynomials
# PyTorch's kernels read an uninitialised variable for NaN x at degrees >= 2 (their
# recurrence loops never run), so its value there is whatever that variable held; ember gives
# NaN. The "special" edge would compare those: tests/test_special_polynomials.py compares the
# other edges (0, -0, ±inf, NaN n) instead. chebyshev_polynomial_t and the Hermite ones
# initialise it, and keep the edge.
_UNINITIALISED = [n for n in POLYNOMIALS if n not in (
    "chebyshev_polynomial_t", "hermite_polynomial_h", "hermite_polynomial_he")]  # fmt: skip
EDGE_DIFFERENCES.update({
    f"special_{name}": (
        frozenset({"special"}),
        "PyTorch's value at NaN x and n >= 2 is an uninitialised variable's; ember's is NaN",
    )
    for name in _UNINITIALISED
})  # fmt: skip
# float32: PyTorch's C library acos/cos and fused multiply-adds round differently from
# NumPy's, and the recurrence amplifies a last-place difference by about the degree
_POLY_TOL = {"float32": 1e-4, "int64": 1e-4, "bool": 1e-4}


def _degrees(dtype: Any, shape: tuple[int, ...], fractional: bool = True) -> Any:
    """Degrees -1 to 12 (and, in floating dtypes, fractional ones, which truncate)."""
    n = (ember.arange(math.prod(shape)) % 14 - 1).reshape(shape).to(dtype)
    if fractional and dtype.category >= dtypes.FLOATING:
        n = n + (ember.arange(math.prod(shape)) % 3 == 1).reshape(shape).to(dtype) * 0.5
    return n


@samples(*(f"special_{n}.default" for n in POLYNOMIALS), dtypes=(*REAL, dtypes.int64),
         atol=_POLY_TOL, rtol=_POLY_TOL)  # fmt: skip
def polynomial_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    """Inside [-1, 1] (the Chebyshev polynomials' trigonometric form past degree 6 or 8), at
    and past its ends, with degrees below 0, fractional and as integers beside floats."""
    yield SampleInput(make((3, 14), low=-1, high=1), _degrees(dtype, (3, 14)))
    yield SampleInput(make((2, 14), low=-2.5, high=2.5), _degrees(dtype, (2, 14)), name="|x|>1")
    yield SampleInput(make((3, 1), low=-1, high=1), _degrees(dtype, (14,)), name="broadcast")
    yield SampleInput(make((14,), noncontiguous=True), _degrees(dtype, (14,)))
    yield SampleInput(make(()), _degrees(dtype, ()), name="0-dim")
    yield SampleInput(make((0, 3)), _degrees(dtype, (3,)), name="empty")
    if dtype.category >= dtypes.FLOATING:
        x = ember.tensor([1.0, -1.0, 0.0, 0.5, 1.0, -1.0, 0.0, 0.5], dtype=dtype)
        yield SampleInput(x[:, None], _degrees(dtype, (14,)), name="ends of [-1, 1] and [0, 1]")
        yield SampleInput(make((14,)), _degrees(dtypes.int64, (14,)), name="int64 n")
        yield SampleInput(make((3,), dtype=dtypes.complex64), make((3,)), name="complex raises")
        yield SampleInput(make((3,), dtype=dtypes.float16), make((3,)), name="float16 raises")
    else:
        yield SampleInput(make((4,), dtype=dtypes.bool_), _degrees(dtype, (4,)), name="bool x")


@samples(*(f"special_{n}.x_scalar" for n in POLYNOMIALS), dtypes=(*REAL, dtypes.int64),
         atol=_POLY_TOL, rtol=_POLY_TOL)  # fmt: skip
def polynomial_x_scalar_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(0.25, _degrees(dtype, (14,)))
    yield SampleInput(-1.5, _degrees(dtype, (2, 7)))
    yield SampleInput(2, _degrees(dtype, (14,), fractional=False), name="int x")
    yield SampleInput(1.0, _degrees(dtype, (14,)), name="x = 1")


@samples(*(f"special_{n}.n_scalar" for n in POLYNOMIALS), dtypes=(*REAL, dtypes.int64),
         atol=_POLY_TOL, rtol=_POLY_TOL)  # fmt: skip
def polynomial_n_scalar_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((3, 4), low=-1, high=1), 3)
    yield SampleInput(make((5,), low=-1, high=1), 10, name="trigonometric form")
    yield SampleInput(make((5,), low=-2, high=2), 4.7, name="fractional n")
    yield SampleInput(make((5,)), -2, name="negative n")
    yield SampleInput(make((5,), noncontiguous=True), 0)
