"""ember's random streams against PyTorch's CPU ones, bit for bit (``np.array_equal``, not
allclose), over seeds, sizes (below and above the Box-Muller block of 16), dtypes and
generator states."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch", reason="PyTorch is the oracle for its random streams")

SEEDS = [0, 1, 12345, 2**40 + 7, -5]
SIZES = [1, 2, 3, 15, 16, 17, 33, 1001]


def _same(seed: int, draw: Callable[[Any], Any]) -> None:
    torch.manual_seed(seed)
    ember.manual_seed(seed)
    want = draw(torch).numpy()
    got = draw(ember).numpy()
    assert want.dtype == got.dtype and want.shape == got.shape
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dt", ["float32", "float64"])
def test_rand_and_uniform(seed: int, n: int, dt: str) -> None:
    _same(seed, lambda m: m.rand(n, dtype=getattr(m, dt)))
    _same(seed, lambda m: m.empty(n, dtype=getattr(m, dt)).uniform_(-2.5, 0.3))
    _same(seed, lambda m: m.rand(2, n, dtype=getattr(m, dt)) * 3)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("n", SIZES)
def test_randn_and_normal_float64(seed: int, n: int) -> None:
    f64 = "float64"
    _same(seed, lambda m: m.randn(n, dtype=getattr(m, f64)))
    _same(seed, lambda m: m.empty(n, dtype=getattr(m, f64)).normal_(1.5, 0.7))
    # the scalar path's cached second value carries into the next call
    _same(
        seed,
        lambda m: m.cat(
            [m.randn(3, dtype=m.float64), m.randn(n, dtype=m.float64), m.rand(2, dtype=m.float64)]
        ),
    )


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("n", [1, 2, 3, 7, 15])
def test_randn_float32_scalar_path(seed: int, n: int) -> None:
    _same(seed, lambda m: m.cat([m.randn(n), m.randn(1), m.empty(3).normal_(2.0, 3.0)]))


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("n", [16, 17, 31, 32, 33, 1001, 20000, 100003])
def test_randn_float32_vector_path(seed: int, n: int) -> None:
    # PyTorch's AVX2 Box-Muller (Cephes log/sincos polynomials, fused multiply-adds where
    # GCC fuses them), bit for bit (NOTE [avx2 normal]); 20000 and up draw through the
    # bulk Mersenne Twister (NOTE [bulk mt19937])
    _same(seed, lambda m: m.randn(n))
    _same(seed, lambda m: m.empty(n).normal_(-1.25, 0.3))
    _same(seed, lambda m: m.cat([m.randn(n), m.rand(5), m.randn(3, 7).reshape(-1)]))


@pytest.mark.parametrize("seed", [0, 7])
def test_state_tensor_is_pytorchs(seed: int) -> None:
    torch.manual_seed(seed)
    ember.manual_seed(seed)
    np.testing.assert_array_equal(ember.get_rng_state().numpy(), torch.get_rng_state().numpy())
    torch.randn(5, dtype=torch.float64)  # leaves a cached normal
    ember.randn(5, dtype=ember.float64)
    torch.rand(700)
    ember.rand(700)
    np.testing.assert_array_equal(ember.get_rng_state().numpy(), torch.get_rng_state().numpy())
    # a state moves between the libraries both ways
    state = torch.get_rng_state()
    ember.set_rng_state(ember.from_numpy(state.numpy().copy()))
    want = torch.randn(3, dtype=torch.float64).numpy()
    np.testing.assert_array_equal(ember.randn(3, dtype=ember.float64).numpy(), want)
    torch.set_rng_state(torch.from_numpy(ember.get_rng_state().numpy().copy()))
    np.testing.assert_array_equal(torch.rand(4).numpy(), ember.rand(4).numpy())


def test_generator_objects() -> None:
    tg = torch.Generator().manual_seed(99)
    eg = ember.Generator().manual_seed(99)
    np.testing.assert_array_equal(
        ember.randn(20, dtype=ember.float64, generator=eg).numpy(),
        torch.randn(20, dtype=torch.float64, generator=tg).numpy(),
    )
    np.testing.assert_array_equal(eg.get_state().numpy(), tg.get_state().numpy())
    assert eg.initial_seed() == tg.initial_seed() == 99
    fresh_t, fresh_e = torch.Generator(), ember.Generator()
    np.testing.assert_array_equal(fresh_e.get_state().numpy(), fresh_t.get_state().numpy())


@pytest.mark.parametrize("seed", [0, 3])
def test_uniform_initialised_modules(seed: int) -> None:
    torch.manual_seed(seed)
    ember.manual_seed(seed)
    pairs = [
        (torch.nn.Linear(784, 64), ember.nn.Linear(784, 64)),
        (torch.nn.Conv2d(3, 8, 3), ember.nn.Conv2d(3, 8, 3)),
        (torch.nn.Linear(5, 3, dtype=torch.float64), ember.nn.Linear(5, 3, dtype=ember.float64)),
    ]
    for tm, em in pairs:
        for (tn, tp), (en, ep) in zip(tm.named_parameters(), em.named_parameters(), strict=True):
            assert tn == en
            np.testing.assert_array_equal(ep.detach().numpy(), tp.detach().numpy())


@pytest.mark.parametrize("seed", [0, 3])
@pytest.mark.parametrize("n", [0, 1, 2, 10, 1000, 100000])
def test_randperm(seed: int, n: int) -> None:
    _same(seed, lambda m: m.cat([m.randperm(n).double(), m.rand(3, dtype=m.float64)]))


def test_fork_rng_restores_the_state() -> None:
    torch.manual_seed(5)
    ember.manual_seed(5)
    with torch.random.fork_rng(), ember.random.fork_rng():
        torch.randn(3, dtype=torch.float64)  # also leaves a cached normal
        ember.randn(3, dtype=ember.float64)
    np.testing.assert_array_equal(ember.get_rng_state().numpy(), torch.get_rng_state().numpy())
    _ = torch.rand(2), ember.rand(2)
    np.testing.assert_array_equal(ember.rand(4).numpy(), torch.rand(4).numpy())


@pytest.mark.parametrize(("mean", "std"), [(0.0, 1.0), (0.3, 2.7), (-1.5, 0.01)])
def test_avx2_normal_numpy_path_equals_compiled(mean: float, std: float) -> None:
    # the first small float32 draws of a process run in NumPy (no numba import): the same
    # bits as the compiled loop, which the tests above compare with PyTorch
    from ember.backends.cpu import avx2_normal, avx2_normal_numpy

    raw = np.random.MT19937(3).random_raw(16 * 4000).astype(np.uint32)
    m, s = np.float32(mean), np.float32(std)
    np.testing.assert_array_equal(avx2_normal_numpy.fill(raw, m, s), avx2_normal.fill(raw, m, s))
