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
    """Values element-wise; each gradient element is a sum of up to 2(n-1) terms as large
    as the largest gradient (|d|^(p-1) for p < 1 is large where a difference is small) that
    may cancel, and both kernels add them in their vector lanes' order, which depends on
    the machine's vector width (numba's and PyTorch's alike). So the gradients agree to a
    few ulps of the largest gradient, not of each element: p = 0.5 in float32 on AVX2
    differs by 1.4e-4 relative at a gradient of 0.24 among gradients up to 1370 (both
    within 2 ulps of 1370 of the float64 gradient: test_gradient_error_is_float32s)."""
    e, eg, t, tg = _both(_rows(dtype), p)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(e, t, rtol=tol, atol=tol)
    scale = float(np.abs(tg).max())
    atol = max(tol, 16 * float(np.finfo(dtype).eps) * scale)
    np.testing.assert_allclose(eg, tg, rtol=tol * 10, atol=atol)


@requires_torch
@pytest.mark.parametrize("p", [0.5, 1.0, 1.5, 2.0, 3.0, float("inf")])
def test_gradient_error_is_float32s(p: float) -> None:
    """ember's float32 gradient is within a few float32 ulps of its largest element of the
    float64 gradient of the same float32 inputs, as PyTorch's is (the bound is fair: it
    holds for the oracle too)."""
    x = _rows(np.float32)
    _, eg, _, tg = _both(x, p)
    w = np.random.default_rng(1).standard_normal(x.shape[0] * (x.shape[0] - 1) // 2)
    xt = torch.tensor(x.astype(np.float64), requires_grad=True)
    (torch.pdist(xt, p) * torch.tensor(w.astype(np.float32).astype(np.float64))).sum().backward()
    ref = xt.grad.numpy()
    bound = 8 * float(np.finfo(np.float32).eps) * float(np.abs(ref).max())
    assert np.abs(tg - ref).max() <= bound
    assert np.abs(eg - ref).max() <= bound


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
