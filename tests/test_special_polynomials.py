"""``ember.special``'s orthogonal polynomials (Chebyshev T/U/V/W and their shifted forms,
Hermite H and He, Laguerre L, Legendre P) against PyTorch: values over a grid of x (inside
and outside [-1, 1], the ends) and degrees (negative, fractional, past the trigonometric
threshold), the degrees PyTorch reads as negative (NaN, ±inf, huge), Hermite's NaN past its
degree limit, dtypes of every overload, outputs that never require grad, the refusals
(NOTE [orthogonal polynomials])."""

from __future__ import annotations

import numpy as np
import pytest

import ember
from ember.ops.native.special import POLYNOMIALS

torch = pytest.importorskip("torch", reason="PyTorch is the oracle of these tests")

#: the ones whose PyTorch kernel initialises its result before a recurrence that NaN x skips
NAN_X_DEFINED = ("chebyshev_polynomial_t", "hermite_polynomial_h", "hermite_polynomial_he")


def _both(name: str, x: np.ndarray, n: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    e = getattr(ember.special, name)(ember.tensor(x), ember.tensor(n)).numpy()
    t = getattr(torch.special, name)(torch.tensor(x), torch.tensor(n)).numpy()
    return e, t


def _grid(dtype: str) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(7)
    x = np.concatenate([
        rng.uniform(-1, 1, 60), rng.uniform(-3, 3, 60), rng.uniform(0, 1, 40),
        [1.0, -1.0, 0.0, -0.0, 0.5, 2.0, -2.0, 1e-10],
    ]).astype(dtype)  # fmt: skip
    degrees = np.arange(-3, 30).astype(dtype)
    n = np.tile(degrees, x.size)
    n[::5] += 0.7  # fractional degrees truncate toward zero
    return np.repeat(x, degrees.size), n


@pytest.mark.parametrize("name", POLYNOMIALS)
def test_values_match_torch_float64(name: str) -> None:
    x, n = _grid("float64")
    e, t = _both(name, x, n)
    np.testing.assert_allclose(e, t, rtol=1e-10, atol=1e-12, equal_nan=True)


@pytest.mark.parametrize("name", POLYNOMIALS)
def test_values_match_torch_float32(name: str) -> None:
    """float32 rounds differently (PyTorch's libm and fused multiply-adds), and a degree-n
    recurrence or cos(n acos x) amplifies a last-place difference by about n: against the
    float64 value, ember's float32 error is at most twice PyTorch's, or a few times float32's
    precision times the degree of the value's scale."""
    x, n = _grid("float32")
    e, t = _both(name, x, n)
    exact, _ = _both(name, x.astype(np.float64), n.astype(np.float64))
    assert np.array_equal(np.isnan(e), np.isnan(t))
    finite = np.isfinite(exact)
    err_e, err_t = np.abs(e - exact)[finite], np.abs(t - exact)[finite]
    scale = np.maximum(np.abs(exact[finite]), 1.0)
    ok = err_e <= np.maximum(2 * err_t, 5e-6 * np.maximum(n[finite], 1) * scale)
    assert ok.all(), (x[finite][~ok][:5], n[finite][~ok][:5], e[finite][~ok][:5])


@pytest.mark.parametrize("name", POLYNOMIALS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_special_values(name: str, dtype: str) -> None:
    """0, -0, ±inf for x at degrees 0 to 12; degrees NaN, ±inf and past int64 (read as
    negative: 0); NaN x where PyTorch defines the value."""
    x = np.repeat(np.array([0.0, -0.0, np.inf, -np.inf, 1.0, -1.0], dtype), 13)
    n = np.tile(np.arange(13, dtype=dtype), 6)
    e, t = _both(name, x, n)
    np.testing.assert_allclose(e, t, rtol=1e-5 if dtype == "float32" else 1e-12, equal_nan=True)
    n = np.array([np.nan, np.inf, -np.inf, 1e30, -1e30, -0.5], dtype)
    e, t = _both(name, np.full(6, 0.3, dtype), n)
    np.testing.assert_array_equal(e, t)
    assert (e[:5] == 0).all() and e[5] == 1  # -0.5 truncates to degree 0
    x = np.full(4, np.nan, dtype)
    e, t = _both(name, x, np.array([0, 1, 2, 5], dtype))
    assert e[0] == 1 and np.isnan(e[1:]).all()
    if name in NAN_X_DEFINED:
        np.testing.assert_array_equal(e, t)


@pytest.mark.parametrize("dtype, limit", [("float32", 128), ("float64", 512)])
@pytest.mark.parametrize("name", ["hermite_polynomial_h", "hermite_polynomial_he"])
def test_hermite_degree_limit(name: str, dtype: str, limit: int) -> None:
    """Past degree 128 (float32) or 512 (float64) PyTorch's Hermite polynomials are NaN (at
    0.01 the degrees below overflow first: H_n(0.01) is about n!/(n/2)!)."""
    e, t = _both(name, np.full(3, 0.01, dtype), np.array([20, limit + 1, 2 * limit], dtype))
    np.testing.assert_allclose(e, t, rtol=1e-5)
    assert np.isfinite(e[0]) and np.isnan(e[1:]).all()


def test_large_degree_outside_the_interval_ends() -> None:
    """The recurrence stops once it is NaN (overflow past inf), as PyTorch's: a degree of
    10^12 at |x| > 1 ends quickly, inside (-1, 1) the trigonometric form answers."""
    x = np.array([2.0, -1.5, 0.3], np.float64)
    n = np.full(3, 1e12)
    for name in [p for p in POLYNOMIALS if "chebyshev" in p]:
        e, t = _both(name, x, n)
        np.testing.assert_allclose(e, t, rtol=1e-6, atol=1e-6, equal_nan=True)


@pytest.mark.parametrize("name", POLYNOMIALS)
def test_dtypes_and_overloads(name: str) -> None:
    fe, ft = getattr(ember.special, name), getattr(torch.special, name)
    cases = [
        (lambda lib: lib.tensor([1, 2, 3]), lambda lib: lib.tensor([2, 3, 4])),  # ints: float32
        (lambda lib: lib.tensor([0.5, 2.0], dtype=lib.float64), lambda lib: 3),
        (lambda lib: lib.tensor([0.5, 2.0]), lambda lib: lib.tensor([3.0], dtype=lib.float64)),
        (lambda lib: lib.tensor([1, 2]), lambda lib: 2.5),  # int x, float n: float32
        (lambda lib: 0.5, lambda lib: lib.tensor([0, 1, 4])),
        (lambda lib: 2, lambda lib: lib.tensor([3, 4], dtype=lib.float64)),
        (lambda lib: lib.tensor([True, False]), lambda lib: 3),
    ]
    for x, n in cases:
        e, t = fe(x(ember), n(ember)), ft(x(torch), n(torch))
        assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
        np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-6)
    out = ember.empty(3)
    fe(ember.tensor([0.1, 0.2, 0.3]), 4, out=out)
    np.testing.assert_allclose(out.numpy(), ft(torch.tensor([0.1, 0.2, 0.3]), 4).numpy(), rtol=1e-5)


@pytest.mark.parametrize("name", POLYNOMIALS)
def test_outputs_never_require_grad(name: str) -> None:
    x = ember.tensor([0.1, 0.7], requires_grad=True)
    n = ember.tensor([2.0, 3.0], requires_grad=True)
    fn = getattr(ember.special, name)
    assert not fn(x, n).requires_grad
    assert not fn(x, 3).requires_grad and not fn(0.5, n).requires_grad


@pytest.mark.parametrize("name", POLYNOMIALS)
def test_refusals(name: str) -> None:
    fn = getattr(ember.special, name)
    for dtype in (ember.float16, ember.complex64):
        with pytest.raises(NotImplementedError, match=f"special_{name}.*cast the input"):
            fn(ember.ones(2, dtype=dtype), 2)
    with pytest.raises(RuntimeError, match=r"special_.*shapes \[\[2\], \[3\]\] cannot"):
        fn(ember.ones(2), ember.ones(3))
