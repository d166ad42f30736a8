"""``vmap`` of ``linalg.ldl_solve`` by its batching rule (no slow fallback): the factors,
their pivots and the right-hand side mapped together or apart, with batch dimensions of
their own that broadcast; compared with a loop of the op, and with ``torch.func.vmap``."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import ember
from ember.func import vmap
from tests.conftest import requires_torch, torch

CASES = [  # (A per example, B per example, in_dims of (LD, pivots, B))
    ((4, 4), (4, 2), (0, 0, 0)),
    ((4, 4), (4, 2), (None, None, 0)),
    ((4, 4), (4, 2), (0, 0, None)),
    ((4, 4), (4, 1), (0, None, 0)),  # factors mapped, their pivots not
    ((4, 4), (4, 3), (None, 0, 0)),
    ((2, 4, 4), (2, 4, 2), (0, 0, 0)),
    ((2, 4, 4), (1, 4, 2), (0, 0, None)),
    ((4, 4), (3, 4, 2), (0, 0, 0)),  # B's batch broadcasts against unbatched factors
    ((1, 4, 4), (3, 4, 2), (None, None, 0)),
]
#: the cases PyTorch 2.13 survives: where the factors' size-1 batch dimension broadcasts
#: against B's, its ldl_solve crashes the process (as its eager op does for factors of
#: fewer batch dimensions than B's, e.g. LD (3, 4, 4) with B (2, 3, 4, 2))
TORCH_CASES = CASES[:-1]


def _symmetric(shape: tuple[int, ...], rng: Any, complex_: bool) -> Any:
    a = rng.standard_normal(shape)
    if complex_:
        a = a + 1j * rng.standard_normal(shape)
    return a + np.swapaxes(a, -1, -2).conj() + 4 * np.eye(shape[-1])


def _inputs(a_shape: Any, b_shape: Any, dims: Any, hermitian: bool = False) -> Any:
    """(LD, pivots, B) as ember tensors: ``size`` examples along dim 0 of the mapped ones;
    an unmapped factor or pivots is example 0's (both factor the same matrix then, so the
    pivots of one and the factors of another never meet)."""
    rng = np.random.default_rng(0)
    size = 3
    a = _symmetric((size, *a_shape), rng, hermitian)
    if dims[0] is None or dims[1] is None:  # one matrix for every example
        a = np.broadcast_to(a[:1], a.shape).copy()
    ld, piv = ember.linalg.ldl_factor(ember.tensor(a), hermitian=hermitian)
    b = rng.standard_normal((size, *b_shape))
    if hermitian:
        b = b + 1j * rng.standard_normal(b.shape)
    b = ember.tensor(b)
    return [x if d == 0 else x[0] for x, d in zip((ld, piv, b), dims, strict=True)]


def _solve(hermitian: bool) -> Any:
    return lambda ld, p, b: ember.linalg.ldl_solve(ld, p, b, hermitian=hermitian)


def _loop(args: list[Any], dims: Any, hermitian: bool) -> np.ndarray:
    outs = []
    for i in range(3):
        one = [x[i] if d == 0 else x for x, d in zip(args, dims, strict=True)]
        outs.append(_solve(hermitian)(*one).numpy())
    return np.stack(outs)


def _mapped(args: list[Any], dims: Any, hermitian: bool) -> np.ndarray:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the slow fallback warns: it must not run
        return vmap(_solve(hermitian), in_dims=dims)(*args).numpy()  # type: ignore[no-any-return]


@pytest.mark.parametrize("hermitian", [False, True])
@pytest.mark.parametrize("case", CASES, ids=str)
def test_rule_matches_a_loop(case: Any, hermitian: bool) -> None:
    a_shape, b_shape, dims = case
    args = _inputs(a_shape, b_shape, dims, hermitian)
    got = _mapped(args, dims, hermitian)
    want = _loop(args, dims, hermitian)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


@requires_torch
@pytest.mark.parametrize("case", TORCH_CASES, ids=str)
def test_rule_matches_torch_func_vmap(case: Any) -> None:
    a_shape, b_shape, dims = case
    args = _inputs(a_shape, b_shape, dims)
    targs = [torch.from_numpy(x.numpy().copy()) for x in args]
    with warnings.catch_warnings():  # PyTorch's loop for an op it has no rule for warns
        warnings.filterwarnings("ignore", "There is a performance drop")
        want = torch.func.vmap(torch.linalg.ldl_solve, in_dims=dims)(*targs).numpy()
    got = _mapped(args, dims, False)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


def test_checks_name_the_example_shapes() -> None:
    ld, piv = ember.linalg.ldl_factor(ember.eye(4, dtype=ember.float64).expand(3, 4, 4))
    b = ember.ones(3, 5, 2, dtype=ember.float64)
    with pytest.raises(RuntimeError, match="each A matrix is 4 by 4 but each b matrix is 5 by 2"):
        vmap(_solve(False))(ld, piv, b)
    with pytest.raises(RuntimeError, match="Expected LD.shape\\[:-1\\] and pivots.shape"):
        vmap(_solve(False), in_dims=(0, None, 0))(ld, piv[0, :3], b[:, :4])
