"""Random numbers: generators are deterministic, and rand/randn/randint have the right
distributions, dtypes and shapes. The bit-for-bit comparisons with PyTorch's streams are in
tests/test_random_streams.py."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import ember

from .conftest import requires_torch, torch

N = 200_000


def _np(t: ember.Tensor) -> np.ndarray:
    return t.numpy()


# --------------------------------------------------------------------------- determinism


def test_manual_seed_repeats_values() -> None:
    ember.manual_seed(123)
    a = _np(ember.rand(5)).copy(), _np(ember.randn(3, 2)).copy(), _np(ember.randint(9, (4,)))
    ember.manual_seed(123)
    b = _np(ember.rand(5)), _np(ember.randn(3, 2)), _np(ember.randint(9, (4,)))
    for x, y in zip(a, b, strict=True):
        np.testing.assert_array_equal(x, y)
    assert ember.initial_seed() == 123


def test_manual_seed_returns_default_generator() -> None:
    assert ember.manual_seed(5) is ember.default_generator


def test_different_seeds_differ() -> None:
    ember.manual_seed(0)
    a = _np(ember.rand(10)).copy()
    ember.manual_seed(1)
    assert not np.array_equal(a, _np(ember.rand(10)))


def test_generator_is_independent_of_default() -> None:
    g = ember.Generator().manual_seed(7)
    ember.manual_seed(0)
    a = _np(ember.rand(4, generator=g)).copy()
    ember.rand(100)  # draws from the default generator only
    g.manual_seed(7)
    np.testing.assert_array_equal(a, _np(ember.rand(4, generator=g)))


def test_generator_argument_on_every_random_op() -> None:
    x = ember.zeros(2, 3)
    calls = [
        lambda g: ember.rand(2, 3, generator=g),
        lambda g: ember.rand((2, 3), generator=g, dtype=ember.float64),
        lambda g: ember.randn(4, generator=g),
        lambda g: ember.randint(10, (5,), generator=g),
        lambda g: ember.randint(3, 10, (5,), generator=g),
        lambda g: ember.rand_like(x, generator=g),
        lambda g: ember.randn_like(x, generator=g),
        lambda g: ember.randint_like(x, 8, generator=g),
        lambda g: ember.randint_like(x, 2, 8, generator=g),
    ]
    for call in calls:
        first = _np(call(ember.Generator().manual_seed(3))).copy()
        np.testing.assert_array_equal(first, _np(call(ember.Generator().manual_seed(3))))


def test_get_state_set_state_round_trip() -> None:
    g = ember.Generator().manual_seed(11)
    ember.rand(3, generator=g)
    state = g.get_state()
    assert state.dtype is ember.uint8 and state.shape == (5056,)
    a = _np(ember.randn(6, generator=g)).copy()
    g.set_state(state)
    np.testing.assert_array_equal(a, _np(ember.randn(6, generator=g)))
    other = ember.Generator().set_state(state)
    assert other.initial_seed() == 11


def test_rng_state_of_default_generator() -> None:
    state = ember.get_rng_state()
    a = _np(ember.rand(4)).copy()
    ember.set_rng_state(state)
    np.testing.assert_array_equal(a, _np(ember.rand(4)))


def test_set_state_rejects_bad_states() -> None:
    g = ember.Generator()
    with pytest.raises(TypeError):
        g.set_state(ember.zeros(5056))
    with pytest.raises(RuntimeError, match="size 5056"):
        g.set_state(ember.zeros(3, dtype=ember.uint8))


def test_seed_is_fresh_and_recorded() -> None:
    s = ember.seed()
    assert isinstance(s, int) and 0 <= s < 2**64
    assert ember.initial_seed() == s


@requires_torch
def test_initial_seed_default_and_negative_seeds_match_torch() -> None:
    assert ember.Generator().initial_seed() == torch.Generator().initial_seed()
    assert (
        ember.Generator().manual_seed(-1).initial_seed()
        == torch.Generator().manual_seed(-1).initial_seed()
    )
    with pytest.raises(RuntimeError):
        ember.Generator().manual_seed(2**64)
    with pytest.raises(TypeError):
        ember.Generator().manual_seed(1.5)  # type: ignore[arg-type]


def test_generator_device() -> None:
    assert ember.Generator().device == ember.device("cpu")
    assert str(ember.Generator("cpu").device) == "cpu"


def test_meta_draws_do_not_advance_the_generator() -> None:
    g = ember.Generator().manual_seed(4)
    state = _np(g.get_state()).copy()
    out = ember.rand(3, 4, generator=g, device="meta")
    assert out.is_meta and out.shape == (3, 4)
    np.testing.assert_array_equal(state, _np(g.get_state()))


# --------------------------------------------------------------------------- distributions


@pytest.mark.parametrize("dtype", [ember.float16, ember.float32, ember.float64])
def test_rand_is_uniform_in_unit_interval(dtype: Any) -> None:
    x = _np(ember.rand(N, dtype=dtype, generator=ember.Generator().manual_seed(0)))
    assert x.dtype == dtype.np
    assert x.min() >= 0 and x.max() < 1
    x = x.astype(np.float64)
    assert abs(x.mean() - 0.5) < 0.01
    assert abs(x.var() - 1 / 12) < 0.005
    hist, _ = np.histogram(x, bins=10, range=(0, 1))
    assert np.all(np.abs(hist / N - 0.1) < 0.01)


def test_rand_complex_parts_are_uniform() -> None:
    x = _np(ember.rand(N, dtype=ember.complex64))
    for part in (x.real, x.imag):
        assert part.min() >= 0 and part.max() < 1 and abs(part.mean() - 0.5) < 0.01


@pytest.mark.parametrize("dtype", [ember.float16, ember.float32, ember.float64])
def test_randn_is_standard_normal(dtype: Any) -> None:
    x = _np(ember.randn(N, dtype=dtype)).astype(np.float64)
    assert abs(x.mean()) < 0.01
    assert abs(x.std() - 1) < 0.01
    assert abs(np.mean(np.abs(x) < 1) - 0.6827) < 0.01  # the 68% rule
    assert abs(np.mean(x**3)) < 0.05  # symmetric


def test_randn_complex_has_unit_variance() -> None:
    x = _np(ember.randn(N, dtype=ember.complex128))
    assert abs(np.mean(np.abs(x) ** 2) - 1) < 0.02
    assert abs(x.real.var() - 0.5) < 0.01 and abs(x.imag.var() - 0.5) < 0.01


def test_randint_range_and_uniformity() -> None:
    x = _np(ember.randint(3, 10, (N,)))
    assert x.dtype == np.int64
    assert x.min() == 3 and x.max() == 9
    counts = np.bincount(x - 3)
    assert np.all(np.abs(counts / N - 1 / 7) < 0.01)
    y = _np(ember.randint(5, (1000,)))
    assert set(np.unique(y)) == {0, 1, 2, 3, 4}


def test_randint_like_uses_self_dtype() -> None:
    x = ember.zeros(4, 4, dtype=ember.int16)
    r = ember.randint_like(x, 2, 5)
    assert r.dtype is ember.int16 and r.shape == (4, 4)
    assert set(np.unique(_np(r))) <= {2, 3, 4}


# --------------------------------------------------------------------------- vs PyTorch


CASES: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = [
    ("rand", (2, 3), {}),
    ("rand", ((4,),), {"dtype": "float64"}),
    ("rand", ((),), {"dtype": "float16"}),
    ("rand", ((2,),), {"dtype": "complex64"}),
    ("randn", (3,), {}),
    ("randn", ((0, 2),), {"dtype": "float64"}),
    ("randn", ((2,),), {"dtype": "complex128"}),
    ("randint", (10, (3, 2)), {}),
    ("randint", (2, 5, (4,)), {"dtype": "int8"}),
    ("randint", (0, 2, (4,)), {"dtype": "bool"}),
    ("randint", (7, (2,)), {"dtype": "float32"}),
    ("rand", (2,), {"requires_grad": True}),
]


@requires_torch
@pytest.mark.parametrize(("name", "args", "kwargs"), CASES, ids=str)
def test_shapes_and_dtypes_match_torch(
    name: str, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> None:
    ek = {k: getattr(ember, v) if k == "dtype" else v for k, v in kwargs.items()}
    tk = {k: getattr(torch, v) if k == "dtype" else v for k, v in kwargs.items()}
    e, t = getattr(ember, name)(*args, **ek), getattr(torch, name)(*args, **tk)
    assert tuple(e.shape) == tuple(t.shape)
    assert e.dtype.name == str(t.dtype).removeprefix("torch.")
    assert e.requires_grad == t.requires_grad


@requires_torch
@pytest.mark.parametrize("name", ["rand_like", "randn_like"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64"])
def test_like_shapes_and_dtypes_match_torch(name: str, dtype: str) -> None:
    e = getattr(ember, name)(ember.zeros(2, 3, dtype=getattr(ember, dtype)))
    t = getattr(torch, name)(torch.zeros(2, 3, dtype=getattr(torch, dtype)))
    assert tuple(e.shape) == tuple(t.shape) and e.dtype.name == str(t.dtype)[6:]


@requires_torch
@pytest.mark.parametrize(
    ("call", "error"),
    [
        (lambda m: m.rand(2, dtype=m.int64), NotImplementedError),
        (lambda m: m.randn(2, dtype=m.bool), NotImplementedError),
        (lambda m: m.randint(5, 5, (2,)), RuntimeError),
        (lambda m: m.randint(0, 300, (2,), dtype=m.uint8), RuntimeError),
        (lambda m: m.rand_like(m.zeros(2, dtype=m.int32)), NotImplementedError),
    ],
)
def test_errors_match_torch(call: Any, error: type[Exception]) -> None:
    with pytest.raises(error):
        call(torch)
    with pytest.raises(error):
        call(ember)
