"""Type promotion against PyTorch: ``promote_types``, ``can_cast`` and ``result_type`` for
every dtype pair, and hypothesis-generated mixes of tensors with dims, 0-dim tensors and
Python bool/int/float/complex scalars (NOTE [type promotion] in ``ember/dtypes.py``).

# NOTE [no complex32]
PyTorch promotes float16 with a complex operand to complex32 (``torch.chalf``). NumPy has no
complex32, so ember has none either and gives complex64, the next dtype up. That is the one
place ember's promotion deliberately differs; ``expected`` below maps it.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ember
from ember import dtypes

from .conftest import requires_torch, torch

pytestmark = requires_torch

DTYPES = dtypes.ALL_DTYPES
PAIRS = list(itertools.product(DTYPES, repeat=2))
SCALARS: tuple[Any, ...] = (True, False, 0, 3, -7, 2.5, -0.0, 1 + 2j)


def to_torch(d: dtypes.dtype) -> Any:
    return getattr(torch, d.name)


def expected(torch_dtype: Any) -> Any:
    """PyTorch's answer, with complex32 read as complex64 (NOTE [no complex32])."""
    return torch.complex64 if torch_dtype == torch.complex32 else torch_dtype


@pytest.fixture(params=["float32", "float64"])
def default_dtype(request: pytest.FixtureRequest) -> Iterator[str]:
    """Run under both default float dtypes, in ember and PyTorch alike, then restore."""
    old_e, old_t = ember.get_default_dtype(), torch.get_default_dtype()
    ember.set_default_dtype(getattr(ember, request.param))
    torch.set_default_dtype(getattr(torch, request.param))
    try:
        yield request.param
    finally:
        ember.set_default_dtype(old_e)
        torch.set_default_dtype(old_t)


@pytest.mark.parametrize(("a", "b"), PAIRS, ids=lambda d: d.name)
def test_promote_types_matches_torch(a: dtypes.dtype, b: dtypes.dtype) -> None:
    got = ember.promote_types(a, b)
    assert to_torch(got) == torch.promote_types(to_torch(a), to_torch(b))
    assert got is ember.promote_types(b, a)


@pytest.mark.parametrize(("a", "b"), PAIRS, ids=lambda d: d.name)
def test_can_cast_matches_torch(a: dtypes.dtype, b: dtypes.dtype) -> None:
    assert ember.can_cast(a, b) == torch.can_cast(to_torch(a), to_torch(b))


# --------------------------------------------------------------------------- result_type

#: an operand: ("tensor", dtype, ndim) or ("scalar", value)
Operand = tuple[Any, ...]

tensors = st.tuples(st.just("tensor"), st.sampled_from(DTYPES), st.integers(0, 2))
scalars = st.tuples(st.just("scalar"), st.sampled_from(SCALARS))
operands = st.one_of(tensors, scalars)


def build(op: Operand, lib: str) -> Any:
    """The operand as an ember or torch value (tensors: zeros of shape (2,) * ndim)."""
    if op[0] == "scalar":
        return op[1]
    _, d, ndim = op
    arr = np.zeros((2,) * ndim, dtype=d.np)
    if lib == "torch":
        return torch.from_numpy(arr)
    return ember.from_numpy(arr) if ndim % 2 else ember.tensor(arr, dtype=d)


def torch_result(ops: list[Operand]) -> Any:
    """PyTorch's result dtype: ``torch.result_type`` for pairs, TensorIterator's rule (as
    ``torch._prims_common`` states it) for longer mixes."""
    args = [build(o, "torch") for o in ops]
    if len(args) == 2:
        return torch.result_type(*args)
    from torch._prims_common import ELEMENTWISE_TYPE_PROMOTION_KIND, elementwise_dtypes

    return elementwise_dtypes(*args, type_promotion_kind=ELEMENTWISE_TYPE_PROMOTION_KIND.DEFAULT)[1]


@pytest.mark.parametrize(("a", "b"), PAIRS, ids=lambda d: d.name)
def test_result_type_all_pairs_and_ranks(
    a: dtypes.dtype, b: dtypes.dtype, default_dtype: str
) -> None:
    for na, nb in itertools.product((0, 1, 2), repeat=2):
        x, y = ("tensor", a, na), ("tensor", b, nb)
        got = ember.result_type(build(x, "ember"), build(y, "ember"))
        assert to_torch(got) == expected(torch_result([x, y])), (a, na, b, nb)


@pytest.mark.parametrize("d", DTYPES, ids=lambda d: d.name)
@pytest.mark.parametrize("s", SCALARS, ids=repr)
def test_result_type_tensor_and_scalar(d: dtypes.dtype, s: Any, default_dtype: str) -> None:
    for ndim in (0, 1):
        t = ("tensor", d, ndim)
        for ops in ([t, ("scalar", s)], [("scalar", s), t]):
            got = ember.result_type(*(build(o, "ember") for o in ops))
            assert to_torch(got) == expected(torch_result(ops)), ops


@pytest.mark.parametrize(("s1", "s2"), list(itertools.product(SCALARS, repeat=2)), ids=repr)
def test_result_type_two_scalars(s1: Any, s2: Any, default_dtype: str) -> None:
    assert to_torch(ember.result_type(s1, s2)) == torch.result_type(s1, s2)


@settings(max_examples=300, deadline=None)
@given(st.lists(operands, min_size=1, max_size=5))
def test_result_type_of_any_mix(ops: list[Operand]) -> None:
    if len(ops) == 1:
        ops = [ops[0], ops[0]]
    got = dtypes.result_type_of([build(o, "ember") for o in ops])
    assert to_torch(got) == expected(torch_result(ops))


@settings(max_examples=200, deadline=None)
@given(operands, operands)
def test_result_type_is_symmetric(x: Operand, y: Operand) -> None:
    a, b = build(x, "ember"), build(y, "ember")
    assert ember.result_type(a, b) is ember.result_type(b, a)


def test_complex32_is_the_one_documented_difference() -> None:
    half = ember.tensor([1.0], dtype=ember.float16)
    assert ember.result_type(half, 1j) is ember.complex64
    assert torch.result_type(torch.ones(1, dtype=torch.half), 1j) == torch.complex32
