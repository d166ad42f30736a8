"""Sample inputs for the random fills and draws (see ember/testing/_internal/opinfo.py).

``compare_torch=False``: ember draws from its own generators, so values are not PyTorch's
(``ember/random.py``). The Meta rules (and FakeTensorMode) are still checked against these
samples, errors included; distributions, dtypes, reproducibility and in-place semantics are
checked against PyTorch in ``tests/test_tensor_api.py``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ember import dtypes
from ember.testing._internal.opinfo import ALL_DTYPES, FLOATS, SampleInput, samples

S = SampleInput


def _fills(make: Any) -> Iterator[Any]:
    yield make((3, 4))
    yield make(())
    yield make((0, 3))
    yield make((3, 4), noncontiguous=True)


@samples("uniform.default", "uniform_.default", dtypes=ALL_DTYPES, compare_torch=False)
def uniform_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    for x in _fills(make):
        yield S(x)
    yield S(make((3,)), -2.0, 5.0, name="range")
    yield S(make((3,)), 2.0, 1.0, name="from > to raises")


@samples("normal_.default", dtypes=ALL_DTYPES, compare_torch=False)
def normal_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    for x in _fills(make):
        yield S(x)
    yield S(make((3,)), 2.0, 0.5, name="mean, std")
    yield S(make((3,)), 0.0, -1.0, name="negative std raises")


@samples("normal.Tensor_float", dtypes=ALL_DTYPES, compare_torch=False)
def normal_tensor_float_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield S(make((3, 4)))
    yield S(make((3,), noncontiguous=True), 2.0)
    yield S(make(()), 0.5)
    yield S(make((3,)), -1.0, name="negative std raises")


@samples("normal.float_Tensor", dtypes=ALL_DTYPES, compare_torch=False, meta_errors=False)
def normal_float_tensor_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield S(1.0, make((3, 4), low=0, high=2))
    yield S(-1.0, make((3,), low=0, high=2, noncontiguous=True))
    if dtype.category == dtypes.FLOATING:
        yield S(0.0, make((3,), low=-2, high=-1), name="negative std raises")


@samples("normal.Tensor_Tensor", dtypes=ALL_DTYPES, compare_torch=False, meta_errors=False)
def normal_tensor_tensor_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield S(make((3, 4)), make((3, 4), low=0, high=2))
    yield S(make((3, 1)), make((4,), low=0, high=2), name="broadcast")
    yield S(make((3,)), make((3,), dtypes.float64, low=0, high=1), name="mean's dtype")
    yield S(make((2,)), make((3,), low=0, high=1), name="shapes that don't broadcast raise")


@samples("bernoulli.default", dtypes=ALL_DTYPES, compare_torch=False, meta_errors=False)
def bernoulli_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield S(make((3, 4), low=0, high=1))
    yield S(make(()), name="0-dim")
    yield S(make((3,), low=0, high=1, noncontiguous=True), name="nc")
    yield S(make((0,)), name="empty")
    if dtype.category == dtypes.FLOATING:
        yield S(make((3,), low=1.5, high=2), name="probability > 1 raises")


@samples("bernoulli.p", dtypes=ALL_DTYPES, compare_torch=False)
def bernoulli_p_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    for x in _fills(make):
        yield S(x, 0.3)
    yield S(make((3,)), 1.5, name="p > 1 raises")


@samples("bernoulli.Tensor", "bernoulli_.Tensor", dtypes=ALL_DTYPES, compare_torch=False,
         meta_errors=False)  # fmt: skip
def bernoulli_tensor_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield S(make((3, 4)), make((3, 4), dtypes.float32, low=0, high=1))
    yield S(make((3, 4)), make((4,), dtypes.float64, low=0, high=1), name="broadcast p")
    yield S(make(()), make((), dtypes.float32, low=0, high=1), name="0-dim")
    yield S(make((3,)), make((3,), dtypes.int64, low=0, high=1), name="integer p raises")
    yield S(make((3,)), make((3,), dtypes.float32, low=2, high=3), name="p > 1 raises")


@samples("bernoulli_.float", dtypes=ALL_DTYPES, compare_torch=False)
def bernoulli_float_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    for x in _fills(make):
        yield S(x)
    yield S(make((3,)), 0.9)
    yield S(make((3,)), -0.5, name="p < 0 raises")


@samples("random.default", "random_.default", dtypes=ALL_DTYPES, compare_torch=False)
def random_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    for x in _fills(make):
        yield S(x)


@samples("random.to", "random_.to", dtypes=ALL_DTYPES, compare_torch=False)
def random_to_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield S(make((3, 4)), 2)
    yield S(make(()), 1)
    yield S(make((3,)), 0, name="to = 0 raises")
    if dtype is dtypes.uint8:
        yield S(make((3,)), 300, name="to past the dtype raises")


@samples("random.from", "random_.from", dtypes=ALL_DTYPES, compare_torch=False)
def random_from_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield S(make((3, 4)), 0, 2)
    yield S(make((3,)), 1, None, name="to None: the dtype's max")
    yield S(make((3,)), 3, 3, name="from = to raises")
    if dtype.is_signed or dtype.category == dtypes.FLOATING:
        yield S(make((3, 4)), -3, 2, name="negative from")
    else:
        yield S(make((3,)), -1, 2, name="from below the dtype raises")


@samples("exponential.default", "exponential_.default", dtypes=ALL_DTYPES, compare_torch=False)
def exponential_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    for x in _fills(make):
        yield S(x)
    yield S(make((3,)), 2.5)
    yield S(make((3,)), 0.0, name="lambda = 0 raises")


@samples("geometric.default", "geometric_.default", dtypes=ALL_DTYPES, compare_torch=False)
def geometric_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    for x in _fills(make):
        yield S(x, 0.4)
    yield S(make((3,)), 1.0, name="p = 1 raises")


@samples("log_normal.default", "log_normal_.default", dtypes=ALL_DTYPES, compare_torch=False)
def log_normal_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    for x in _fills(make):
        yield S(x)
    yield S(make((3,)), 0.0, 0.5)
    yield S(make((3,)), 1.0, 0.0, name="std = 0 raises")


@samples("cauchy.default", "cauchy_.default", dtypes=ALL_DTYPES, compare_torch=False)
def cauchy_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    for x in _fills(make):
        yield S(x)
    yield S(make((3,)), 1.0, 0.5)
    yield S(make((3,)), 0.0, 0.0, name="sigma = 0 raises")


@samples("multinomial.default", dtypes=FLOATS, compare_torch=False, meta_errors=False)
def multinomial_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield S(make((5,), low=0, high=1), 3)
    yield S(make((5,), low=0, high=1), 8, True, name="with replacement")
    yield S(make((2, 4), low=0, high=1, noncontiguous=True), 2, replacement=False)
    yield S(make((0, 3), low=0, high=1), 2, name="no rows")
    yield S(make((4,), low=0, high=1), 0, name="no samples raise")
    yield S(make((4,), low=0, high=1), 5, name="more than the categories raise")
    yield S(make((2, 2, 2), low=0, high=1), 1, name="3-D raises")
    yield S(make((3,), low=-2, high=-1), 1, name="negative weights raise")


@samples("poisson.default", dtypes=FLOATS, compare_torch=False, meta_errors=False)
def poisson_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield S(make((3, 4), low=0, high=30))
    yield S(make(()))
    yield S(make((0, 3)))
    yield S(make((3, 4), low=0, high=5, noncontiguous=True))
    yield S(make((3,), low=-2, high=-1), name="negative rates raise")
    yield S(make((3,), dtypes.int64), name="integer rates raise")
