"""ember's random draws beyond uniform and normal against PyTorch's CPU ones, bit for bit
(``np.array_equal``): integers, Bernoulli (and so dropout), exponential, geometric, Cauchy,
log-normal, multinomial, normal with tensor arguments, the data samplers and the
distributions' ``sample()``; each followed by a check that the streams are still aligned."""

from __future__ import annotations

import pathlib
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch", reason="PyTorch is the oracle for its random streams")

SEEDS = [0, 12345, -5]
SIZES = [1, 15, 16, 17, 1001]


def _intel_mkl() -> bool:
    """PyTorch's ``bernoulli_(float)`` uses MKL's own generator on Intel CPUs (NOTE [torch
    draws]); ember follows the kernel PyTorch uses everywhere else."""
    try:
        info = pathlib.Path("/proc/cpuinfo").read_text()
    except OSError:
        return False
    return torch.backends.mkl.is_available() and "GenuineIntel" in info


mkl_bernoulli = pytest.mark.skipif(
    _intel_mkl(), reason="PyTorch draws bernoulli_(float) from MKL's generator on Intel CPUs"
)


def _np(x: Any) -> np.ndarray:
    return x.numpy() if hasattr(x, "numpy") else np.asarray(x)


def _same(seed: int, draw: Callable[[Any], Any], ulp: bool = False) -> None:
    """Equal values, and the streams still aligned after; ``ulp``: within 2 float32 ulp (a
    float32 ``log1p``/``exp`` applied to the draws, whose last bit NumPy and PyTorch's
    vectorised math may round differently)."""
    torch.manual_seed(seed)
    ember.manual_seed(seed)
    want, got = _np(draw(torch)), _np(draw(ember))
    assert want.dtype == got.dtype and want.shape == got.shape
    if ulp:
        np.testing.assert_array_max_ulp(got, want, maxulp=2)
    else:
        np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(ember.rand(3).numpy(), torch.rand(3).numpy())


def _t(m: Any, a: np.ndarray) -> Any:
    return m.from_numpy(np.ascontiguousarray(a))


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("n", SIZES)
def test_integers(seed: int, n: int) -> None:
    _same(seed, lambda m: m.randint(-5, 7, (n,)))
    _same(seed, lambda m: m.randint(0, 2**40, (2, n)))  # a range of 2^32 or more: random64
    _same(seed, lambda m: m.randint(3, 2**20, (n,), dtype=m.int32))
    _same(seed, lambda m: m.empty(n, dtype=m.int64).random_())
    _same(seed, lambda m: m.empty(n, dtype=m.int64).random_(-(2**63), None))
    _same(seed, lambda m: m.empty(n, dtype=m.uint8).random_())
    _same(seed, lambda m: m.empty(n).random_())
    _same(seed, lambda m: m.empty(n, dtype=m.float64).random_(10))
    _same(seed, lambda m: m.empty(n, dtype=m.bool).random_())


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("span", [2**28 - 1, 2**28, 2**31, 2**32 - 1])
def test_integer_ranges_around_the_wide_threshold(seed: int, span: int) -> None:
    # randint and random_(from, to) take one 64-bit draw per value from a range of 2^28
    # (not 2^32); random_() of a 32-bit dtype still takes one 32-bit draw
    _same(seed, lambda m: m.randint(0, span, (17,)))
    _same(seed, lambda m: m.randint(-7, span - 7, (17,)))
    _same(seed, lambda m: m.empty(17, dtype=m.float64).random_(5, span + 5))
    if span < 2**31:
        _same(seed, lambda m: m.empty(17, dtype=m.int32).random_(span))
    _same(seed, lambda m: m.empty(17, dtype=m.int32).random_())
    _same(seed, lambda m: m.empty(17, dtype=m.bfloat16).random_().float())


