"""``Module.compile()`` (compiled in place, as PyTorch's) and ``ember.compiler.reset``."""

from __future__ import annotations

import copy

import pytest

import ember
from tests.conftest import requires_torch, torch, train_steps


@pytest.mark.parametrize("backend", ["ember", "aot_eager"])
def test_module_compile_trains_as_the_eager_module(backend: str) -> None:
    def run(compiled: bool) -> tuple[list[float], list[ember.Tensor]]:
        ember.manual_seed(0)
        model = ember.nn.Sequential(ember.nn.Linear(3, 8), ember.nn.ReLU(), ember.nn.Linear(8, 1))
        if compiled:
            assert model.compile(backend=backend) is None
        opt = ember.optim.SGD(model.parameters(), lr=0.1)
        x, y = ember.randn(16, 3), ember.randn(16, 1)
        losses = train_steps(model, opt, ember.nn.functional.mse_loss, x, y, 3)
        return losses, [p.detach() for p in model.parameters()]

    eager, eager_params = run(False)
    compiled, params = run(True)
    assert compiled == pytest.approx(eager, rel=1e-6)
    for p, q in zip(params, eager_params, strict=True):
        assert ember.allclose(p, q, atol=1e-6)


def test_module_compile_keeps_hooks_state_dict_and_copies() -> None:
    model = ember.nn.Linear(3, 2)
    seen = []
    model.register_forward_hook(lambda m, args, out: seen.append(out.shape))
    keys = list(model.state_dict())
    model.compile()
    x = ember.ones(4, 3)
    out = model(x)
    assert seen == [(4, 2)]
    assert list(model.state_dict()) == keys  # no _orig_mod. prefix: the module itself
    assert isinstance(model.forward, ember._compile.OptimizedModule)
    assert model.forward.graph_breaks == []
    clone = copy.deepcopy(model)
    with ember.no_grad():
        clone.weight.add_(1)
    assert not ember.allclose(clone(x), out)
    assert ember.allclose(model(x), out)


@requires_torch
def test_module_compile_and_reset_exist_as_in_torch() -> None:
    assert callable(torch.nn.Module.compile) and callable(ember.nn.Module.compile)
    ember._compile.counters["graph_break"]["x"] += 1
    assert ember.compiler.reset() is None
    assert not ember._compile.counters
