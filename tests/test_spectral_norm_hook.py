"""``nn.utils.spectral_norm`` / ``remove_spectral_norm``, the forward pre-hook form (NOTE
[spectral norm by hook] in ember/nn/utils/spectral_norm.py), against PyTorch's: the same
seeded buffers, training steps, eval outputs, state_dict keys and removal."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import ember

from .conftest import requires_torch, torch

MODULES = [
    ("linear", lambda nn: nn.Linear(4, 3), (2, 4)),
    ("conv2d", lambda nn: nn.Conv2d(2, 3, 2), (1, 2, 3, 3)),
    ("conv_transpose2d", lambda nn: nn.ConvTranspose2d(2, 3, 2), (1, 2, 2, 2)),
]


def _run(lib: Any, make: Any, shape: tuple[int, ...], iterations: int) -> list[Any]:
    lib.manual_seed(0)
    m = lib.nn.utils.spectral_norm(make(lib.nn), n_power_iterations=iterations)
    x = lib.linspace(-1, 1, int(np.prod(shape))).reshape(shape)
    opt = lib.optim.SGD(m.parameters(), lr=0.1)
    out: list[Any] = []
    for _ in range(3):
        y = m(x)
        (y * y).sum().backward()
        opt.step()
        opt.zero_grad()
        out.append(y.detach().numpy())
    m.eval()
    out += [m(x).detach().numpy(), m.weight_u.numpy(), m.weight_v.numpy(), sorted(m.state_dict())]
    lib.nn.utils.remove_spectral_norm(m)
    out += [sorted(n for n, _ in m.named_parameters()), m(x).detach().numpy()]
    return out


@requires_torch
@pytest.mark.parametrize("iterations", [1, 3])
@pytest.mark.parametrize(("name", "make", "shape"), MODULES, ids=[m[0] for m in MODULES])
def test_spectral_norm_hook_matches_torch(
    name: str, make: Any, shape: tuple[int, ...], iterations: int
) -> None:
    mine, ref = _run(ember, make, shape, iterations), _run(torch, make, shape, iterations)
    for a, b in zip(mine, ref, strict=True):
        if isinstance(a, np.ndarray):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
        else:
            assert a == b


def test_spectral_norm_hook_errors() -> None:
    m = ember.nn.utils.spectral_norm(ember.nn.Linear(3, 2))
    with pytest.raises(RuntimeError, match="two spectral_norm hooks"):
        ember.nn.utils.spectral_norm(m)
    with pytest.raises(ValueError, match="n_power_iterations"):
        ember.nn.utils.spectral_norm(ember.nn.Linear(3, 2), n_power_iterations=0)
    with pytest.raises(ValueError, match="no parameter with name 'kernel'"):
        ember.nn.utils.spectral_norm(ember.nn.Linear(3, 2), name="kernel")
    with pytest.raises(ValueError, match="spectral_norm of 'weight' not found"):
        ember.nn.utils.remove_spectral_norm(ember.nn.Linear(3, 2))


def test_spectral_norm_hook_bounds_the_largest_singular_value() -> None:
    ember.manual_seed(1)
    m = ember.nn.utils.spectral_norm(ember.nn.Linear(6, 5), n_power_iterations=30)
    m(ember.ones(1, 6))
    top = ember.linalg.svdvals(m.weight.detach())[0].item()
    assert abs(top - 1.0) < 1e-4
