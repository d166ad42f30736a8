"""Sample inputs for the foreach ops (NOTE [foreach ops] in ``ember/ops/native/foreach.py``):
lists of tensors of different shapes (0-dim, empty, non-contiguous among them), and the
errors PyTorch raises for lists that don't line up."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import ember
from ember.testing._internal.opinfo import (
    FLOATS,
    NUMERIC,
    ErrorInput,
    SampleInput,
    errors,
    samples,
)

#: the shapes of one list: every position a different case
SHAPES: tuple[tuple[int, ...], ...] = ((3, 4), (), (0, 2), (2, 3))


def _list(make: Any, **kw: Any) -> list[ember.Tensor]:
    """One tensor per shape of ``SHAPES``, the last one non-contiguous."""
    return [make(s, noncontiguous=i == len(SHAPES) - 1, **kw) for i, s in enumerate(SHAPES)]


def _scalars(dtype: Any) -> list[Any]:
    return [2, -1, 3, 0.5] if dtype.is_floating_point else [2, -1, 3, 1]


@samples("_foreach_add.Scalar", "_foreach_sub.Scalar", "_foreach_mul.Scalar",
         "_foreach_div.Scalar", dtypes=NUMERIC)  # fmt: skip
def scalar_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(_list(make), 2)
    yield SampleInput(_list(make), 0.5, name="a float scalar")  # int lists promote to float
    yield SampleInput([make((2,))], -3, name="one tensor")


@samples("_foreach_add.ScalarList", "_foreach_sub.ScalarList", "_foreach_mul.ScalarList",
         "_foreach_div.ScalarList", dtypes=NUMERIC)  # fmt: skip
def scalar_list_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(_list(make), _scalars(dtype))


@samples("_foreach_add.List", "_foreach_sub.List", dtypes=NUMERIC)
def list_alpha_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(_list(make), _list(make))
    yield SampleInput(_list(make), _list(make), alpha=2, name="alpha")
    yield SampleInput([make((3, 4))], [make((4,))], name="broadcast")


@samples("_foreach_mul.List", "_foreach_div.List", "_foreach_maximum.List",
         "_foreach_minimum.List", dtypes=NUMERIC)  # fmt: skip
def list_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(_list(make, low=1, high=5), _list(make, low=1, high=5))
    yield SampleInput([make((3, 4))], [make((4,), low=1, high=5)], name="broadcast")


@samples("_foreach_neg.default", "_foreach_abs.default", dtypes=NUMERIC)
def signed_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(_list(make))


@samples("_foreach_sqrt.default", "_foreach_exp.default", dtypes=FLOATS)
def unary_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(_list(make, low=0.5, high=4))


@samples("_foreach_zero.default", dtypes=NUMERIC)
def zero_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(_list(make))


@samples("_foreach_lerp.Scalar", dtypes=FLOATS)
def lerp_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(_list(make), _list(make), 0.25)
    yield SampleInput([make((3, 4))], [make((4,))], 0.75, name="broadcast")


@samples("_foreach_addcmul.Scalar", "_foreach_addcdiv.Scalar", dtypes=FLOATS)
def addc_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(_list(make), _list(make), _list(make, low=1, high=5))
    yield SampleInput(_list(make), _list(make), _list(make, low=1, high=5), -0.5, name="value")


@samples("_foreach_addcmul.ScalarList", "_foreach_addcdiv.ScalarList", dtypes=FLOATS)
def addc_list_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(_list(make), _list(make), _list(make, low=1, high=5), _scalars(dtype))


def _two() -> list[ember.Tensor]:
    return [ember.ones(2), ember.ones(3)]


@errors("_foreach_add.List", "_foreach_mul.List", "_foreach_add_.List")
def list_length_errors() -> Iterator[ErrorInput]:
    yield ErrorInput(SampleInput(_two(), [ember.ones(2)]), RuntimeError, "same number of tensors")
    yield ErrorInput(SampleInput([], []), RuntimeError, "at least one tensor")
    yield ErrorInput(SampleInput(_two(), [ember.ones(3), ember.ones(3)]), RuntimeError, "size")


@errors("_foreach_add.ScalarList", "_foreach_mul_.ScalarList")
def scalar_list_errors() -> Iterator[ErrorInput]:
    yield ErrorInput(SampleInput(_two(), [1.0, 2.0, 3.0]), RuntimeError, "scalar list")


@errors("_foreach_addcmul_.Scalar")
def addcmul_errors() -> Iterator[ErrorInput]:
    yield ErrorInput(SampleInput(_two(), _two(), [ember.ones(2)]), RuntimeError, "same number")


@errors("_foreach_lerp_.Scalar")
def lerp_errors() -> Iterator[ErrorInput]:
    yield ErrorInput(SampleInput(_two(), [ember.ones(2)], 0.5), RuntimeError, "same number")


@errors("_foreach_add_.Scalar")
def inplace_cast_errors() -> Iterator[ErrorInput]:
    ints = [ember.ones(2, dtype=ember.int64)]
    yield ErrorInput(SampleInput(ints, 1.5), RuntimeError, "can't be cast")
