"""``ember.histogramdd`` against PyTorch: bins as an int, a list of ints or a list of edge
tensors; ``range``, ``weight``, ``density``; points on the edges, outside them and NaN; the
result's type; the refusals (NOTE [histogramdd])."""

from __future__ import annotations

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch", reason="PyTorch is the oracle of these tests")


def _both(x: np.ndarray, bins, **kw):  # type: ignore[no-untyped-def]
    """(ember's, torch's) (hist, edges) as arrays."""
    out = []
    for lib in (ember, torch):
        b = [lib.tensor(e) for e in bins] if isinstance(bins, list) and bins and isinstance(
            bins[0], np.ndarray
        ) else bins  # fmt: skip
        k = {key: lib.tensor(v) if isinstance(v, np.ndarray) else v for key, v in kw.items()}
        r = lib.histogramdd(lib.tensor(x), b, **k)
        out.append((r.hist.numpy(), [e.numpy() for e in r.bin_edges]))
    return out


def _check(x: np.ndarray, bins, tol: float = 1e-6, **kw) -> None:  # type: ignore[no-untyped-def]
    (he, ee), (ht, et) = _both(x, bins, **kw)
    assert he.dtype == ht.dtype and he.shape == ht.shape
    np.testing.assert_allclose(he, ht, rtol=tol, atol=tol)
    assert len(ee) == len(et)
    for a, b in zip(ee, et, strict=True):
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("d", [1, 2, 3])
def test_bin_counts_match_torch(dtype: str, d: int) -> None:
    rng = np.random.default_rng(d)
    x = rng.standard_normal((200, d)).astype(dtype)
    w = rng.random(200).astype(dtype)
    _check(x, 4)
    _check(x, [3, 5, 2][:d])
    _check(x, [3, 5, 2][:d], weight=w)
    _check(x, [4, 2, 3][:d], density=True)
    rng_ = [-1.0, 1.0, -0.5, 2.0, 0.0, 0.5][: 2 * d]
    _check(x, [4, 2, 3][:d], range=rng_, weight=w, density=True)
    _check(x.reshape(10, 20, d), 3)  # leading dims flatten into points


def test_points_on_edges_outside_and_nan() -> None:
    """Integers on equal-width edges fall right of them (the last edge in the last bin);
    points outside any dim's range and NaN points do not count."""
    x = np.array([[0, 0], [1, 1], [2, 2], [3, 3], [4, 4], [1, 3], [5, 0], [np.nan, 1]], "f4")
    _check(x, [4, 4], range=[0.0, 4.0, 0.0, 4.0])
    _check(x, [3, 6], range=[0.0, 3.0, 1.0, 4.0])
    x = np.arange(60, dtype="f8").reshape(30, 2) / 7
    _check(x, [7, 11])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_bin_tensors_match_torch(dtype: str) -> None:
    rng = np.random.default_rng(0)
    x = rng.uniform(-3, 3, (100, 2)).astype(dtype)
    edges = [np.array([-2.0, -0.5, 0.5, 2.0], dtype), np.array([-1.0, 0.0, 3.0], dtype)]
    _check(x, edges)
    _check(x, edges, weight=rng.random(100).astype(dtype), density=True)
    r = ember.histogramdd(ember.tensor(x), [ember.tensor(e) for e in edges])
    assert isinstance(r.bin_edges, tuple) and isinstance(r, ember.return_types.histogramdd)


def test_equal_values_and_empty_input() -> None:
    _check(np.ones((5, 2), "f4"), [2, 3])  # the range widens by 0.5 each way
    _check(np.zeros((0, 3), "f4"), [2, 2, 2])  # no points: edges over [0, 1]


def test_refusals() -> None:
    x = ember.randn(6, 2)
    cases = [
        (lambda: ember.histogramdd(ember.randn(5), [2]), RuntimeError, "at least 2 dimensions"),
        (lambda: ember.histogramdd(x, [2]), RuntimeError, "size of bins must be equal"),
        (lambda: ember.histogramdd(x, [2, 0]), RuntimeError, "bins must be > 0.*dimension 1"),
        (
            lambda: ember.histogramdd(x, [2, 2], range=[0.0, 1.0]),
            RuntimeError,
            "range should have 4 elements",
        ),  # fmt: skip
        (
            lambda: ember.histogramdd(x, [2, 2], range=[0.0, 1.0, 2.0, 1.0]),
            RuntimeError,
            "min should not exceed max.*dimension 1",
        ),  # fmt: skip
        (
            lambda: ember.histogramdd(x, 2, weight=ember.ones(6, 2)),
            RuntimeError,
            "excluding its innermost",
        ),  # fmt: skip
        (lambda: ember.histogramdd(x.long(), 2), NotImplementedError, "Long"),
        (
            lambda: ember.histogramdd(
                x, [ember.tensor([0.0, 1.0]), ember.tensor([0.0, 1.0]).double()]
            ),
            RuntimeError,
            "same dtype",
        ),  # fmt: skip
    ]
    for fn, exc, match in cases:
        with pytest.raises(exc, match=match):
            fn()