@mkl_bernoulli
@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("n", SIZES)
def test_bernoulli_and_dropout(seed: int, n: int) -> None:
    x = np.random.default_rng(n).standard_normal(n).astype(np.float32)
    _same(seed, lambda m: m.empty(n).bernoulli_(0.3))
    _same(seed, lambda m: m.bernoulli(m.ones(2, n), 0.7))
    _same(seed, lambda m: m.nn.functional.dropout(_t(m, x), 0.3))
    _same(seed, lambda m: m.nn.functional.dropout(_t(m, x.astype(np.float64)), 0.1))
    _same(seed, lambda m: m.nn.Dropout(0.5)(_t(m, x)))
    _same(seed, lambda m: m.nn.functional.dropout2d(m.ones(2, n, 3, 3), 0.4))
    cube = x.reshape(1, 1, n)
    _same(seed, lambda m: m.nn.functional.alpha_dropout(_t(m, cube), 0.2, training=True))
    _same(seed, lambda m: m.nn.functional.feature_alpha_dropout(m.ones(3, n, 2), 0.2, True))
    _same(seed, lambda m: m.nn.functional.dropout1d(m.ones(3, n, 2), 0.6))


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("n", SIZES)
def test_bernoulli_tensor(seed: int, n: int) -> None:
    p = np.random.default_rng(n).random((2, n))
    _same(seed, lambda m: m.bernoulli(_t(m, p.astype(np.float32))))  # float uniforms
    _same(seed, lambda m: m.bernoulli(_t(m, p)))  # double uniforms
    _same(seed, lambda m: m.empty(3, 2, n).bernoulli_(_t(m, p[0])))  # broadcast p


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dt", ["float32", "float64"])
def test_continuous(seed: int, n: int, dt: str) -> None:
    _same(seed, lambda m: m.empty(n, dtype=getattr(m, dt)).exponential_(0.7))
    _same(seed, lambda m: m.empty(n, dtype=getattr(m, dt)).geometric_(0.2))
    _same(seed, lambda m: m.empty(n, dtype=getattr(m, dt)).cauchy_(0.7, 0.3))
    _same(seed, lambda m: m.empty(n, dtype=getattr(m, dt)).log_normal_(0.3, 0.6))
    # log_normal's cached second normal carries into a following float64 randn
    _same(seed, lambda m: m.cat([m.empty(n).log_normal_().double(), m.randn(2, dtype=m.float64)]))


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("n", SIZES)
def test_normal_with_tensor_arguments(seed: int, n: int) -> None:
    rng = np.random.default_rng(n)
    mean = rng.standard_normal(n).astype(np.float32)
    std = (rng.random(n) + 0.5).astype(np.float32)
    _same(seed, lambda m: m.normal(_t(m, mean), _t(m, std)))
    _same(seed, lambda m: m.normal(_t(m, mean), 0.3))
    _same(seed, lambda m: m.normal(0.4, _t(m, std)))
    _same(seed, lambda m: m.normal(_t(m, mean.astype(np.float64)), _t(m, std.astype(np.float64))))


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("cats", [1, 5, 17, 300])
def test_multinomial(seed: int, cats: int) -> None:
    w = np.random.default_rng(cats).random((3, cats)) + 0.01
    w32 = w.astype(np.float32)
    _same(seed, lambda m: m.multinomial(_t(m, w32), 9, True))
    _same(seed, lambda m: m.multinomial(_t(m, w), 9, True))
    _same(seed, lambda m: m.multinomial(_t(m, w32[0]), 1))
    _same(seed, lambda m: m.multinomial(_t(m, w32), min(cats, 4)))
    _same(seed, lambda m: m.multinomial(_t(m, w), min(cats, 4)))


def _listed(loader: Any) -> list[Any]:
    return [b.tolist() for b in loader]


@pytest.mark.parametrize("seed", [0, 3])
@pytest.mark.parametrize("n", [5, 17, 100])
def test_samplers(seed: int, n: int) -> None:
    def same(draw: Callable[[Any], Any]) -> None:
        torch.manual_seed(seed)
        ember.manual_seed(seed)
        assert draw(ember) == draw(torch)
        np.testing.assert_array_equal(ember.rand(3).numpy(), torch.rand(3).numpy())

    data = list(range(n))
    same(lambda m: [_listed(m.utils.data.DataLoader(data, batch_size=4, shuffle=True))] * 1)
    same(lambda m: [_listed(m.utils.data.DataLoader(data, batch_size=3, shuffle=True))] * 2)
    g = 77
    same(
        lambda m: _listed(
            m.utils.data.DataLoader(data, batch_size=2, shuffle=True, generator=m.Generator())
        )
    )
    same(lambda m: list(m.utils.data.RandomSampler(data, replacement=True, num_samples=70)))
    same(lambda m: list(m.utils.data.RandomSampler(data, num_samples=2 * n + 3)))
    same(lambda m: [list(s) for s in m.utils.data.random_split(data, [0.5, 0.3, 0.2])])
    same(
        lambda m: [
            list(s)
            for s in m.utils.data.random_split(data, [0.5, 0.5], m.Generator().manual_seed(g))
        ]
    )
    same(lambda m: list(m.utils.data.SubsetRandomSampler(data[::2])))
    same(lambda m: list(m.utils.data.WeightedRandomSampler([0.1, 0.5, 0.2, 0.0, 0.9], 13)))
    same(lambda m: list(m.utils.data.WeightedRandomSampler([0.1, 0.5, 0.2, 0.9], 3, False)))


