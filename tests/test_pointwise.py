"""Pointwise semantics the op harness can't express: wrapped numbers through the public API and
operators, silent inf/nan, integer division by zero, and the in-place fast paths."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import ember

from .conftest import requires_torch, torch


def _same(e: ember.Tensor, t: object) -> None:
    assert e.dtype.name == str(t.dtype).removeprefix("torch."), (e.dtype, t.dtype)
    np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-6, equal_nan=True)


@requires_torch
@pytest.mark.parametrize(
    "expr",
    [
        "x + 2", "x * 2", "x - 2.5", "2 - x", "x / 2", "2 / x", "x // 3", "x % 3", "x ** 2",
        "2 ** x", "x == 1000", "x < 1000", "x + 1000", "x * 300", "x & 3", "x | 1", "x ^ 1",
        "x << 1", "x >> 1", "-x", "abs(x)", "~x", "x != 2",
    ],
)  # fmt: skip
@pytest.mark.parametrize("dt", ["int8", "uint8", "int64"])
def test_operators_with_numbers_match_torch(expr: str, dt: str) -> None:
    values = [1, 3, 100] if dt == "uint8" else [1, -3, 100]
    x = ember.tensor(values, dtype=getattr(ember, dt))
    tx = torch.tensor(values, dtype=getattr(torch, dt))
    if "**" in expr and expr.startswith("2"):
        x, tx = x.abs(), tx.abs()
    _same(eval(expr, {"x": x}), eval(expr, {"x": tx}))


@requires_torch
@pytest.mark.parametrize("expr", ["x + 2.5", "x * True", "x / x", "x ** 0.5", "x > 1"])
def test_float_operators_match_torch(expr: str) -> None:
    x = ember.tensor([1.0, -2.0, 0.0])
    tx = torch.tensor([1.0, -2.0, 0.0])
    _same(eval(expr, {"x": x}), eval(expr, {"x": tx}))


@requires_torch
@pytest.mark.parametrize(
    "fn", ["exp", "log", "sqrt", "rsqrt", "reciprocal", "log1p", "sigmoid", "erf", "tan"]
)
def test_special_values_silently(fn: str) -> None:
    vals = [0.0, -0.0, -1.0, math.inf, -math.inf, math.nan, 1e30, -1e-30, 88.0, 100.0]
    x = ember.tensor(vals)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = getattr(ember, fn)(x)
        big = ember.tensor([3e38]) * 10 + ember.tensor([3e38])
    _same(got, getattr(torch, fn)(torch.tensor(vals)))
    assert math.isinf(big.item())


@requires_torch
def test_erf_accuracy_float64() -> None:
    x = np.linspace(-7, 7, 1001)
    got = ember.erf(ember.tensor(x)).numpy()
    np.testing.assert_allclose(got, torch.erf(torch.tensor(x)).numpy(), rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize("op", ["floor_divide", "remainder", "fmod"])
def test_integer_division_by_zero_raises(op: str) -> None:
    a, b = ember.tensor([4, 5]), ember.tensor([1, 0])
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        getattr(ember, op)(a, b)


def test_inplace_fast_path_writes_and_bumps_version() -> None:
    x = ember.tensor([1.0, 2.0, 3.0])
    view = x[1:]
    data_before = x.data_ptr()
    x += 1
    x.mul_(2)
    x.sub_(ember.tensor([1.0]), alpha=2)
    x /= 2
    assert x.data_ptr() == data_before
    assert x.tolist() == [1.0, 2.0, 3.0]
    assert x._version == 4 and view._version == 4
    with pytest.raises(RuntimeError, match="can't be cast"):
        ember.tensor([1, 2]).add_(0.5)
    with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
        ember.ones(3).add_(ember.ones(2, 3))


def test_meta_raises_what_cpu_raises() -> None:
    m = ember.empty(3, dtype=ember.bool, device="meta")
    with pytest.raises(RuntimeError, match="Negation"):
        _ = -m
    with pytest.raises(NotImplementedError):
        ember.empty(2, device="meta").bitwise_and(ember.empty(2, device="meta"))
    assert (ember.empty(2, 1, dtype=ember.int32, device="meta") / 2).shape == (2, 1)


def test_integer_division_of_an_empty_tensor_by_zero_is_empty() -> None:
    """Nothing is divided, so nothing is divided by zero (was a ZeroDivisionError; found by
    the random programs); a real zero divisor still raises."""
    empty, zero = ember.tensor([], dtype=ember.int64), ember.tensor([0])
    assert ember.floor_divide(empty, zero).tolist() == []
    assert ember.remainder(empty, zero).tolist() == []
    assert ember.div(empty, zero, rounding_mode="floor").tolist() == []
    with pytest.raises(RuntimeError, match="division by zero"):
        ember.floor_divide(ember.tensor([1]), zero)
