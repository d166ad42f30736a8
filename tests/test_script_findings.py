"""What the ``tests/scripts/`` scripts found missing or different in ember, each checked
against PyTorch: ``msort``, ``once_differentiable``, ``Module._register_state_dict_hook``,
``autograd.graph.saved_tensors_hooks`` (and ``disable_saved_tensors_hooks``)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import ember

from .conftest import requires_torch, torch

LIBS = [ember, torch] if torch is not None else [ember]


def _np(t: Any) -> np.ndarray:
    return np.asarray(t.detach().tolist())


@requires_torch
def test_msort_is_sort_along_dim_0_with_its_gradient() -> None:
    data = np.random.default_rng(0).standard_normal((4, 3))
    res = []
    for lib in (ember, torch):
        x = lib.tensor(data, requires_grad=True)
        y = lib.msort(x)
        (y * lib.arange(4.0, dtype=lib.float64)[:, None]).sum().backward()
        res.append((_np(y), _np(x.grad), _np(x.detach().msort())))
    for a, b in zip(*res, strict=True):
        np.testing.assert_allclose(a, b)


def _once(lib: Any) -> Any:
    class Square(lib.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        @lib.autograd.function.once_differentiable
        def backward(ctx: Any, g: Any) -> Any:
            (x,) = ctx.saved_tensors
            return 2 * x * g

    return Square


@requires_torch
@pytest.mark.parametrize("lib", LIBS, ids=lambda m: m.__name__)
def test_once_differentiable_gives_a_gradient_once_and_refuses_a_second(lib: Any) -> None:
    x = lib.tensor([1.0, -2.0], requires_grad=True)
    (g,) = lib.autograd.grad(_once(lib).apply(x).sum(), x)
    assert g.tolist() == [2.0, -4.0] and not g.requires_grad
    v = lib.ones(2, requires_grad=True)  # a gradient that requires grad: a graph is wanted
    (g,) = lib.autograd.grad(_once(lib).apply(x), x, grad_outputs=v, create_graph=True)
    assert g.requires_grad and g.tolist() == [2.0, -4.0]  # through a node that raises
    with pytest.raises(RuntimeError, match="differentiate twice a function that was marked"):
        g.sum().backward()


@requires_torch
def test_private_state_dict_hook_may_return_a_new_state_dict() -> None:
    keys = []
    for lib in (ember, torch):
        m = lib.nn.Sequential(lib.nn.Linear(2, 2))
        m[0]._register_state_dict_hook(lambda mod, sd, prefix, md: sd.__setitem__("x", 1))
        m._register_state_dict_hook(lambda mod, sd, prefix, md: {"only": len(sd)})
        keys.append(dict(m.state_dict()))
        with pytest.raises(RuntimeError, match="must return None"):
            m.register_state_dict_post_hook(lambda mod, sd, p, md: {})
            m.state_dict()
    assert keys[0] == keys[1] == {"only": 3}


def _hooked_run(lib: Any) -> tuple[list[Any], np.ndarray, np.ndarray]:
    """sin(z) * z and exp(z) under hooks that pack to NumPy and unpack scaled by 2."""
    packed: list[Any] = []

    def pack(t: Any) -> Any:
        packed.append(tuple(t.shape))
        return t.detach().numpy().copy()

    z = lib.tensor([[0.5, -1.0], [2.0, 0.25]], dtype=lib.float64, requires_grad=True)
    with lib.autograd.graph.saved_tensors_hooks(pack, lambda a: lib.from_numpy(a * 2)):
        loss = (z.sin() * z).sum() + z.exp().sum() + _once(lib).apply(z).sum()
    loss.backward()
    return sorted(packed), _np(z.grad), _np(loss)


@requires_torch
def test_saved_tensors_hooks_pack_every_saved_tensor_and_backward_reads_unpack() -> None:
    ours, theirs = _hooked_run(ember), _hooked_run(torch)
    assert ours[0] == theirs[0]  # sin's input, mul's two, exp's output, Square's input
    np.testing.assert_allclose(ours[1], theirs[1])  # computed from the doubled values
    np.testing.assert_allclose(ours[2], theirs[2])


@requires_torch
@pytest.mark.parametrize("lib", LIBS, ids=lambda m: m.__name__)
def test_disable_saved_tensors_hooks_refuses_hooks(lib: Any) -> None:
    graph = lib.autograd.graph
    with graph.disable_saved_tensors_hooks("no hooks here"):
        with pytest.raises(RuntimeError, match="no hooks here"):
            with graph.saved_tensors_hooks(lambda t: t, lambda t: t):
                pass
    x = lib.ones(2, requires_grad=True)
    with graph.save_on_cpu():
        y = (x * x).sum()
    y.backward()
    assert x.grad.tolist() == [2.0, 2.0]
