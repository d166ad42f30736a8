"""The tensor ops and autograd API of issue 18 that scripts reach for next: behaviour the op
samples (``tests/test_ops.py``) cannot show, compared with PyTorch where it is deterministic
and checked for its distribution where it is random."""

from __future__ import annotations

import numpy as np
import pytest

import ember

from .conftest import requires_torch, torch

# --------------------------------------------------------------------------- multinomial


def test_multinomial_with_replacement_follows_the_weights() -> None:
    w = ember.tensor([0.5, 1.0, 0.0, 2.5])  # unnormalised weights
    draws = ember.multinomial(w.expand(4000, 4), 5, replacement=True)
    assert draws.shape == (4000, 5) and draws.dtype is ember.int64
    freq = np.bincount(draws.numpy().ravel(), minlength=4) / draws.numel()
    np.testing.assert_allclose(freq, [0.125, 0.25, 0.0, 0.625], atol=0.015)


def test_multinomial_without_replacement_draws_distinct_categories() -> None:
    w = ember.tensor([[0.0, 1.0, 3.0, 0.0, 6.0], [1.0, 1.0, 1.0, 1.0, 1.0]])
    draws = w.multinomial(3)  # the method
    for row in draws.numpy():
        assert len(set(row)) == 3
    big = ember.multinomial(w[0].expand(3000, 5), 4)
    rows = big.numpy()
    assert all(len(set(r)) == 4 for r in rows)
    # the three categories of nonzero weight come first, in draws proportional to weight
    assert set(rows[:, :3].ravel()) == {1, 2, 4}
    first = np.bincount(rows[:, 0], minlength=5) / len(rows)
    np.testing.assert_allclose(first, [0, 0.1, 0.3, 0, 0.6], atol=0.03)


def test_multinomial_generator_reproduces_and_out_writes() -> None:
    w = ember.tensor([0.2, 0.3, 0.5])
    g = ember.Generator().manual_seed(7)
    a = ember.multinomial(w, 10, True, generator=g)
    g.manual_seed(7)
    b = ember.multinomial(w, 10, True, generator=g)
    assert ember.equal(a, b)
    out = ember.empty(0, dtype=ember.int64)
    r = ember.multinomial(w, 2, out=out)
    assert r is out and out.shape == (2,)


@requires_torch
@pytest.mark.parametrize(
    "weights, n, replacement",
    [
        ([1.0, -1.0], 1, False),
        ([1.0, float("nan")], 1, True),
        ([1.0, float("inf")], 1, False),
        ([0.0, 0.0], 1, True),
        ([1.0, 2.0], 0, True),
        ([1.0, 2.0], 3, False),
        ([[[1.0]]], 1, True),
    ],
)
def test_multinomial_refuses_as_torch(weights: list, n: int, replacement: bool) -> None:
    with pytest.raises(RuntimeError) as t_err:
        torch.multinomial(torch.tensor(weights), n, replacement)
    with pytest.raises(RuntimeError) as e_err:
        ember.multinomial(ember.tensor(weights), n, replacement)
    assert str(t_err.value).split(" (")[0] in str(e_err.value)
