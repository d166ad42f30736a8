"""``ember.fft`` against ``torch.fft``: output dtypes, every norm with ``n``/``s`` cutting and
padding, batched and complex inputs, gradients (PyTorch's and finite differences), round trips,
what ``__torch_dispatch__`` sees (NOTE [fft decompositions]), errors, the lazy device and a
filtering program."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import ember
from ember.autograd import gradcheck

from .conftest import dispatched_ops, raises_as_torch, requires_torch, torch

pytestmark = requires_torch
RNG = np.random.default_rng(30)

NAMES = (
    "fft ifft rfft irfft hfft ihfft fft2 ifft2 rfft2 irfft2 fftn ifftn rfftn irfftn fftfreq "
    "rfftfreq fftshift ifftshift"
).split()
NORMS = (None, "backward", "ortho", "forward")


def rand(*shape: int, complex_: bool = False) -> np.ndarray:
    a = RNG.standard_normal(shape)
    return a + 1j * RNG.standard_normal(shape) if complex_ else a


def close(e: Any, t: Any, atol: float = 1e-9) -> None:
    assert tuple(e.shape) == tuple(t.shape), (e.shape, t.shape)
    assert e.dtype.name == str(t.dtype).removeprefix("torch."), (e.dtype, t.dtype)
    np.testing.assert_allclose(
        e.detach().numpy(), t.detach().resolve_conj().numpy(), atol=atol, rtol=1e-6
    )


def agree(ef: Callable[..., Any], tf: Callable[..., Any], *arrays: np.ndarray) -> None:
    """Values, and gradients for a random (complex, where the output is) cotangent."""
    e = [ember.from_numpy(a.copy()).requires_grad_() for a in arrays]
    t = [torch.from_numpy(a.copy()).requires_grad_() for a in arrays]
    eo, to = ef(*e), tf(*t)
    close(eo, to)
    c = RNG.standard_normal(tuple(to.shape))
    if to.is_complex():
        c = c + 1j * RNG.standard_normal(tuple(to.shape))
    c = np.asarray(c, to.detach().resolve_conj().numpy().dtype)
    eg = ember.autograd.grad([eo], e, [ember.from_numpy(c)])
    tg = torch.autograd.grad([to], t, [torch.from_numpy(c.copy())])
    for a, b in zip(eg, tg, strict=True):
        close(a, b)


def test_namespace_mirrors_torch_fft() -> None:
    for name in NAMES:
        assert getattr(ember.fft, name).__name__ == getattr(torch.fft, name).__name__
    assert sorted(ember.fft.__all__) == sorted(NAMES)


@pytest.mark.parametrize(
    ("dtype", "expected"),
    [("float32", "complex64"), ("float64", "complex128"), ("int64", "complex64"),
     ("bool", "complex64"), ("complex64", "complex64"), ("complex128", "complex128")],
)  # fmt: skip
def test_output_dtypes_follow_torch(dtype: str, expected: str) -> None:
    x = np.arange(8) % 3
    e = ember.from_numpy(x).to(getattr(ember, dtype))
    t = torch.from_numpy(x).to(getattr(torch, dtype))
    for name in ("fft", "ifft", "fftn", "ifft2"):
        arg = e.reshape(2, 4) if name == "ifft2" else e
        targ = t.reshape(2, 4) if name == "ifft2" else t
        r, tr = getattr(ember.fft, name)(arg), getattr(torch.fft, name)(targ)
        assert r.dtype.name == expected == str(tr.dtype).removeprefix("torch.")
        close(r, tr, atol=1e-5)
    if "complex" not in dtype:
        assert ember.fft.rfft(e).dtype.name == expected
        assert ember.fft.irfft(ember.fft.rfft(e)).dtype.name == expected.replace(
            "complex128", "float64"
        ).replace("complex64", "float32")


ONE_DIM = [(name, norm, n) for name in ("fft", "ifft", "rfft", "ihfft") for norm in NORMS
           for n in (None, 6, 11)]  # fmt: skip


@pytest.mark.parametrize(("name", "norm", "n"), ONE_DIM)
def test_real_one_dim_transforms(name: str, norm: str | None, n: int | None) -> None:
    x = rand(3, 9)
    agree(
        lambda a: getattr(ember.fft, name)(a, n=n, dim=-1, norm=norm),
        lambda a: getattr(torch.fft, name)(a, n=n, dim=-1, norm=norm),
        x,
    )


@pytest.mark.parametrize("name", ["fft", "ifft", "irfft", "hfft"])
@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("n", [None, 7, 12])
def test_complex_one_dim_transforms(name: str, norm: str | None, n: int | None) -> None:
    x = rand(4, 6, complex_=True)
    agree(
        lambda a: getattr(ember.fft, name)(a, n=n, dim=0, norm=norm),
        lambda a: getattr(torch.fft, name)(a, n=n, dim=0, norm=norm),
        x,
    )


@pytest.mark.parametrize("name", ["fft2", "ifft2", "rfft2", "irfft2", "fftn", "ifftn", "rfftn",
                                  "irfftn"])  # fmt: skip
@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("s", [None, (5, 4), (3, 9)])
def test_n_dim_transforms(name: str, norm: str | None, s: Any) -> None:
    complex_ = name.startswith("i") and "rfft" in name
    x = rand(2, 4, 6, complex_=complex_)
    agree(
        lambda a: getattr(ember.fft, name)(a, s=s, norm=norm),
        lambda a: getattr(torch.fft, name)(a, s=s, norm=norm),
        x,
    )


@pytest.mark.parametrize("dim", [(0,), (2, 0), (-1, 1, 0)])
def test_n_dim_transforms_over_chosen_dims(dim: tuple[int, ...]) -> None:
    x, z = rand(3, 4, 5), rand(3, 4, 5, complex_=True)
    for name in ("fftn", "ifftn", "rfftn"):
        ef, tf = getattr(ember.fft, name), getattr(torch.fft, name)
        agree(lambda a, ef=ef: ef(a, dim=dim), lambda a, tf=tf: tf(a, dim=dim), x)
    agree(lambda a: ember.fft.irfftn(a, dim=dim), lambda a: torch.fft.irfftn(a, dim=dim), z)


@pytest.mark.parametrize("name", ["fft", "rfft", "ihfft"])
def test_gradcheck_real_inputs(name: str) -> None:
    x = ember.from_numpy(rand(2, 7)).requires_grad_()
    fn = getattr(ember.fft, name)
    assert gradcheck(lambda a: ember.view_as_real(fn(a, norm="ortho")), [x])


@pytest.mark.parametrize("name", ["irfft", "hfft", "irfftn"])
def test_gradcheck_half_spectrum_inputs(name: str) -> None:
    """A real input promoted to complex: its gradient is the real part, which finite
    differences of the real values check."""
    x = ember.from_numpy(rand(3, 5)).requires_grad_()
    assert gradcheck(lambda a: getattr(ember.fft, name)(a, norm="forward"), [x])


def test_round_trips() -> None:
    x = ember.from_numpy(rand(4, 10))
    np.testing.assert_allclose(ember.fft.irfft(ember.fft.rfft(x), n=10).numpy(), x.numpy())
    np.testing.assert_allclose(ember.fft.ifftn(ember.fft.fftn(x)).real.numpy(), x.numpy())
    np.testing.assert_allclose(
        ember.fft.irfftn(ember.fft.rfftn(x, norm="ortho"), s=x.shape, norm="ortho").numpy(),
        x.numpy(),
    )
    np.testing.assert_allclose(ember.fft.ifftshift(ember.fft.fftshift(x)).numpy(), x.numpy())
    np.testing.assert_allclose(ember.fft.hfft(ember.fft.ihfft(x), n=10).numpy(), x.numpy())


def test_frequencies_and_shifts() -> None:
    for n, d in ((1, 1.0), (5, 1.0), (8, 0.1), (0, 2.0)):
        close(ember.fft.fftfreq(n, d), torch.fft.fftfreq(n, d))
        np.testing.assert_array_equal(
            ember.fft.rfftfreq(n, d).numpy(), torch.fft.rfftfreq(n, d).numpy()
        )
    f = ember.fft.fftfreq(6, dtype=ember.float64, requires_grad=True)
    assert f.dtype is ember.float64 and f.requires_grad
    x = np.arange(30.0).reshape(5, 6)
    for dim in (None, 0, (1,), (0, 1)):
        close(
            ember.fft.fftshift(ember.from_numpy(x), dim),
            torch.fft.fftshift(torch.from_numpy(x), dim),
        )
        close(
            ember.fft.ifftshift(ember.from_numpy(x), dim),
            torch.fft.ifftshift(torch.from_numpy(x), dim),
        )


ERRORS = [
    ("float16", lambda m: m.fft.fft(m.ones(4, dtype=m.float16))),
    ("n=0", lambda m: m.fft.fft(m.ones(4), n=0)),
    ("norm", lambda m: m.fft.fft(m.ones(4), norm="bad")),
    ("rfft complex", lambda m: m.fft.rfft(m.ones(4, dtype=m.complex64))),
    ("ihfft complex", lambda m: m.fft.ihfft(m.ones(4, dtype=m.complex64))),
    ("irfft one point", lambda m: m.fft.irfft(m.ones(1, dtype=m.complex64))),
    ("dim", lambda m: m.fft.fft(m.ones(4), dim=2)),
    ("0-dim", lambda m: m.fft.fft(m.tensor(1.0))),
    ("s and dim", lambda m: m.fft.fftn(m.ones(4, 4), s=(2,), dim=(0, 1))),
    ("repeated dims", lambda m: m.fft.fftn(m.ones(4, 4), dim=(0, 0))),
    ("fft2 of 1-D", lambda m: m.fft.fft2(m.ones(4))),
    ("fftfreq int", lambda m: m.fft.fftfreq(4, dtype=m.int64)),
    ("fftshift 0-dim", lambda m: m.fft.fftshift(m.tensor(1.0))),
]


@pytest.mark.parametrize(("name", "call"), ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_match_torch(name: str, call: Any) -> None:
    raises_as_torch(call)


DISPATCHED = [
    ("fft real", lambda m, x, z: m.fft.fft(x)),
    ("fft complex", lambda m, x, z: m.fft.fft(z)),
    ("fft n pads", lambda m, x, z: m.fft.fft(x, n=12)),
    ("fft n cuts", lambda m, x, z: m.fft.fft(x, n=5, norm="ortho")),
    ("ifft real", lambda m, x, z: m.fft.ifft(x)),
    ("rfft", lambda m, x, z: m.fft.rfft(x, n=10)),
    ("irfft", lambda m, x, z: m.fft.irfft(z, n=10)),
    ("hfft", lambda m, x, z: m.fft.hfft(z)),
    ("ihfft", lambda m, x, z: m.fft.ihfft(x)),
    ("fft2 real", lambda m, x, z: m.fft.fft2(x.reshape(2, 4))),
    ("fftn s", lambda m, x, z: m.fft.fftn(x.reshape(2, 4), s=(1, 6))),
    ("rfftn dim", lambda m, x, z: m.fft.rfftn(x.reshape(2, 4), dim=(0,))),
    ("irfftn s", lambda m, x, z: m.fft.irfftn(z.reshape(2, 4), s=(2, 5))),
    ("fftshift", lambda m, x, z: m.fft.fftshift(x.reshape(2, 4))),
    ("ifftshift dim", lambda m, x, z: m.fft.ifftshift(x.reshape(2, 4), dim=1)),
    ("int input", lambda m, x, z: m.fft.fft(m.arange(4))),
]


@pytest.mark.parametrize(("name", "call"), DISPATCHED, ids=[d[0] for d in DISPATCHED])
def test_torch_dispatch_sees_torchs_ops(name: str, call: Any) -> None:
    """The same ops as on PyTorch, except that ember's conjugate is ``_conj_physical``
    where PyTorch sets a lazy conjugate bit with ``_conj`` (NOTE [complex views])."""
    x, z = rand(8), rand(8, complex_=True)
    tx, tz = torch.from_numpy(x), torch.from_numpy(z)
    seen = dispatched_ops(torch, lambda: call(torch, tx, tz))
    seen = [name.replace("aten._conj.default", "aten._conj_physical.default") for name in seen]
    ex, ez = ember.from_numpy(x), ember.from_numpy(z)  # outside the mode, as torch's are
    # (from_numpy inside a mode shows lift_fresh, on both)
    assert dispatched_ops(ember, lambda: call(ember, ex, ez)) == seen


def test_lazy_device() -> None:
    x = rand(3, 16)
    lx = ember.from_numpy(x).to("lazy").requires_grad_()
    y = ember.fft.irfft(ember.fft.rfft(lx) * 2, n=16)
    y.sum().backward()
    np.testing.assert_allclose(y.to("cpu").detach().numpy(), 2 * x, atol=1e-12)
    np.testing.assert_allclose(lx.grad.to("cpu").numpy(), np.full(x.shape, 2.0), atol=1e-12)


def test_program_rfft_filter_irfft() -> None:
    """Low-pass filtering by rfft, a smooth spectral weight, irfft: values and gradients
    (of the signal and of the weights) against PyTorch."""
    signal, weights = rand(4, 64), rand(33)

    def program(m: Any, s: Any, w: Any) -> Any:
        spec = m.fft.rfft(s, norm="ortho")
        filtered = spec * m.sigmoid(w)
        out = m.fft.irfft(filtered, n=64, norm="ortho")
        return (out**2).sum() + m.fft.fft2(out.reshape(4, 8, 8)).abs().mean()

    agree(lambda s, w: program(ember, s, w), lambda s, w: program(torch, s, w), signal, weights)
