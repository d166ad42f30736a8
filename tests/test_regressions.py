"""Regression tests for issue 13's wrong answers and their classes, against PyTorch.

- NumPy scalars as tensor data (NOTE [kernel results are arrays] in ``ember/_tensor.py``);
- derivatives that divide by an input or output, at zeros (NOTE [derivatives at zeros] in
  ``ember/autograd/derivatives.py``);
- undefined gradients of unused outputs (NOTE [undefined output gradients] in
  ``ember/autograd/engine.py``);
- type promotion in multi-operand ops (einsum and friends).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import ember
from ember._tensor import wrap, wrap_view

from .conftest import requires_torch, torch

# --------------------------------------------------------------------------- NumPy scalars


@pytest.mark.parametrize(
    "call",
    [
        lambda t: t.argmax(0),
        lambda t: t.argmin(0),
        lambda t: t.argmax(-1, keepdim=False),
        lambda t: t.max(0).values,
        lambda t: t.max(0).indices,
        lambda t: t.min(0).values,
        lambda t: t.min(0).indices,
        lambda t: t.argmax(),
        lambda t: t.sum(0),
        lambda t: t.prod(0),
        lambda t: t.amax(0),
        lambda t: t.logsumexp(0),
        lambda t: t.std(0),
        lambda t: ember.var_mean(t, 0)[1],
        lambda t: t.all(0),
        lambda t: t[1],
    ],
)
def test_reductions_of_1d_give_0d_tensors_with_data(call: Callable[[Any], Any]) -> None:
    r = call(ember.tensor([0.5, 2.0]))
    assert type(r._data) is np.ndarray and r._data.ndim == 0
    assert r.shape == ()
    float(r.item())  # item, numpy and repr work
    assert r.numpy().shape == ()
    assert repr(r).startswith("tensor(")


@requires_torch
def test_argmax_of_1d_matches_torch() -> None:
    e, t = ember.tensor([0.5, 2.0, -1.0]), torch.tensor([0.5, 2.0, -1.0])
    assert e.argmax(0).item() == t.argmax(0).item() == 1
    assert e.argmin(0).item() == t.argmin(0).item() == 2
    values, indices = e.max(0)
    assert (values.item(), indices.item()) == (2.0, 1)
    assert indices.dtype is ember.int64


def test_wrap_makes_numpy_scalars_0d_arrays() -> None:
    t = wrap(np.float32(2.5))  # type: ignore[arg-type]
    assert type(t._data) is np.ndarray and t.dtype is ember.float32 and t.item() == 2.5
    assert wrap(np.int64(3)).dtype is ember.int64


def test_wrap_refuses_what_is_not_an_array() -> None:
    with pytest.raises(TypeError, match="internal error: a kernel returned list"):
        wrap([1.0, 2.0])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="internal error: a kernel returned float"):
        wrap(1.0)  # type: ignore[arg-type]


def test_wrap_view_refuses_a_numpy_scalar() -> None:
    base = ember.tensor([1.0, 2.0])
    with pytest.raises(TypeError, match="view of a NumPy scalar"):
        wrap_view(base, base._data[0])
    v = wrap_view(base, base._data[0, ...])  # a 0-d view: writes reach the base
    v._data[...] = 5.0
    assert base.tolist() == [5.0, 2.0]


def test_wrap_takes_an_ndarray_subclass_as_a_plain_array_over_the_same_memory() -> None:
    class Sub(np.ndarray):
        pass

    arr = np.zeros(3, np.float32).view(Sub)
    t = wrap(arr)
    assert type(t._data) is np.ndarray
    arr[0] = 1.0
    assert t.tolist() == [1.0, 0.0, 0.0]
