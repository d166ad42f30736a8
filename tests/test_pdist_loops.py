"""``pdist``'s compiled loops (NOTE [pdist loops]): every kind of ``p``, forward and
backward, against PyTorch, on shapes the vector lanes do not divide, with NaN and inf."""

from __future__ import annotations

import numpy as np
import pytest

import ember

from .conftest import requires_torch, torch

PS = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, float("inf")]


def _rows(dtype: type, n: int = 37, m: int = 19) -> np.ndarray:
    rng = np.random.default_rng(18)
    x = rng.standard_normal((n, m)).astype(dtype)
    x[5] = x[9]  # a zero distance
    x[3, 2] = x[7, 2]  # a zero difference in one column
    return x


def _both(x: np.ndarray, p: float) -> tuple[np.ndarray, ...]:
    """ember's and torch's pdist of ``x`` and gradient of a weighted sum."""
    w = np.random.default_rng(1).standard_normal(x.shape[0] * (x.shape[0] - 1) // 2)
    out = []
    for mod in (ember, torch):
        t = mod.tensor(x, requires_grad=True)
        d = mod.pdist(t, p)
        (d * mod.tensor(w.astype(x.dtype))).sum().backward()
        out += [d.detach().numpy(), t.grad.numpy()]
    return tuple(out)


@requires_torch
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("p", PS)
def test_pdist_and_gradient_match_torch(p: float, dtype: type) -> None:
    e, eg, t, tg = _both(_rows(dtype), p)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(e, t, rtol=tol, atol=tol)
    np.testing.assert_allclose(eg, tg, rtol=tol * 10, atol=tol)


@requires_torch
@pytest.mark.parametrize("p", PS)
def test_pdist_nan_and_inf_match_torch(p: float) -> None:
    x = _rows(np.float64, 10, 5)
    x[1, 3] = np.nan
    x[4, 0] = np.inf
    x[2, 0] = np.inf
    e, t = (mod.pdist(mod.tensor(x), p).numpy() for mod in (ember, torch))
    np.testing.assert_allclose(e, t, rtol=1e-12)  # NaN where torch's are NaN


@requires_torch
@pytest.mark.parametrize("p", [1.0, 2.0, float("inf")])
def test_pdist_noncontiguous_and_small_shapes_match_torch(p: float) -> None:
    x = _rows(np.float32, 12, 10)
    for mod in (ember, torch):
        r = [mod.pdist(mod.tensor(x).t()[::2], p)]  # rows with a stride
        r += [mod.pdist(mod.tensor(x[:2]), p), mod.pdist(mod.tensor(x[:, :1]), p)]
        r += [mod.pdist(mod.tensor(x[:1]), p), mod.pdist(mod.tensor(x[:, :0]), p)]
        if mod is ember:
            e = [a.numpy() for a in r]
        else:
            t = [a.numpy() for a in r]
    for a, b in zip(e, t, strict=True):
        assert a.shape == b.shape and a.dtype == b.dtype
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
