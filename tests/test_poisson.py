"""``poisson`` (issue 18): PyTorch's values for the same seed, and the generator left where
PyTorch leaves it (NOTE [poisson stream]), its gradient and errors."""

from __future__ import annotations

import numpy as np
import pytest

import ember

from .conftest import requires_torch, torch


@requires_torch
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_poisson_draws_pytorchs_values_and_leaves_the_stream_where_pytorch_does(
    dtype: str,
) -> None:
    rates = np.concatenate([np.linspace(0, 12, 41), [0.0, 1e-3, 9.99, 10.0, 55.5, 1e3, 3e4]])
    rates = rates.reshape(3, -1)
    got = []
    for mod in (ember, torch):
        g = mod.Generator().manual_seed(1234)
        r = mod.tensor(rates, dtype=getattr(mod, dtype))
        draws = mod.poisson(r, generator=g)
        t_view = mod.poisson(r.t(), generator=g)  # a transposed view: the output's order
        after = mod.rand(3, generator=g)
        got.append((draws.numpy(), t_view.numpy(), after.numpy()))
    for e, t in zip(got[0], got[1], strict=True):
        np.testing.assert_array_equal(e, t)


def test_poisson_mean_gradient_and_errors() -> None:
    ember.manual_seed(0)
    lam = ember.full((20000,), 4.5, requires_grad=True)
    x = ember.poisson(lam)
    assert abs(x.mean().item() - 4.5) < 0.05 and abs(x.var().item() - 4.5) < 0.15
    x.sum().backward()  # PyTorch's gradient: zeros
    assert lam.grad.abs().sum().item() == 0
    with pytest.raises(RuntimeError, match="non-negative"):
        ember.poisson(ember.tensor([1.0, -1.0]))
    with pytest.raises(RuntimeError, match="non-negative"):
        ember.poisson(ember.tensor([float("nan")]))
    with pytest.raises(NotImplementedError, match="poisson_cpu"):
        ember.poisson(ember.tensor([1, 2]))


@requires_torch
def test_poisson_over_many_twister_blocks_matches_torch_and_its_stream() -> None:
    # thousands of draws cross many 624-output blocks of the Mersenne Twister; an odd
    # number of outputs drawn before starts the first random64() mid-pair (NOTE [poisson
    # on the twister])
    rates = np.random.default_rng(3).uniform(0, 40, 3000)
    rates[::7] = 0.0
    got = []
    for mod in (ember, torch):
        g = mod.Generator().manual_seed(99)
        before = mod.rand(3, generator=g)  # three 32-bit outputs
        draws = mod.poisson(mod.tensor(rates), generator=g)
        after = mod.rand(5, dtype=mod.float64, generator=g)
        got.append((before.numpy(), draws.numpy(), after.numpy()))
    for e, t in zip(got[0], got[1], strict=True):
        np.testing.assert_array_equal(e, t)
