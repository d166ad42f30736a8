"""``nn.modules.module.register_module_forward_pre_hook`` / ``register_module_forward_hook``
(NOTE [global module hooks]): every module runs them, before its own, as PyTorch's."""

from __future__ import annotations

from typing import Any

import pytest

import ember

from .conftest import torch

LIBS = [ember, torch] if torch is not None else [ember]


def _order(lib: Any) -> list[tuple[str, str]]:
    mm = lib.nn.modules.module
    seen: list[tuple[str, str]] = []
    h1 = mm.register_module_forward_pre_hook(lambda m, a: seen.append(("pre", type(m).__name__)))
    h2 = mm.register_module_forward_hook(lambda m, a, o: seen.append(("post", type(m).__name__)))
    net = lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.ReLU())
    net[0].register_forward_hook(lambda m, a, o: seen.append(("own", "Linear")))
    try:
        net(lib.ones(1, 2))
    finally:
        h1.remove()
        h2.remove()
    net(lib.ones(1, 2))  # removed: only the module's own hook runs
    return seen


def test_global_hooks_run_in_torchs_order() -> None:
    mine = _order(ember)
    assert mine[0] == ("pre", "Sequential") and mine[-1] == ("own", "Linear")
    if torch is not None:
        assert mine == _order(torch)


@pytest.mark.parametrize("lib", LIBS, ids=lambda m: m.__name__)
def test_global_hooks_may_replace_inputs_and_outputs(lib: Any) -> None:
    mm = lib.nn.modules.module
    lin = lib.nn.Linear(2, 2, bias=False)
    lib.nn.init.eye_(lin.weight)
    h1 = mm.register_module_forward_pre_hook(lambda m, a: (a[0] * 2,))
    h2 = mm.register_module_forward_hook(lambda m, a, o: o + 1)
    try:
        out = lin(lib.ones(1, 2))
    finally:
        h1.remove()
        h2.remove()
    assert out.tolist() == [[3.0, 3.0]]
    assert lin(lib.ones(1, 2)).tolist() == [[1.0, 1.0]]
