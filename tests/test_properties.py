"""Hypothesis properties against PyTorch: broadcasting shapes (results and errors) and
``ember.add`` on generated broadcastable shapes, dtypes and layouts.

Sizes are non-negative: ember's ``broadcast_shapes`` serves tensor shapes, which never hold
negative sizes (``torch.broadcast_shapes`` raises for them; ember does not check).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import ember
from ember import dtypes
from ember.ops.shapes import broadcast_shapes

from .conftest import requires_torch, torch

pytestmark = requires_torch

shape = st.lists(st.integers(0, 4), max_size=4).map(tuple)
any_shapes = st.lists(shape, min_size=0, max_size=4)
broadcastable = st.integers(1, 4).flatmap(
    lambda n: hnp.mutually_broadcastable_shapes(num_shapes=n, min_dims=0, max_dims=4, max_side=4)
)


def torch_broadcast(shapes: list[tuple[int, ...]]) -> tuple[int, ...] | type[BaseException]:
    try:
        return tuple(torch.broadcast_shapes(*shapes))
    except Exception as exc:  # noqa: BLE001 - the exception type is what we compare
        return type(exc)


def ember_broadcast(shapes: list[tuple[int, ...]]) -> tuple[int, ...] | type[BaseException]:
    try:
        return broadcast_shapes(*shapes)
    except Exception as exc:  # noqa: BLE001
        return type(exc)


@settings(max_examples=400, deadline=None)
@given(broadcastable)
def test_broadcast_shapes_of_broadcastable_shapes(bs: Any) -> None:
    shapes = list(bs.input_shapes)
    assert broadcast_shapes(*shapes) == tuple(torch.broadcast_shapes(*shapes)) == bs.result_shape


@settings(max_examples=400, deadline=None)
@given(any_shapes)
def test_broadcast_shapes_results_and_errors_match_torch(shapes: list[tuple[int, ...]]) -> None:
    assert ember_broadcast(shapes) == torch_broadcast(shapes)


def test_broadcast_error_names_the_op_and_sizes() -> None:
    try:
        broadcast_shapes((3, 4), (5,), op="add")
    except RuntimeError as exc:
        msg = str(exc)
    else:
        raise AssertionError("expected RuntimeError")
    assert "add" in msg and "(4)" in msg and "(5)" in msg


# --------------------------------------------------------------------------- ember.add

DTYPES = dtypes.ALL_DTYPES


def values(d: dtypes.dtype, shape: tuple[int, ...], noncontiguous: bool) -> st.SearchStrategy[Any]:
    """Small exact integers in dtype ``d`` (so every dtype adds them exactly), optionally laid
    out with a stride of 2 in the last dimension."""
    lo = 0 if d in (dtypes.bool_, dtypes.uint8) else -20
    hi = 1 if d is dtypes.bool_ else 20
    full = (*shape[:-1], shape[-1] * 2) if noncontiguous and shape else shape
    arrays = hnp.arrays(np.int64, full, elements=st.integers(lo, hi)).map(lambda a: a.astype(d.np))
    return arrays.map(lambda a: a[..., ::2]) if noncontiguous and shape else arrays


@st.composite
def operand(draw: st.DrawFn, shape: tuple[int, ...]) -> tuple[Any, Any]:
    """(ember operand, torch operand): a tensor of ``shape``, or for ``()`` maybe a scalar."""
    if shape == () and draw(st.booleans()):
        s = draw(st.sampled_from([True, 3, -2, 1000, -300, 1.5, 2 - 1j]))
        return s, s
    d = draw(st.sampled_from(DTYPES))
    arr = draw(values(d, shape, draw(st.booleans())))
    return ember.from_numpy(arr), torch.from_numpy(arr.copy())


@st.composite
def add_args(draw: st.DrawFn) -> tuple[Any, Any, Any, Any]:
    bs = draw(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=3))
    (ea, ta), (eb, tb) = (draw(operand(s)) for s in bs.input_shapes)
    assume(isinstance(ea, ember.Tensor) or isinstance(eb, ember.Tensor))
    return ea, eb, ta, tb


@settings(max_examples=300, deadline=None)
@given(add_args())
def test_add_matches_torch(args: tuple[Any, Any, Any, Any]) -> None:
    ea, eb, ta, tb = args
    assume(torch.result_type(ta, tb) != torch.complex32)  # NOTE [no complex32], test_dtypes.py
    want = torch.add(ta, tb)
    got = ember.add(ea, eb)
    assert str(got.dtype).replace("ember", "torch") == str(want.dtype)
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_array_equal(got.numpy(), want.numpy())


@settings(max_examples=150, deadline=None)
@given(add_args())
def test_add_operator_equals_add_function(args: tuple[Any, Any, Any, Any]) -> None:
    ea, eb, _, _ = args
    want = ember.add(ea, eb)
    got = ea + eb
    assert got.dtype is want.dtype
    np.testing.assert_array_equal(got.numpy(), want.numpy())
