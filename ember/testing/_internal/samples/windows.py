"""Sample inputs for the window functions (see opinfo.py): lengths 0, 1 and more, periodic
and symmetric, every overload's parameters, and the errors."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ember import dtypes
from ember.testing._internal.opinfo import FLOATS, SampleInput, samples

S = SampleInput
NAMES = ("hann", "hamming", "blackman", "bartlett", "kaiser")


@samples(*(f"{n}_window.default" for n in NAMES), dtypes=FLOATS, atol=1e-3, rtol=1e-3)
def window_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    for n in (5, 8, 1, 0):
        yield S(n, dtype=dtype, name=f"length {n}")
    if dtype is dtypes.float32:
        yield S(4, name="default dtype")
        yield S(4, dtype=dtypes.int64, name="integer dtype raises")
        yield S(-1, name="negative length raises")


@samples(*(f"{n}_window.periodic" for n in NAMES), dtypes=FLOATS, atol=1e-3, rtol=1e-3)
def window_periodic_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    for n in (5, 8, 2, 1):
        for periodic in (True, False):
            yield S(n, periodic, dtype=dtype, name=f"length {n} periodic={periodic}")


@samples("hamming_window.periodic_alpha", dtypes=FLOATS, atol=1e-3, rtol=1e-3)
def hamming_alpha_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield S(6, True, 0.5, dtype=dtype)
    yield S(6, False, 0.6, dtype=dtype)


@samples("hamming_window.periodic_alpha_beta", dtypes=FLOATS, atol=1e-3, rtol=1e-3)
def hamming_alpha_beta_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield S(6, True, 0.5, 0.5, dtype=dtype)
    yield S(5, False, 0.54, 0.3, dtype=dtype)


@samples("kaiser_window.beta", dtypes=FLOATS, atol=1e-3, rtol=1e-3)
def kaiser_beta_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield S(6, True, 3.0, dtype=dtype)
    yield S(5, False, 8.0, dtype=dtype)
