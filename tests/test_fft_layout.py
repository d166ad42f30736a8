"""The strides of fft results against PyTorch's (NOTE [fft result layout]): the three
transforms ``_fft_c2c``/``_fft_r2c``/``_fft_c2r`` on the CPU and Meta kernels for permuted,
sliced and expanded inputs over every choice and order of dims, the public ``ember.fft``
functions, and the lazy device against eager."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

import ember

from .conftest import requires_torch, torch

pytestmark = requires_torch
RNG = np.random.default_rng(19)
Layout = Callable[[Any], Any]


def layouts(shape: tuple[int, ...]) -> Iterator[tuple[str, Layout]]:
    """Every permutation, a sliced last and first dim, a sliced transpose and an expanded
    dim (plain and transposed): the same view ops run on both libraries."""
    n = len(shape)
    for p in itertools.permutations(range(n)):
        yield f"permute{p}", lambda x, p=p: x.permute(*p)
    yield "last[::2]", lambda x: x[..., ::2]
    yield "first[::2]", lambda x: x[::2]
    yield "transpose[1:]", lambda x: x.transpose(0, 1)[1:]
    yield "expand", lambda x: x.narrow(1, 0, 1).expand(*shape)
    yield "expand.T", lambda x: x.narrow(1, 0, 1).expand(*shape).transpose(0, -1)


def data(shape: tuple[int, ...], complex_: bool) -> np.ndarray:
    a = RNG.standard_normal(shape)
    return (a + 1j * RNG.standard_normal(shape)).astype(np.complex64) if complex_ else a


def ops(complex_: bool, lib: Any, x: Any, dims: list[int]) -> dict[str, Any]:
    if not complex_:
        return {f"r2c onesided={o}": lib._fft_r2c(x, dims, 2, o) for o in (True, False)}
    last = 2 * (x.shape[dims[-1]] - 1) or 1
    return {
        "c2c": lib._fft_c2c(x, dims, 1, True),
        "c2c inverse": lib._fft_c2c(x, dims, 0, False),
        "c2r": lib._fft_c2r(x, dims, 0, last),
    }


SHAPES = [(3, 4, 5), (2, 1, 6)]
CASES = [
    pytest.param(shape, name, lay, id=f"{shape}-{name}")
    for shape in SHAPES
    for name, lay in layouts(shape)
]


@pytest.mark.parametrize(("shape", "name", "lay"), CASES)
@pytest.mark.parametrize("complex_", [False, True], ids=["real", "complex"])
def test_transform_strides_match_torch(
    shape: tuple[int, ...], name: str, lay: Layout, complex_: bool
) -> None:
    a = data(shape, complex_)
    t = lay(torch.from_numpy(a))
    if t.numel() == 0:
        pytest.skip("PyTorch's MKL transforms reject empty inputs")
    e, m = lay(ember.from_numpy(a)), lay(ember.from_numpy(a).to("meta"))
    assert e.stride() == m.stride() == t.stride()
    all_dims = [list(c) for r in (1, 2, 3) for c in itertools.permutations(range(len(shape)), r)]
    for dims in all_dims:
        want = ops(complex_, torch, t, dims)
        got, meta = ops(complex_, ember, e, dims), ops(complex_, ember, m, dims)
        for op, w in want.items():
            where = f"{op} over {dims} of {name} {tuple(t.shape)}"
            assert got[op].stride() == w.stride(), where
            assert meta[op].stride() == w.stride() and meta[op].shape == w.shape, where
            np.testing.assert_allclose(got[op].numpy(), w.numpy(), atol=1e-4, err_msg=where)


def test_size_one_dims_order_as_torchs_partition_does() -> None:
    """Equal strides (size-1 dims) tie; PyTorch's partition of the batch dims decides."""
    x = torch.randn(2, 1, 6)
    for p in itertools.permutations(range(3)):
        t = x.permute(*p)
        e = ember.from_numpy(x.numpy()).permute(*p)
        for d in range(3):
            assert ember._fft_r2c(e, [d], 0, True).stride() == (
                torch._fft_r2c(t, [d], 0, True).stride()
            ), (p, d)


def test_empty_dim_list_copies_in_the_inputs_layout() -> None:
    a = data((3, 4, 5), True)
    t, e = torch.from_numpy(a).transpose(0, 2), ember.from_numpy(a).transpose(0, 2)
    r = ember._fft_c2c(e, [], 0, True)
    assert r.stride() == torch._fft_c2c(t, [], 0, True).stride() == (1, 5, 20)
    r.add_(1)  # a copy: the input is unchanged
    np.testing.assert_array_equal(e.numpy(), t.numpy())


PUBLIC = [
    ("fft", {"dim": 0}), ("ifft", {"dim": 1, "n": 5}), ("rfft", {}),
    ("rfft", {"dim": 0, "n": 10}), ("irfft", {"dim": 1}), ("hfft", {"dim": 1}),
    ("ihfft", {"dim": 1}), ("fftn", {}), ("ifftn", {"dim": (2, 0)}), ("rfftn", {}),
    ("irfftn", {"s": (3, 5), "dim": (1, 0)}), ("fft2", {"s": (3, 9)}),
    ("rfft2", {"dim": (0, 2), "norm": "ortho"}), ("irfft2", {"norm": "forward"}),
]  # fmt: skip


@pytest.mark.parametrize(("fn", "kwargs"), PUBLIC, ids=[f"{f}{k}" for f, k in PUBLIC])
def test_public_functions_match_torchs_strides(fn: str, kwargs: dict[str, Any]) -> None:
    real_only = fn in ("rfft", "ihfft", "rfftn", "rfft2")
    for complex_ in (False,) if real_only else (False, True):
        a = data((4, 6, 8), complex_)
        for lay in (lambda x: x.permute(2, 0, 1), lambda x: x[:, ::2]):
            w = getattr(torch.fft, fn)(lay(torch.from_numpy(a)), **kwargs)
            for dev in ("cpu", "meta"):
                g = getattr(ember.fft, fn)(lay(ember.from_numpy(a).to(dev)), **kwargs)
                assert g.stride() == w.stride(), (fn, kwargs, complex_, dev)


def test_lazy_results_have_eager_strides() -> None:
    a = data((4, 6, 8), False)
    x = ember.from_numpy(a).permute(2, 0, 1)
    for f in (
        lambda v: ember.fft.rfft(v, dim=0),
        lambda v: ember.fft.irfft(ember.fft.fftn(v, dim=(0, 2)), dim=1),
        lambda v: ember.fft.fft(v, dim=2).abs() + 1,
    ):
        eager = f(x)
        lazy = f(x.to("lazy"))
        assert lazy.stride() == eager.stride()
        np.testing.assert_allclose(lazy.to("cpu").numpy(), eager.numpy(), atol=1e-9)
