"""Sample inputs for the pointwise ops (see ember/testing/_internal/opinfo.py)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ember.testing._internal.opinfo import ALL_DTYPES, SampleInput, samples


def binary_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((3, 4)), make((3, 4)))
    yield SampleInput(make((3, 4)), make((4,)), name="broadcast")
    yield SampleInput(make((2, 1, 3)), make((4, 1)), name="broadcast both")
    yield SampleInput(make(()), make((2, 3)), name="0-dim")
    yield SampleInput(make((0, 3)), make((3,)), name="empty")
    yield SampleInput(make((3, 4), noncontiguous=True), make((3, 4)), name="noncontiguous")
    yield SampleInput(make((3,)), 2, name="int scalar")
    yield SampleInput(make((3,)), 2.5, name="float scalar")


samples("add.Tensor", "sub.Tensor", "mul.Tensor", "div.Tensor", "eq.Tensor", "lt.Tensor",
        dtypes=ALL_DTYPES)(binary_samples)  # fmt: skip


@samples("neg.default", "exp.default", "abs.default", dtypes=ALL_DTYPES)
def unary_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((3, 4)))
    yield SampleInput(make(()))
    yield SampleInput(make((0,)))
    yield SampleInput(make((3, 4), noncontiguous=True))
