"""Sample inputs for the special functions (see ember/testing/_internal/opinfo.py): values on
each side of the functions' poles and branch points, integers (cast to float), float16,
broadcasting, non-contiguous inputs, and the dtypes PyTorch refuses."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import ember
from ember import dtypes
from ember.ops.native.special import BESSEL
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