@pytest.mark.parametrize("seed", [0, 9])
def test_distributions_sample(seed: int) -> None:
    def d(m: Any) -> Any:
        return m.distributions

    loc = np.array([0.5, -1.0, 2.0], np.float32)
    scale = np.array([1.0, 0.3, 2.0], np.float32)
    probs = np.array([0.2, 0.5, 0.3], np.float32)
    _same(seed, lambda m: d(m).Normal(_t(m, loc), _t(m, scale)).sample((7,)))
    _same(seed, lambda m: d(m).Normal(_t(m, loc), _t(m, scale)).rsample((7,)))
    _same(seed, lambda m: d(m).Uniform(_t(m, loc), _t(m, loc + 1)).sample((7,)))
    _same(seed, lambda m: d(m).Bernoulli(_t(m, probs)).sample((7,)))
    _same(seed, lambda m: d(m).Categorical(_t(m, probs)).sample((7, 2)))
    _same(seed, lambda m: d(m).Exponential(_t(m, scale)).sample((7,)))
    _same(seed, lambda m: d(m).Poisson(_t(m, scale * 4)).sample((7,)))
    _same(seed, lambda m: d(m).Laplace(_t(m, loc), _t(m, scale)).sample((7,)), ulp=True)
    _same(seed, lambda m: d(m).OneHotCategorical(_t(m, probs)).sample((5,)))
    _same(seed, lambda m: d(m).LogNormal(_t(m, loc), _t(m, scale)).sample((7,)), ulp=True)


@pytest.mark.parametrize("seed", [0, 4])
@pytest.mark.parametrize("shape", [(3, 5), (17, 16), (64, 33)])
def test_init_functions(seed: int, shape: tuple[int, int]) -> None:
    def init(name: str, *args: Any, **kw: Any) -> Callable[[Any], Any]:
        return lambda m: getattr(m.nn.init, name)(m.empty(shape), *args, **kw).detach()

    for name, args, kw in [
        ("uniform_", (-0.3, 0.2), {}),
        ("normal_", (0.1, 0.02), {}),
        ("xavier_uniform_", (), {"gain": 1.5}),
        ("xavier_normal_", (), {}),
        ("kaiming_uniform_", (), {"a": 5**0.5}),
        ("kaiming_normal_", (), {"nonlinearity": "relu", "mode": "fan_out"}),
        ("sparse_", (0.3,), {}),
    ]:
        _same(seed, init(name, *args, **kw))
    # rejection sampling: normals redrawn out of bounds; uniforms accepted by a log test
    _same(seed, init("trunc_normal_", std=0.5, a=-0.6, b=0.7))
    _same(seed, init("trunc_normal_", mean=0.2, std=1.0, a=2.0, b=2.5))
    # the same normal draws; the QR is LAPACK's in both, up to rounding
    torch.manual_seed(seed)
    ember.manual_seed(seed)
    want = torch.nn.init.orthogonal_(torch.empty(shape), gain=2.0).numpy()
    got = ember.nn.init.orthogonal_(ember.empty(shape), gain=2.0).numpy()
    np.testing.assert_allclose(got, want, atol=2e-5)
    np.testing.assert_array_equal(ember.rand(3).numpy(), torch.rand(3).numpy())


@pytest.mark.parametrize("seed", [0, 4])
def test_module_initialisation(seed: int) -> None:
    def build(m: Any) -> Any:
        return m.nn.Sequential(
            m.nn.Embedding(50, 16),
            m.nn.Linear(16, 33),
            m.nn.LayerNorm(33),
            m.nn.MultiheadAttention(33, 3),
            m.nn.LSTM(33, 8),
            m.nn.Conv1d(4, 6, 3),
            m.nn.BatchNorm1d(6),
        )

    torch.manual_seed(seed)
    ember.manual_seed(seed)
    tm, em = build(torch), build(ember)
    tp, ep = dict(tm.named_parameters()), dict(em.named_parameters())
    assert tp.keys() == ep.keys()
    for name, p in tp.items():
        np.testing.assert_array_equal(ep[name].detach().numpy(), p.detach().numpy(), name)
    np.testing.assert_array_equal(ember.rand(3).numpy(), torch.rand(3).numpy())


@mkl_bernoulli
@pytest.mark.parametrize("seed", [0, 7])
def test_non_contiguous_fills(seed: int) -> None:
    # PyTorch fills a non-contiguous tensor in its memory order, and normal_ takes the
    # scalar path there whatever the size
    def view(m: Any, dt: str = "float32") -> Any:
        return m.empty(5, 20, dtype=getattr(m, dt)).t()

    _same(seed, lambda m: view(m).normal_(0.5, 2.0))
    _same(seed, lambda m: view(m, "float64").normal_())
    _same(seed, lambda m: m.empty(40)[::2].normal_())
    _same(seed, lambda m: view(m).uniform_(-1, 1))
    _same(seed, lambda m: view(m).exponential_())
    _same(seed, lambda m: view(m).bernoulli_(0.4))
    _same(seed, lambda m: view(m, "int64").random_(0, 9))
    _same(seed, lambda m: m.empty(2, 3, 4).permute(2, 0, 1).cauchy_())
