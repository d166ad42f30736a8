"""``ember.utils.checkpoint`` (NOTE [two checkpoints] in ember/utils/checkpoint.py) against
``torch.utils.checkpoint``: values and gradients of both forms, dropout's mask drawn again
the same, parameters reached only inside the function, ``checkpoint_sequential``, the
recomputation actually happening, and the errors and warnings PyTorch gives."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import ember
from ember.utils.checkpoint import CheckpointError, checkpoint, checkpoint_sequential

from .conftest import requires_torch, torch


def _ck(lib: Any) -> Any:
    return lib.utils.checkpoint if lib is torch else ember.utils.checkpoint


def _mlp(lib: Any) -> Any:
    lib.manual_seed(0)
    return lib.nn.Sequential(
        lib.nn.Linear(4, 8), lib.nn.ReLU(), lib.nn.Dropout(0.5), lib.nn.Linear(8, 3)
    )


def _run(lib: Any, reentrant: bool, input_grad: bool) -> dict[str, np.ndarray]:
    model = _mlp(lib)
    x = lib.from_numpy(np.linspace(-1, 1, 20, dtype=np.float32).reshape(5, 4).copy())
    x.requires_grad_(input_grad)
    y = _ck(lib).checkpoint(lambda t: model(t).tanh(), x, use_reentrant=reentrant)
    (y * y).sum().backward()
    out = {"y": y.detach().numpy()}
    out |= {n: p.grad.numpy() for n, p in model.named_parameters()}
    if input_grad:
        out["x"] = x.grad.numpy()
    return out


@requires_torch
@pytest.mark.parametrize("reentrant", [True, False])
def test_values_and_gradients_match_torch(reentrant: bool) -> None:
    """Dropout inside: the recomputation restores the random state, so its mask (and the
    gradients) are the forward pass's, as in PyTorch, whose stream ember draws."""
    got, want = _run(ember, reentrant, True), _run(torch, reentrant, True)
    assert got.keys() == want.keys()
    for k in want:
        np.testing.assert_allclose(got[k], want[k], rtol=1e-5, atol=1e-6, err_msg=k)


@requires_torch
def test_non_reentrant_reaches_parameters_when_no_input_requires_grad() -> None:
    got, want = _run(ember, False, False), _run(torch, False, False)
    for k in want:
        np.testing.assert_allclose(got[k], want[k], rtol=1e-5, atol=1e-6, err_msg=k)


def test_non_reentrant_works_with_autograd_grad_and_keywords() -> None:
    w = ember.tensor([1.0, 2.0, 3.0], requires_grad=True)
    x = ember.tensor([0.5, -1.0, 2.0])
    y = checkpoint(lambda t, scale: (t * w).sin() * scale, x, scale=2.0, use_reentrant=False)
    (g,) = ember.autograd.grad(y.sum(), [w])
    assert np.allclose(g.numpy(), 2 * np.cos(x.numpy() * w.detach().numpy()) * x.numpy())
    assert w.grad is None  # autograd.grad accumulates nothing


@pytest.mark.parametrize("reentrant", [True, False])
def test_the_function_runs_again_in_backward(reentrant: bool) -> None:
    calls = []
    lin = ember.nn.Linear(3, 3)

    def f(t: Any) -> Any:
        calls.append(ember.is_grad_enabled())
        return lin(t).relu().exp()

    x = ember.ones(2, 3, requires_grad=True)
    y = checkpoint(f, x, use_reentrant=reentrant)
    assert len(calls) == 1
    y.sum().backward()
    assert len(calls) == 2 and calls[1] is True  # rerun with grad mode on
    plain = lin(x.detach().requires_grad_()).relu().exp()
    assert np.allclose(y.detach().numpy(), plain.detach().numpy())


def test_the_reentrant_node_keeps_only_the_inputs() -> None:
    """What makes it save memory: the forward runs under no_grad, so autograd saves only
    the tensor input (counted by a pack hook around the call), not the function's
    intermediates (five saved tensors without the checkpoint)."""
    lin = ember.nn.Linear(3, 3)
    x = ember.ones(2, 3, requires_grad=True)

    def saved_by(call: Any) -> list[Any]:
        seen: list[Any] = []
        with ember.autograd.graph.saved_tensors_hooks(lambda t: seen.append(t) or t, lambda t: t):
            call()
        return seen

    def f(t: Any) -> Any:
        return lin(t).relu().exp()

    assert len(saved_by(lambda: f(x))) > 1
    seen = saved_by(lambda: checkpoint(f, x, use_reentrant=True))
    assert len(seen) == 1 and seen[0] is x


