"""The end-to-end claim of PyTorch's random streams: from the same seed, a small MLP with
dropout, its data and its DataLoader order drawn by each library, trained 20 SGD steps,
gives PyTorch's losses (to float32 rounding of the arithmetic; every random draw is equal)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch", reason="PyTorch is the oracle for its random streams")

from tests.test_random_draws import mkl_bernoulli  # noqa: E402


def _train(m: Any, seed: int) -> tuple[list[float], list[np.ndarray]]:
    m.manual_seed(seed)
    x = m.randn(96, 20)
    y = m.randint(0, 3, (96,))
    model = m.nn.Sequential(
        m.nn.Linear(20, 64),
        m.nn.ReLU(),
        m.nn.Dropout(0.3),
        m.nn.Linear(64, 32),
        m.nn.Tanh(),
        m.nn.Dropout(0.1),
        m.nn.Linear(32, 3),
    )
    opt = m.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    data = m.utils.data.TensorDataset(x, y)
    loader = m.utils.data.DataLoader(data, batch_size=24, shuffle=True)
    losses: list[float] = []
    while len(losses) < 20:
        for xb, yb in loader:
            loss = m.nn.functional.cross_entropy(model(xb), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(float(loss.item()))
            if len(losses) == 20:
                break
    return losses, [p.detach().numpy().copy() for p in model.parameters()]


@mkl_bernoulli
@pytest.mark.parametrize("seed", [0, 2024])
def test_sgd_with_dropout_matches_pytorch(seed: int) -> None:
    want, want_params = _train(torch, seed)
    got, got_params = _train(ember, seed)
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=1e-6)
    for g, w in zip(got_params, want_params, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=2e-5)
    # the streams are still aligned: every draw along the way was the same
    np.testing.assert_array_equal(ember.rand(4).numpy(), torch.rand(4).numpy())
