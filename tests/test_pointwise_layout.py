"""Pointwise results take PyTorch's strides (NOTE [pointwise result layout]) on the CPU and
Meta kernels alike: every pair of operand layouts from contiguous, transposed, permuted,
expanded, broadcast, sliced, channels-last and size-1-dim ones, for binary and ternary ops,
unary ops and Python-number operands; the lazy device agrees with eager."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import ember

from .conftest import requires_torch, torch

pytestmark = requires_torch
S = (2, 3, 4, 5)
RNG = np.random.default_rng(20)


def _cl(x: Any) -> Any:
    lib = torch if isinstance(x, torch.Tensor) else ember
    return x.contiguous(memory_format=lib.channels_last)


#: the same view ops on both libraries (operands of shape S or broadcasting to it)
LAYOUTS: dict[str, Callable[[Any], Any]] = {
    "contiguous": lambda x: x,
    "transposed": lambda x: x.transpose(2, 3).contiguous().transpose(2, 3),
    "transposed01": lambda x: x.transpose(0, 1).contiguous().transpose(0, 1),
    "permuted": lambda x: x.permute(3, 1, 0, 2).contiguous().permute(2, 1, 3, 0),
    "expanded": lambda x: x[:, :1].expand(*S),
    "row": lambda x: x[0, 0, 0],
    "column": lambda x: x[0, :, :, :1],
    "sliced": lambda x: x.repeat(1, 1, 1, 2)[..., ::2],
    "channels_last": _cl,
    "size1dims": lambda x: x[:1, :, :1].transpose(0, 2),
    "cl-expanded": lambda x: _cl(x[:, :, :1]).expand(*S),
    "odd-size1": lambda x: x[:, :1].as_strided((2, 1, 4, 5), (20, 100, 5, 1)),
}
PAIRS = list(itertools.product(LAYOUTS, LAYOUTS))
BINARY: dict[str, Callable[[Any, Any, Any], Any]] = {
    "add": lambda L, x, y: x + y,
    "sub alpha": lambda L, x, y: L.sub(x, y, alpha=2),
    "mul": lambda L, x, y: x * y,
    "floor div": lambda L, x, y: L.div(x, y, rounding_mode="floor"),
    "gt": lambda L, x, y: x > y,
    "maximum": lambda L, x, y: L.maximum(x, y),
    "atan2": lambda L, x, y: L.atan2(x, y),
    "where": lambda L, x, y: L.where(y > 0, x, y),
    "lerp": lambda L, x, y: L.lerp(x, y, 0.25),
    "lerp tensor weight": lambda L, x, y: L.lerp(y, x, x),
    "addcmul": lambda L, x, y: L.addcmul(x, y, x, value=0.5),
    "addcdiv": lambda L, x, y: L.addcdiv(y, x, y),
    "clamp min": lambda L, x, y: L.clamp(x, min=y),
    "int + float": lambda L, x, y: (x * 4).to(L.int64) + y,
}


def operands(lib: Any, device: str = "cpu") -> tuple[Any, Any]:
    a, b = _DATA
    if lib is torch:
        return torch.from_numpy(a), torch.from_numpy(b)
    return ember.from_numpy(a).to(device), ember.from_numpy(b).to(device)


_DATA = (RNG.standard_normal(S).astype(np.float32), RNG.standard_normal(S).astype(np.float32))


@pytest.mark.parametrize("op", list(BINARY))
def test_binary_and_ternary_results_take_torchs_strides(op: str) -> None:
    fn = BINARY[op]
    ta, tb = operands(torch)
    wrong = []
    for dev in ("cpu", "meta"):
        ea, eb = operands(ember, dev)
        for n1, n2 in PAIRS:
            tx, ty = LAYOUTS[n1](ta), LAYOUTS[n2](tb)
            ex, ey = LAYOUTS[n1](ea), LAYOUTS[n2](eb)
            assert ex.stride() == tx.stride() and ey.stride() == ty.stride(), (n1, n2)
            want, got = fn(torch, tx, ty), fn(ember, ex, ey)
            if got.stride() != want.stride() or tuple(got.shape) != tuple(want.shape):
                wrong.append(f"{dev} {n1} {op} {n2}: {got.stride()}, torch {want.stride()}")
            elif dev == "cpu":
                np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-6)
    assert not wrong, f"{len(wrong)} of {2 * len(PAIRS)}:\n" + "\n".join(wrong[:20])


UNARY: dict[str, Callable[[Any, Any], Any]] = {
    "exp": lambda L, x: x.exp(),
    "neg": lambda L, x: -x,
    "times 2": lambda L, x: x * 2,
    "2 minus": lambda L, x: 2 - x,
    "add scalar alpha": lambda L, x: L.add(x, 2, alpha=3),
    "pow 2": lambda L, x: x**2,
    "2 pow": lambda L, x: 2**x,
    "clamp": lambda L, x: L.clamp(x, 0, 0.5),
    "gt 0": lambda L, x: x > 0,
    "to int": lambda L, x: x.to(L.int32),
}


@pytest.mark.parametrize("op", list(UNARY))
def test_one_tensor_operand_results_take_torchs_strides(op: str) -> None:
    """One tensor, with or without a Python number (which PyTorch wraps as an operand)."""
    fn = UNARY[op]
    ta, _ = operands(torch)
    wrong = []
    for dev in ("cpu", "meta"):
        ea, _ = operands(ember, dev)
        for name, lay in LAYOUTS.items():
            want, got = fn(torch, lay(ta)), fn(ember, lay(ea))
            if got.stride() != want.stride():
                wrong.append(f"{dev} {name}: {got.stride()}, torch {want.stride()}")
    assert not wrong, "\n".join(wrong)


def test_first_operand_decides_between_layouts() -> None:
    a = ember.ones(3, 4)
    t = ember.ones(4, 3).t()
    assert (t + a).stride() == (1, 3) and (a + t).stride() == (4, 1)
    assert (t.to("meta") + a.to("meta")).stride() == (1, 3)


def test_lazy_results_have_eager_strides() -> None:
    ea, eb = operands(ember)
    for n1, n2 in [("transposed", "contiguous"), ("channels_last", "sliced"), ("row", "permuted")]:
        x, y = LAYOUTS[n1](ea), LAYOUTS[n2](eb)
        eager = ember.where(x > y, x * y + 1, y)
        lx, ly = x.to("lazy"), y.to("lazy")
        lazy = ember.where(lx > ly, lx * ly + 1, ly)
        assert lazy.stride() == eager.stride(), (n1, n2)
        np.testing.assert_array_equal(lazy.to("cpu").numpy(), eager.numpy())
