"""The lean backward of a compiled step stores a parameter's gradient as its ``.grad``
itself (NOTE [gradients into .grad] in ``ember/aot/aot_autograd.py``): the gradients, their
accumulation, hooks, ``autograd.grad``, ``inputs=`` and ``retain_graph`` behave as in eager,
and no stored gradient aliases another one, a saved value or a tensor the caller holds."""

from __future__ import annotations

import numpy as np
import pytest

import ember

BACKENDS = ["ember", "aot_eager"]


def _model() -> ember.nn.Module:
    ember.manual_seed(0)
    return ember.nn.Sequential(ember.nn.Linear(5, 7), ember.nn.ReLU(), ember.nn.Linear(7, 3))


def _pair() -> tuple[ember.nn.Module, ember.nn.Module]:
    a, b = _model(), _model()
    b.load_state_dict(a.state_dict())
    return a, b


def _close(a: ember.Tensor | None, b: ember.Tensor | None) -> None:
    assert (a is None) == (b is None)
    if a is not None and b is not None:
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6, atol=1e-7)


X = ember.from_numpy(np.random.default_rng(0).standard_normal((4, 5), dtype=np.float32))


@pytest.mark.parametrize("backend", BACKENDS)
def test_steps_accumulate_as_eager(backend):
    eager, model = _pair()
    run = ember.compile(model, backend=backend)
    for _ in range(3):  # no zero_grad: the second and third add into .grad
        eager(X).square().sum().backward()
        run(X).square().sum().backward()
        for p, q in zip(eager.parameters(), model.parameters(), strict=True):
            _close(q.grad, p.grad)
    grads = [p.grad for p in model.parameters()]
    assert len({id(g._edata) for g in grads}) == len(grads)  # no two share an array
    model.zero_grad()
    run(X).sum().backward()
    eager.zero_grad()
    eager(X).sum().backward()
    for p, q in zip(eager.parameters(), model.parameters(), strict=True):
        _close(q.grad, p.grad)


@pytest.mark.parametrize("backend", BACKENDS)
def test_hooks_see_the_gradient_once(backend):
    eager, model = _pair()
    run = ember.compile(model, backend=backend)
    seen: dict[str, list[np.ndarray]] = {"eager": [], "compiled": []}
    posts: dict[str, int] = {"eager": 0, "compiled": 0}
    for tag, m in (("eager", eager), ("compiled", model)):
        w, b = m[0].weight, m[0].bias
        w.register_hook(lambda g, tag=tag: seen[tag].append(g.numpy().copy()))

        def post(p, tag=tag):
            posts[tag] += 1

        b.register_post_accumulate_grad_hook(post)
    eager(X).sum().backward()
    run(X).sum().backward()
    assert len(seen["compiled"]) == len(seen["eager"]) == 1
    np.testing.assert_allclose(seen["compiled"][0], seen["eager"][0], rtol=1e-6)
    assert posts == {"eager": 1, "compiled": 1}
    for p, q in zip(eager.parameters(), model.parameters(), strict=True):
        _close(q.grad, p.grad)


@pytest.mark.parametrize("backend", BACKENDS)
def test_autograd_grad_and_inputs_leave_other_grads_alone(backend):
    eager, model = _pair()
    run = ember.compile(model, backend=backend)
    params = list(model.parameters())
    got = ember.autograd.grad(run(X).sum(), params)
    want = ember.autograd.grad(eager(X).sum(), list(eager.parameters()))
    assert all(p.grad is None for p in params)
    for a, b in zip(got, want, strict=True):
        _close(a, b)
    run(X).sum().backward(inputs=[params[0]])
    eager(X).sum().backward(inputs=[next(eager.parameters())])
    for p, q in zip(eager.parameters(), params, strict=True):
        _close(q.grad, p.grad)
    assert params[1].grad is None


