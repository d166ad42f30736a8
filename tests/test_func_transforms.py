"""``ember.func``'s reverse-mode transforms (``grad``, ``grad_and_value``, ``vjp``,
``jacrev``) alone and composed with ``vmap``, against ``torch.func`` on the same inputs (in
the style of PyTorch's test/functorch/test_eager_transforms.py), and per-example gradients
of the demo's models against a loop of single-example backward passes."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import ember
from ember.func import functional_call, grad, grad_and_value, jacrev, vjp, vmap
from ember.utils._pytree import tree_flatten

from .conftest import requires_torch, torch


def _rand(*shape: int, seed: int = 0) -> Any:
    return ember.tensor(np.random.default_rng(seed).standard_normal(shape).astype(np.float32))


def _t(x: Any) -> Any:
    return torch.from_numpy(np.array(x.detach().numpy(), copy=True))


def _same(got: Any, want: Any, tol: float = 1e-5) -> None:
    g, gs = tree_flatten(got)
    w, ws = tree_flatten(want)
    assert len(g) == len(w), (gs, ws)
    for a, b in zip(g, w, strict=True):
        assert tuple(a.shape) == tuple(b.shape)
        assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1]
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=tol, atol=tol)


def _f(m: Any, x: Any, y: Any) -> Any:
    return ((x @ y).tanh() * x.sum(0)).sum()


@requires_torch
@pytest.mark.parametrize("argnums", [0, 1, (0, 1), -1])
def test_grad_argnums_match_torch(argnums: Any) -> None:
    x, y = _rand(3, 3), _rand(3, 3, seed=1)
    got = grad(lambda a, b: _f(ember, a, b), argnums=argnums)(x, y)
    want = torch.func.grad(lambda a, b: _f(torch, a, b), argnums=argnums)(_t(x), _t(y))
    _same(got, want)


@requires_torch
def test_grad_and_value_has_aux_and_pytree_inputs() -> None:
    x, y = _rand(4), _rand(4, seed=1)

    def f(m: Any, d: dict[str, Any]) -> Any:
        out = (d["a"] * d["b"][0]).sin().sum()
        return out, {"aux": d["a"] * 2}

    got = grad_and_value(lambda d: f(ember, d), has_aux=True)({"a": x, "b": [y]})
    want = torch.func.grad_and_value(lambda d: f(torch, d), has_aux=True)(
        {"a": _t(x), "b": [_t(y)]}
    )
    _same(got, want)
    assert not got[0]["a"].requires_grad and got[0]["a"].grad_fn is None


@requires_torch
def test_vjp_matches_torch() -> None:
    x, y = _rand(3, 2), _rand(2, 4, seed=1)
    ct = _rand(3, 4, seed=2)
    out, fn = vjp(lambda a, b: (a @ b).exp(), x, y)
    t_out, t_fn = torch.func.vjp(lambda a, b: (a @ b).exp(), _t(x), _t(y))
    _same(out, t_out)
    _same(fn(ct), t_fn(_t(ct)))


@requires_torch
@pytest.mark.parametrize("argnums", [0, (0, 1)])
def test_jacrev_matches_torch(argnums: Any) -> None:
    x, y = _rand(3), _rand(3, seed=1)

    def f(m: Any, a: Any, b: Any) -> Any:
        return {"p": a.sin() * b.sum(), "q": (a * b).cumsum(0)[:2]}

    got = jacrev(lambda a, b: f(ember, a, b), argnums=argnums)(x, y)
    want = torch.func.jacrev(lambda a, b: f(torch, a, b), argnums=argnums)(_t(x), _t(y))
    _same(got, want)


@requires_torch
def test_hessian_by_jacrev_of_jacrev_matches_torch() -> None:
    x = _rand(4)

    def f(m: Any, a: Any) -> Any:
        return (a.sin() * a.sum() + a.pow(3)).sum()

    got = jacrev(jacrev(lambda a: f(ember, a)))(x)
    _same(got, torch.func.hessian(lambda a: f(torch, a))(_t(x)), tol=1e-4)


@requires_torch
def test_compositions_match_torch() -> None:
    w, xs = _rand(3, 2), _rand(5, 3, seed=1)

    def loss(m: Any, w: Any, x: Any) -> Any:
        return (x @ w).relu().pow(2).sum()

    tv, tg = torch.func.vmap, torch.func.grad
    e = lambda w, x: loss(ember, w, x)  # noqa: E731
    t = lambda w, x: loss(torch, w, x)  # noqa: E731
    # per-example gradients, and gradients of a batched function
    _same(vmap(grad(e), in_dims=(None, 0))(w, xs), tv(tg(t), in_dims=(None, 0))(_t(w), _t(xs)))
    got = grad(lambda w: vmap(e, in_dims=(None, 0))(w, xs).sum())(w)
    want = tg(lambda w: tv(t, in_dims=(None, 0))(w, _t(xs)).sum())(_t(w))
    _same(got, want)
    # grad of grad, and grad of a per-example gradient
    _same(grad(lambda a: grad(e, argnums=1)(w, a).sum())(xs[0]),
          tg(lambda a: tg(t, argnums=1)(_t(w), a).sum())(_t(xs[0])))  # fmt: skip
    got = grad(lambda w: vmap(grad(e), in_dims=(None, 0))(w, xs).pow(2).sum())(w)
    want = tg(lambda w: tv(tg(t), in_dims=(None, 0))(w, _t(xs)).pow(2).sum())(_t(w))
    _same(got, want, tol=1e-4)
    # a Jacobian per example
    _same(vmap(jacrev(lambda x: (x * x.sum()).sin()))(xs),
          tv(torch.func.jacrev(lambda x: (x * x.sum()).sin()))(_t(xs)))  # fmt: skip


def _bad(m: Any) -> list[Any]:
    g, gv, v = m.func.grad, m.func.grad_and_value, m.func.vjp
    x = m.ones(2)
    return [
        lambda: g(lambda a: a)(x),
        lambda: g(lambda a: a.sum(), argnums=2)(x),
        lambda: g(lambda a: a.sum(), argnums=())(x),
        lambda: g(lambda a, b: a.sum(), argnums=(0, 0))(x, x),
        lambda: g(lambda a: a.sum(), argnums=1.0)(x),
        lambda: gv(lambda a: a.sum(), has_aux=True)(x),
        lambda: v(lambda a: (a * 2).long(), x),
    ]


@requires_torch
@pytest.mark.parametrize("i", range(len(_bad(ember))))
def test_errors_match_torch(i: int) -> None:
    with pytest.raises(RuntimeError) as got:
        _bad(ember)[i]()
    with pytest.raises(RuntimeError) as want:
        _bad(torch)[i]()
    assert str(got.value) == str(want.value).replace("torch.", "ember.")


# --------------------------------------------------------------------------- demo models


@pytest.mark.parametrize("name, shape", [("mlp", (6, 1, 8, 8)), ("cnn", (4, 1, 8, 8))])
def test_per_sample_gradients_equal_a_loop(name: str, shape: tuple[int, ...]) -> None:
    from ember.demo import models

    ember.manual_seed(0)
    model = getattr(models, name)()
    x = _rand(*shape)
    y = ember.tensor(np.arange(shape[0]) % 10)
    params = {k: v.detach() for k, v in model.named_parameters()}

    def loss(p: Any, xi: Any, yi: Any) -> Any:
        out = functional_call(model, p, (xi.unsqueeze(0),))
        return ember.nn.functional.cross_entropy(out, yi.unsqueeze(0))

    got = vmap(grad(loss), in_dims=(None, 0, 0))(params, x, y)
    for i in range(shape[0]):
        model.zero_grad()
        ember.nn.functional.cross_entropy(model(x[i : i + 1]), y[i : i + 1]).backward()
        for k, p in model.named_parameters():
            np.testing.assert_allclose(got[k][i].numpy(), p.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_ensemble_of_8_mlps_equals_each_model() -> None:
    from ember.demo.models import mlp
    from ember.func import stack_module_state

    ember.manual_seed(0)
    models = [mlp() for _ in range(8)]
    params, buffers = stack_module_state(models)
    assert params["1.weight"].shape == (8, 128, 64) and params["1.weight"].is_leaf
    assert params["1.weight"].requires_grad
    x = _rand(5, 1, 8, 8)

    def run(p: Any, b: Any, data: Any) -> Any:
        return functional_call(models[0], (p, b), (data,))

    same_data = vmap(run, in_dims=(0, 0, None))(params, buffers, x)
    xs = _rand(8, 5, 1, 8, 8, seed=1)
    own_data = vmap(run)(params, buffers, xs)
    for i, m in enumerate(models):
        np.testing.assert_allclose(same_data[i].detach().numpy(), m(x).detach().numpy(),
                                   rtol=1e-5, atol=1e-6)  # fmt: skip
        np.testing.assert_allclose(own_data[i].detach().numpy(), m(xs[i]).detach().numpy(),
                                   rtol=1e-5, atol=1e-6)  # fmt: skip
    # the stacked parameters train: one backward through the ensemble
    own_data.sum().backward()
    assert params["5.bias"].grad is not None and params["5.bias"].grad.shape == (8, 10)


@requires_torch
def test_stack_module_state_errors_match_torch() -> None:
    for m in (ember, torch):
        with pytest.raises(RuntimeError, match="Expected at least one model, got 0"):
            m.func.stack_module_state([])
        a, b = m.nn.Linear(2, 2), m.nn.Linear(2, 2)
        b.weight.requires_grad_(False)
        with pytest.raises(RuntimeError, match="weight from each model to have the same"):
            m.func.stack_module_state([a, b])
        with pytest.raises(RuntimeError, match="same class"):
            m.func.stack_module_state([a, m.nn.ReLU()])


@requires_torch
@pytest.mark.parametrize("vectorize", [False, True])
def test_autograd_functional_vectorize_matches_torch(vectorize: bool) -> None:
    from ember.autograd.functional import hessian, jacobian

    x, y = _rand(4), _rand(3, seed=1)

    def f(m: Any, a: Any, b: Any) -> Any:
        return (a.sin() * b.sum()).cumsum(0), (a[:3] * b).exp()

    got = jacobian(lambda a, b: f(ember, a, b), (x, y), vectorize=vectorize)
    tf = torch.autograd.functional
    want = tf.jacobian(lambda a, b: f(torch, a, b), (_t(x), _t(y)), vectorize=vectorize)
    _same(got, want)
    g = hessian(lambda a: (a.sin() * a.sum()).sum(), x, vectorize=vectorize)
    _same(g, tf.hessian(lambda a: (a.sin() * a.sum()).sum(), _t(x), vectorize=vectorize))


def test_vectorized_jacobian_runs_backward_under_vmap() -> None:
    """``vectorize=True`` batches the backward passes: one pass per output, not per
    element (the backward formulas see BatchedTensors)."""
    from ember._batched.tensor import BatchedTensor
    from ember.autograd.functional import jacobian

    seen: list[str] = []

    class Probe(ember.autograd.Function):
        @staticmethod
        def forward(ctx: Any, a: Any) -> Any:
            return a * 2

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            seen.append(type(g).__name__)
            return g * 2

    jacobian(lambda a: Probe.apply(a), _rand(5), vectorize=True)
    assert seen == [BatchedTensor.__name__]
    seen.clear()
    jacobian(lambda a: Probe.apply(a), _rand(5), vectorize=False)
    assert seen == ["Tensor"] * 5
