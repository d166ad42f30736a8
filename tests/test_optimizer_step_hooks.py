"""``Optimizer.register_step_pre_hook``/``register_step_post_hook`` and the global
``register_optimizer_step_pre_hook``/``post_hook``: the order hooks run in, what they
receive, a pre hook replacing the step's arguments, removal and refusals, against
PyTorch's."""

from __future__ import annotations

from typing import Any

import pytest

import ember
from tests.conftest import requires_torch, torch


def _trace(lib: Any) -> tuple[list[Any], list[float]]:
    """The hooks' calls of two steps (the second after removing the instance pre hook) and
    the parameter after them."""
    calls: list[Any] = []
    w = lib.nn.Parameter(lib.ones(1))
    opt = lib.optim.SGD([w], lr=0.5)
    mod = __import__(f"{lib.__name__}.optim.optimizer", fromlist=["Optimizer"])

    def note(tag: str) -> Any:
        def hook(o: Any, args: Any, kwargs: Any) -> None:
            assert o is opt and args[0] is opt
            calls.append((tag, len(args), sorted(kwargs)))

        return hook

    handles = [
        mod.register_optimizer_step_pre_hook(note("global pre")),
        mod.register_optimizer_step_post_hook(note("global post")),
        opt.register_step_post_hook(note("post")),
    ]
    pre = opt.register_step_pre_hook(note("pre"))
    try:
        w.grad = lib.ones(1)
        opt.step()
        pre.remove()
        w.grad = lib.ones(1)
        opt.step(closure=None)
    finally:
        for h in handles:
            h.remove()
    return calls, w.detach().tolist()


@requires_torch
def test_hook_order_and_arguments_match_torch() -> None:
    ours, theirs = _trace(ember), _trace(torch)
    assert ours == theirs
    calls, value = ours
    assert [c[0] for c in calls[:4]] == ["global pre", "pre", "post", "global post"]
    assert [c[0] for c in calls[4:]] == ["global pre", "post", "global post"]
    assert value == [0.0]


@requires_torch
@pytest.mark.parametrize("lib_name", ["ember", "torch"])
def test_a_pre_hook_replaces_the_arguments(lib_name: str) -> None:
    lib = ember if lib_name == "ember" else torch
    w = lib.nn.Parameter(lib.ones(1))
    opt = lib.optim.SGD([w], lr=0.5)
    seen: list[float] = []

    def closure() -> Any:
        seen.append(1.0)
        return lib.tensor(3.0)

    opt.register_step_pre_hook(lambda o, args, kwargs: (args, {"closure": closure}))
    w.grad = lib.ones(1)
    loss = opt.step()
    assert seen == [1.0] and float(loss) == 3.0


def test_refusals_and_no_hooks_left_behind() -> None:
    w = ember.nn.Parameter(ember.ones(1))
    opt = ember.optim.Adam([w])
    h = opt.register_step_pre_hook(lambda o, a, k: 5)
    w.grad = ember.ones(1)
    with pytest.raises(RuntimeError, match="must return None or a tuple"):
        opt.step()
    h.remove()
    opt.step()  # the hook is gone
    assert not ember.optim.optimizer._global_pre_hooks
    assert not ember.optim.optimizer._global_post_hooks