@pytest.mark.parametrize("backend", BACKENDS)
def test_retain_graph_backward_twice(backend):
    eager, model = _pair()
    run = ember.compile(model, backend=backend)
    le, lc = eager(X).square().sum(), run(X).square().sum()
    for _ in range(2):  # the saved values are intact for the second pass
        le.backward(retain_graph=True)
        lc.backward(retain_graph=True)
    for p, q in zip(eager.parameters(), model.parameters(), strict=True):
        _close(q.grad, p.grad)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_parameter_also_used_outside_the_compiled_function(backend):
    eager, model = _pair()
    run = ember.compile(model, backend=backend)
    for m, f in ((eager, eager), (model, run)):
        w = m[2].weight
        (f(X).sum() + (w * w).sum()).backward()
    for p, q in zip(eager.parameters(), model.parameters(), strict=True):
        _close(q.grad, p.grad)


@pytest.mark.parametrize("backend", BACKENDS)
def test_no_grad_aliases_a_callers_tensor_or_another_grad(backend):
    f = ember.compile(lambda a, b: (a + b) * 2, backend=backend)
    a = ember.ones(3, requires_grad=True)
    b = ember.ones(3, requires_grad=True)
    g = ember.full((3,), 0.5)
    f(a, b).backward(g)
    assert a.grad.tolist() == b.grad.tolist() == [1.0, 1.0, 1.0]
    a.grad.add_(1)
    assert b.grad.tolist() == [1.0, 1.0, 1.0]
    ident = ember.compile(lambda x, y: x + y, backend=backend)
    x = ember.zeros(3, requires_grad=True)
    y = ember.zeros(3, requires_grad=True)
    ident(x, y).backward(g)  # the gradients are the caller's tangent itself
    g.fill_(9.0)
    assert x.grad.tolist() == y.grad.tolist() == [0.5, 0.5, 0.5]
    x.grad.add_(1)
    assert y.grad.tolist() == [0.5, 0.5, 0.5]


def test_implicit_gradient_of_a_scalar_matches_ones_like():
    for dt in (ember.float32, ember.float64, ember.float16):
        x = ember.ones(3, dtype=dt, requires_grad=True)
        (x * 3).sum().backward()
        assert x.grad.dtype == dt and x.grad.tolist() == [3.0, 3.0, 3.0]
    x = ember.ones(1, 1, requires_grad=True)  # a one-element tensor that is not 0-dim
    (x * 2).backward()
    assert x.grad.tolist() == [[2.0]]


@pytest.mark.parametrize("backend", BACKENDS)
def test_no_grad_aliases_another_through_the_function_path(backend):
    def fn(a, b, buf):
        buf.add_(1)  # a written input: the autograd.Function path, not the lean one
        return (a + b) * 2

    f = ember.compile(fn, backend=backend)
    a = ember.ones(3, requires_grad=True)
    b = ember.ones(3, requires_grad=True)
    buf = ember.zeros(3)
    f(a, b, buf).backward(ember.full((3,), 0.5))
    assert buf.tolist() == [1.0, 1.0, 1.0]
    assert a.grad.tolist() == b.grad.tolist() == [1.0, 1.0, 1.0]
    a.grad.add_(1)
    assert b.grad.tolist() == [1.0, 1.0, 1.0]


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_gradient_viewing_a_stride_tricks_array(backend):
    # block_diag's gradient of a 0-dim input is a view whose base chain ends in NumPy's
    # DummyArray, not an array (explore-run finding)
    def fn(x0, x3):
        return ember.block_diag(x0, x3)

    x0 = ember.tensor([0.822])
    grads = []
    for f in (fn, ember.compile(fn, backend=backend)):
        x3 = ember.tensor(0.822, requires_grad=True)
        v = f(x0, x3)
        w = ember.arange(v.numel(), dtype=v.dtype).mul(0.7).cos().reshape(v.shape)
        (v * w).sum().backward()
        grads.append(x3.grad)
    _close(grads[1], grads[0])