@requires_torch
@pytest.mark.parametrize("reentrant", [True, False])
def test_checkpoint_sequential_matches_torch(reentrant: bool) -> None:
    res = {}
    for lib in (ember, torch):
        lib.manual_seed(3)
        layers = [lib.nn.Linear(4, 4) if i % 2 == 0 else lib.nn.Tanh() for i in range(6)]
        model = lib.nn.Sequential(*layers)
        x = lib.from_numpy(np.linspace(-2, 2, 12, dtype=np.float32).reshape(3, 4).copy())
        x.requires_grad_()
        y = _ck(lib).checkpoint_sequential(model, 3, x, use_reentrant=reentrant)
        y.pow(2).sum().backward()
        res[lib] = [y.detach().numpy(), x.grad.numpy(), model[0].weight.grad.numpy()]
    for a, b in zip(res[ember], res[torch], strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_use_reentrant_must_be_passed_or_it_warns() -> None:
    x = ember.ones(2, requires_grad=True)
    with pytest.warns(UserWarning, match="use_reentrant"):
        y = checkpoint(lambda t: t.sin(), x)
    assert type(y.grad_fn).__name__ == "CheckpointFunctionBackward"  # PyTorch's default
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        checkpoint(lambda t: t.sin(), x, use_reentrant=False)


def test_reentrant_refuses_keywords_and_context_fn() -> None:
    x = ember.ones(2, requires_grad=True)
    with pytest.raises(ValueError, match="Unexpected keyword arguments: scale"):
        checkpoint(lambda t, scale: t * scale, x, scale=2.0, use_reentrant=True)
    with pytest.raises(ValueError, match="use_reentrant=False"):
        checkpoint(lambda t: t, x, use_reentrant=True, context_fn=lambda: (None, None))


def test_reentrant_warns_when_no_input_requires_grad() -> None:
    with pytest.warns(UserWarning, match="None of the inputs have requires_grad=True"):
        checkpoint(lambda t: t * 2, ember.ones(2), use_reentrant=True)


def test_a_recomputation_that_differs_raises() -> None:
    """A function with Python state that changes between the two runs saves other tensors
    the second time: the backward stops with CheckpointError instead of using them."""
    state = {"n": 0}
    w = ember.ones(3, requires_grad=True)

    def f(t: Any) -> Any:
        state["n"] += 1
        return (t * w).exp() if state["n"] == 1 else (t * w).sum().exp()

    y = checkpoint(f, ember.ones(3), use_reentrant=False)
    with pytest.raises(CheckpointError, match="different tensors"):
        y.sum().backward()


@requires_torch
def test_enable_grad_inside_a_custom_backward_records_as_in_torch() -> None:
    """The engine leaves the Autograd key out while formulas run; a custom Function's
    backward is user code and gets it back, so ``enable_grad`` there records (what the
    reentrant checkpoint's backward relies on)."""

    def make(lib: Any) -> Any:
        class Inner(lib.autograd.Function):
            @staticmethod
            def forward(ctx: Any, t: Any) -> Any:
                ctx.save_for_backward(t)
                return t * 1

            @staticmethod
            def backward(ctx: Any, g: Any) -> Any:
                (t,) = ctx.saved_tensors
                with lib.enable_grad():
                    u = t.detach().requires_grad_()
                    (d,) = lib.autograd.grad((u.sin() * u).sum(), [u])
                return g * d

        return Inner

    res = {}
    for lib in (ember, torch):
        x = lib.tensor([0.5, 1.5], requires_grad=True)
        make(lib).apply(x).sum().backward()
        res[lib] = x.grad.numpy()
    np.testing.assert_allclose(res[ember], res[torch], rtol=1e-6)


def test_reachable_as_an_attribute_of_ember_utils() -> None:
    assert ember.utils.checkpoint.checkpoint is checkpoint
    assert ember.utils.checkpoint.checkpoint_sequential is checkpoint_sequential
