"""``autograd.grad(..., is_grads_batched=True)``: one vmapped backward pass over a batch of
``grad_outputs``, compared with PyTorch's and with a loop of single passes."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import ember
from tests.conftest import requires_torch, torch


def _graph(lib: Any) -> tuple[Any, Any, Any]:
    x = lib.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=lib.float64, requires_grad=True)
    w = lib.tensor([[0.5, -1.0, 0.25], [2.0, 0.0, -0.5]], dtype=lib.float64, requires_grad=True)
    y = (x @ w).sin() * x.sum()
    return x, w, y


@requires_torch
@pytest.mark.parametrize("create_graph", [False, True])
def test_batched_rows_equal_torch_and_a_loop(create_graph: bool) -> None:
    rows = np.random.default_rng(0).standard_normal((5, 2, 3))
    results = []
    for lib in (ember, torch):
        x, w, y = _graph(lib)
        gs = lib.autograd.grad(
            y, (x, w), lib.tensor(rows), is_grads_batched=True, create_graph=create_graph
        )
        assert [tuple(g.shape) for g in gs] == [(5, 2, 2), (5, 2, 3)]
        results.append([g.detach().numpy() for g in gs])
        if create_graph:
            assert gs[0].requires_grad
    for e, t in zip(*results, strict=True):
        np.testing.assert_allclose(e, t, rtol=1e-12, atol=1e-12)
    x, w, y = _graph(ember)
    for i in range(5):
        loop = ember.autograd.grad(y, (x, w), ember.tensor(rows[i]), retain_graph=True)
        for g, batched in zip(loop, results[0], strict=True):
            np.testing.assert_allclose(g.numpy(), batched[i], rtol=1e-12)


def test_batched_grads_need_one_grad_output_per_output() -> None:
    x, _, y = _graph(ember)
    with pytest.raises(RuntimeError, match="one batched grad_output per output"):
        ember.autograd.grad(y, x, None, is_grads_batched=True)
