"""``histogram``'s compiled count over equal-width bins (NOTE [histogram loop]) against
PyTorch: values on the edges, outside the range, NaN and inf, weights, density, strides."""

from __future__ import annotations

import numpy as np
import pytest

import ember

from .conftest import requires_torch, torch


def _data(dtype: type) -> np.ndarray:
    rng = np.random.default_rng(18)
    x = rng.standard_normal(5000).astype(dtype)
    x *= 10
    x[:40] = np.arange(-20, 20)  # on the edges of range=(-20, 20) with 40 bins
    x[40:44] = [np.nan, np.inf, -np.inf, 20.0]  # 20.0: the last edge, in the last bin
    return x


@requires_torch
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("density", [False, True])
def test_histogram_bin_count_matches_torch(dtype: type, weighted: bool, density: bool) -> None:
    x = _data(dtype)
    w = np.abs(np.random.default_rng(2).standard_normal(x.size)).astype(dtype)
    got = []
    for mod in (ember, torch):
        kw = {"weight": mod.tensor(w)} if weighted else {}
        a = mod.histogram(mod.tensor(x), 40, range=(-20.0, 20.0), density=density, **kw)
        got.append([a.hist.numpy(), a.bin_edges.numpy()])
    tol = 1e-5 if dtype == np.float32 else 1e-12
    for e, t in zip(got[0], got[1], strict=True):
        assert e.dtype == t.dtype
        np.testing.assert_allclose(e, t, rtol=tol)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_histogram_counts_each_value_in_the_bin_its_edges_give(dtype: type) -> None:
    # edges from the data's own range (a strided view): each value in the bin whose edges
    # hold it, the maximum in the last bin (torch's float32 linspace edges can differ from
    # ember's in the last bit, so the reference is ember's own edges)
    x = _data(dtype)[44:]
    h = ember.histogram(ember.tensor(x).reshape(-1, 4).t(), 7)
    edges = h.bin_edges.numpy()
    pos = np.minimum(np.searchsorted(edges, x, side="right") - 1, 6)
    np.testing.assert_array_equal(h.hist.numpy(), np.bincount(pos, minlength=7))


@requires_torch
def test_histogram_of_one_value_and_one_bin_matches_torch() -> None:
    for x, bins in (([3.0, 3.0], 4), ([1.0, 5.0, 2.5], 1)):
        e = ember.histogram(ember.tensor(x), bins)
        t = torch.histogram(torch.tensor(x), bins)
        np.testing.assert_array_equal(e.hist.numpy(), t.hist.numpy())
        np.testing.assert_array_equal(e.bin_edges.numpy(), t.bin_edges.numpy())
