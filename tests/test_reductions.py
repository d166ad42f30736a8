"""Reduction behaviour the op harness can't express: named-tuple results, overload resolution
of the public methods, decompositions, sort stability and topk without sorting."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import ember
from ember import return_types
from ember.ops.binding import resolve
from ember.ops.registry import ops

from .conftest import requires_torch, torch

aten = ops.aten


def test_max_dim_returns_named_tuple() -> None:
    x = ember.from_numpy(np.array([[1.0, 5.0, 5.0], [7.0, 0.0, 7.0]], np.float32))
    r = x.max(1)
    assert isinstance(r, return_types.max)
    assert r.values.tolist() == [5.0, 7.0]
    assert r.indices.tolist() == [1, 0]  # the first of tied maxima, as PyTorch
    values, indices = ember.min(x, 0, keepdim=True)
    assert values.shape == (1, 3) and indices.tolist() == [[0, 1, 0]]


def test_sort_and_topk_named_tuples() -> None:
    x = ember.from_numpy(np.array([3, 1, 2], np.int64))
    s = x.sort()
    assert isinstance(s, return_types.sort) and s.values.tolist() == [1, 2, 3]
    t = x.topk(2)
    assert isinstance(t, return_types.topk) and t.indices.tolist() == [0, 2]


def test_max_with_other_is_elementwise() -> None:
    x = ember.from_numpy(np.array([1.0, 5.0], np.float32))
    y = ember.from_numpy(np.array([3.0, 2.0], np.float32))
    assert x.max(y).tolist() == [3.0, 5.0]
    assert ember.min(x, y).tolist() == [1.0, 2.0]


def test_stable_sort_keeps_input_order_of_ties() -> None:
    x = ember.from_numpy(np.array([2, 1, 2, 1, 2], np.int64))
    assert x.sort(stable=True).indices.tolist() == [1, 3, 0, 2, 4]
    assert x.sort(stable=True, descending=True).indices.tolist() == [0, 2, 4, 1, 3]
    assert x.argsort(descending=True).tolist() == [0, 2, 4, 1, 3]


def test_topk_unsorted_selects_the_same_elements() -> None:
    x = ember.from_numpy(np.array([4.0, 9.0, 1.0, 7.0], np.float32))
    r = x.topk(2, sorted=False)
    assert sorted(r.values.tolist()) == [7.0, 9.0]
    assert sorted(r.indices.tolist()) == [1, 3]
    assert x.topk(2, largest=False).values.tolist() == [1.0, 4.0]


def test_sum_dtype_rules() -> None:
    b = ember.from_numpy(np.array([True, True, False]))
    assert b.sum().dtype is ember.int64 and b.sum().item() == 2
    i8 = ember.from_numpy(np.array([100, 100], np.int8))
    assert i8.sum().item() == 200  # accumulated in int64, no int8 overflow
    assert i8.sum(dtype=ember.float64).dtype is ember.float64
    with pytest.raises(RuntimeError, match="mean"):
        i8.mean()


def test_repeated_dims_raise() -> None:
    x = ember.from_numpy(np.ones((2, 3), np.float32))
    with pytest.raises(RuntimeError, match="appears multiple times"):
        x.sum((1, -1))


def test_empty_reductions() -> None:
    e = ember.from_numpy(np.ones((0, 3), np.float32))
    assert e.sum().item() == 0.0
    assert np.isnan(e.mean().item())
    with pytest.raises(RuntimeError):
        e.max()
    with pytest.raises(IndexError):
        e.max(0)
    assert e.max(1).values.shape == (0,)


def test_nan_wins() -> None:
    x = ember.from_numpy(np.array([1.0, np.nan, 3.0, np.nan], np.float32))
    assert x.argmax().item() == 1 and x.argmin().item() == 1
    assert np.isnan(x.max().item()) and np.isnan(x.amin().item())


def test_var_overloads_resolve_like_pytorch() -> None:
    x = ember.from_numpy(np.arange(12, dtype=np.float32).reshape(3, 4))
    assert resolve(aten.var, (x,), {})[0] is aten.var.correction
    assert resolve(aten.var, (x, 1), {})[0] is aten.var.dim
    assert resolve(aten.var, (x, False), {})[0] is aten.var.default
    np.testing.assert_allclose(x.var(1).numpy(), np.var(x.numpy(), 1, ddof=1), rtol=1e-6)
    np.testing.assert_allclose(x.std(False).numpy(), np.std(x.numpy()), rtol=1e-6)
    np.testing.assert_allclose(x.var(correction=0).numpy(), np.var(x.numpy()), rtol=1e-6)


def test_var_decomposes_into_correction() -> None:
    seen = []
    lib = ember.library.Library("aten", "IMPL")
    kernel = aten.var.correction._kernels[ember.DispatchKey.CPU][0]

    def spy(*args: object, **kwargs: object) -> object:
        seen.append(kwargs.get("correction"))
        return kernel(*args, **kwargs)

    with lib:
        lib.impl("var.correction", spy, "CPU")
        x = ember.from_numpy(np.ones((2, 3), np.float32))
        x.var(1, unbiased=False)
        x.std(0)  # std.dim: a different packet, not seen
    assert seen == [0]


def test_norm_method_decomposes_into_vector_norm() -> None:
    x = ember.from_numpy(np.array([[3.0, 4.0], [6.0, 8.0]], np.float32))
    assert x.norm().item() == pytest.approx(float(np.linalg.norm(x.numpy())))
    assert x.norm(2, 1).tolist() == [5.0, 10.0]
    assert x.norm(p=1, dim=0, keepdim=True).tolist() == [[9.0, 12.0]]
    assert aten.norm.Scalar.has_kernel_for_dispatch_key(ember.DispatchKey.CompositeImplicitAutograd)


@requires_torch
def test_softmax_with_dtype_matches_torch() -> None:
    arr = np.random.default_rng(0).standard_normal((3, 5)).astype(np.float16)
    e = ember.from_numpy(arr).softmax(1, dtype=ember.float32)
    t = torch.from_numpy(arr).softmax(1, dtype=torch.float32)
    assert e.dtype is ember.float32
    np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(
        ember.from_numpy(arr.astype(np.float32)).log_softmax(0).numpy(),
        torch.from_numpy(arr.astype(np.float32)).log_softmax(0).numpy(),
        rtol=1e-5,
        atol=1e-6,
    )


def test_meta_reductions_need_no_data() -> None:
    x = ember.empty(2, 3, 4, device="meta")
    assert x.sum(1).shape == (2, 4) and x.sum(1).device.type == "meta"
    assert x.max(1, keepdim=True).indices.dtype is ember.int64
    assert x.var([0, 2]).shape == (3,)
    assert x.topk(2, 1).values.shape == (2, 2, 4)


def test_sums_of_opposite_infinities_are_nan_without_warnings() -> None:
    """PyTorch gives nan silently; NumPy would warn (NOTE [quiet floating point])."""
    x = ember.tensor([float("inf"), float("-inf"), 1.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for r in (x.sum(), x.sum(0), x.mean(), x.mean(0), ember.zeros(0).mean()):
            assert math.isnan(r.item())
