"""``vmap`` of ``linalg.lstsq`` by its batching rule (no slow fallback): every driver, a
matrix or a vector right-hand side, either argument mapped or both, with batch dimensions
of its own; compared with a loop of the op, and with ``torch.func.vmap`` where PyTorch
accepts the call (its rule refuses a vector ``b``, which its eager op takes)."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import ember
from ember.func import vmap

torch = pytest.importorskip("torch", reason="PyTorch is the oracle for the matrix cases")

DRIVERS = ["gelsy", "gelsd", "gelss", "gels"]
CASES = [  # (A per example, b per example, in_dims)
    ((5, 3), (5, 2), (0, 0)),
    ((5, 3), (5, 2), (0, None)),
    ((5, 3), (5, 2), (None, 0)),
    ((2, 5, 3), (2, 5, 2), (0, 0)),
    ((2, 5, 3), (1, 5, 2), (0, None)),
    ((1, 5, 3), (2, 5, 2), (None, 0)),
    ((3, 3), (3, 1), (0, 0)),
]
VECTOR_CASES = [((5, 3), (5,), d) for d in [(0, 0), (0, None), (None, 0)]] + [
    ((2, 5, 3), (2, 5), (0, 0))
]


def _inputs(a_shape: tuple[int, ...], b_shape: tuple[int, ...], dims: tuple[Any, ...]) -> Any:
    rng = np.random.default_rng(0)
    a = rng.standard_normal(((4,) if dims[0] == 0 else ()) + a_shape)
    b = rng.standard_normal(((4,) if dims[1] == 0 else ()) + b_shape)
    return a, b


def _ember_vmap(a: Any, b: Any, dims: Any, driver: str) -> list[Any]:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the slow fallback warns: it must not run
        out = vmap(lambda x, y: ember.linalg.lstsq(x, y, driver=driver), in_dims=dims)(
            ember.tensor(a), ember.tensor(b)
        )
    return [o.numpy() for o in out]


def _loop(a: Any, b: Any, dims: Any, driver: str) -> list[Any]:
    outs = []
    for i in range(4):
        x = a[i] if dims[0] == 0 else a
        y = b[i] if dims[1] == 0 else b
        outs.append(ember.linalg.lstsq(ember.tensor(x), ember.tensor(y), driver=driver))
    return [np.stack([o[k].numpy() for o in outs]) for k in range(4)]


@pytest.mark.parametrize("driver", DRIVERS)
@pytest.mark.parametrize("case", CASES, ids=str)
def test_lstsq_matrix_rhs_matches_torch_func(case: Any, driver: str) -> None:
    a_shape, b_shape, dims = case
    a, b = _inputs(a_shape, b_shape, dims)
    got = _ember_vmap(a, b, dims, driver)
    want = torch.func.vmap(lambda x, y: torch.linalg.lstsq(x, y, driver=driver), in_dims=dims)(
        torch.tensor(a), torch.tensor(b)
    )
    for g, w, name in zip(
        got, want, ["solution", "residuals", "rank", "singular_values"], strict=True
    ):
        assert g.shape == tuple(w.shape), (name, g.shape, w.shape)
        np.testing.assert_allclose(g, w.numpy(), rtol=1e-10, atol=1e-10, err_msg=name)


@pytest.mark.parametrize("driver", DRIVERS)
@pytest.mark.parametrize("case", VECTOR_CASES, ids=str)
def test_lstsq_vector_rhs_matches_a_loop(case: Any, driver: str) -> None:
    a_shape, b_shape, dims = case
    a, b = _inputs(a_shape, b_shape, dims)
    got = _ember_vmap(a, b, dims, driver)
    want = _loop(a, b, dims, driver)
    assert got[0].shape == (4, *a_shape[:-2], a_shape[-1])
    np.testing.assert_allclose(got[0], want[0], rtol=1e-10, atol=1e-10)
    for g, w in zip(got[1:], want[1:], strict=True):
        if w.size:  # a loop stacks the outputs a driver fills
            np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-10)
        else:  # and empty ones are empty per example
            assert g.shape == (4, 0)


@pytest.mark.parametrize(
    "case",
    [((2, 5, 3), (5, 2), (0, 0)), ((5, 3), (2, 5, 2), (None, 0)), ((5, 3), (4, 2), (0, 0))],
    ids=str,
)
def test_lstsq_refuses_per_example_shapes_as_eager(case: Any) -> None:
    """Shapes the eager op refuses (``b`` of ``A``'s dims less one is a batch of vectors;
    ``b`` of more dims than ``A``; rows that differ) are refused per example under vmap."""
    a_shape, b_shape, dims = case
    a, b = _inputs(a_shape, b_shape, dims)
    with pytest.raises(RuntimeError) as eager:
        x, y = (a[0] if dims[0] == 0 else a), (b[0] if dims[1] == 0 else b)
        ember.linalg.lstsq(ember.tensor(x), ember.tensor(y))
    with pytest.raises(RuntimeError) as mapped:
        _ember_vmap(a, b, dims, "gelsy")
    assert str(mapped.value) == str(eager.value)
