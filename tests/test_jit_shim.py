"""``ember.jit`` (its module docstring): TorchScript-style code runs eagerly with the values
PyTorch's scripted code gives; what needs a TorchScript program raises with the fix."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import ember

from .conftest import requires_torch, torch


def _build(lib: Any) -> tuple[Any, Any]:
    @lib.jit.script
    def fused(x, y):  # noqa: ANN001, ANN202 (TorchScript reads annotations)
        return (x * y + 1).relu()

    class Block(lib.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.lin = lib.nn.Linear(3, 2)

        def forward(self, x):  # noqa: ANN001, ANN202
            if lib.jit.is_scripting():
                return self.lin(x)
            return self.helper(self.lin(x))

        @lib.jit.ignore
        def helper(self, x):  # noqa: ANN001, ANN202
            return x

    lib.manual_seed(0)
    return fused, Block()


@requires_torch
def test_scripted_and_traced_code_gives_torchs_values() -> None:
    res = {}
    for lib in (ember, torch):
        fused, block = _build(lib)
        x = lib.from_numpy(np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3).copy())
        scripted = lib.jit.script(block)
        traced = lib.jit.trace(block, (x,))
        fut = lib.jit.fork(fused, x, x)
        res[lib] = [
            fused(x, x).numpy(),
            scripted(x).detach().numpy(),
            traced(x).detach().numpy(),
            lib.jit.wait(fut).numpy(),
            lib.jit.annotate(list[int], [1, 2]),
        ]
        assert isinstance(scripted, lib.nn.Module)
    for a, b in zip(res[ember], res[torch], strict=True):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-6)


def test_script_returns_its_argument_and_flags_are_false() -> None:
    m = ember.nn.Linear(2, 2)
    assert ember.jit.script(m) is m and ember.jit.trace(m, ember.ones(1, 2)) is m
    assert not isinstance(m, ember.jit.ScriptModule)
    assert ember.jit.is_scripting() is False and ember.jit.is_tracing() is False
    assert ember.jit.unused(len) is len and ember.jit.export(len) is len
    assert ember.jit.ignore(drop=True)(len) is len


@pytest.mark.parametrize("name", ["save", "load", "freeze"])
def test_what_needs_a_torchscript_program_raises_with_the_fix(name: str) -> None:
    with pytest.raises(RuntimeError, match=r"ember\.save\(model\.state_dict\(\)"):
        getattr(ember.jit, name)(ember.nn.Linear(1, 1), "x.pt")
