"""Autograd through a traced ``cond`` node (NOTE [autograd through cond] in
ember/_higher_order_ops/cond_autograd.py): ``aot_function`` and ``ember.compile`` over
tensors that require grad keep one ``cond`` node in the forward graph and one in the
backward, and give eager's gradients whichever branch the predicate picks at run time.
Before, the joint trace stopped at the predicate (``DataDependentOutputException`` from
``aot_function``; a graph break in ``ember.compile``)."""

from __future__ import annotations

from typing import Any

import pytest

import ember
from ember._functorch.aot_autograd import aot_function
from ember._higher_order_ops.cond import cond

BACKENDS = ["aot_eager", "ember"]


def _conds(gm: Any) -> int:
    return sum(1 for n in gm.graph.nodes if n.op == "call_function" and n.name.startswith("cond"))


def _grads(fn: Any, *inputs: Any) -> tuple[Any, list[Any]]:
    """``fn``'s value and the gradients of its sum with respect to ``inputs``."""
    xs = [x.detach().clone().requires_grad_(x.requires_grad) for x in inputs]
    out = fn(*xs)
    flat = out if isinstance(out, (tuple, list)) else (out,)
    sum(o.sum() for o in flat).backward()
    return out, [x.grad for x in xs]


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, (tuple, list)):
        return all(_same(x, y) for x, y in zip(a, b, strict=True))
    if a is None or b is None:
        return a is b
    return bool(ember.allclose(a, b, atol=1e-6))


def branchy(x: Any, y: Any) -> Any:
    return cond(x.sum() > 0, lambda a, b: (a * b).sin(), lambda a, b: a.cos() + b, (x, y))


def test_aot_function_keeps_a_cond_node_in_each_graph_and_gives_eagers_gradients() -> None:
    graphs: list[Any] = []

    def keep(gm: Any, example_inputs: Any) -> Any:
        graphs.append(gm)
        return gm

    f = aot_function(branchy, fw_compiler=keep, bw_compiler=keep)
    x, y = (
        ember.tensor([1.0, 2.0], requires_grad=True),
        ember.tensor([0.5, -1.0], requires_grad=True),
    )
    for sign in (1.0, -1.0):  # the true branch, then the false one, through the same graphs
        got = _grads(f, x * sign, y)
        assert _same(got, _grads(branchy, x * sign, y))
    assert [_conds(g) for g in graphs] == [1, 1]  # forward, then backward (compiled once)


@pytest.mark.parametrize("backend", BACKENDS)
def test_compile_over_tensors_that_require_grad_does_not_break_at_a_cond(backend: str) -> None:
    f = ember.compile(branchy, backend=backend)
    x, y = (
        ember.tensor([1.0, 2.0], requires_grad=True),
        ember.tensor([0.5, -1.0], requires_grad=True),
    )
    for sign in (1.0, -1.0):
        assert _same(_grads(f, x * sign, y), _grads(branchy, x * sign, y))
    assert f.explain() == []


@pytest.mark.parametrize("backend", BACKENDS)
def test_gradients_reach_a_tensor_a_branch_reads_from_outside(backend: str) -> None:
    ember.manual_seed(0)
    lin = ember.nn.Linear(3, 3)

    def f(x: Any) -> Any:
        return cond(x.mean() > 0, lambda a: lin(a).relu(), lambda a: a * lin.weight[0], (x,))

    g = ember.compile(f, backend=backend)
    for sign in (1.0, -1.0):
        x = (ember.arange(6.0).reshape(2, 3) * sign).requires_grad_()
        lin.zero_grad()
        g(x).sum().backward()
        got = [x.grad, lin.weight.grad, lin.bias.grad]
        x2 = x.detach().clone().requires_grad_()
        lin.zero_grad()
        f(x2).sum().backward()
        want = [x2.grad, lin.weight.grad, lin.bias.grad]
        if sign < 0:  # the false branch reads no bias: a zero gradient, as PyTorch's
            assert want[2] is None and got[2] is not None and not got[2].any()
            got[2] = want[2]
        assert _same(got, want)
    assert g.explain() == []


def test_several_outputs_an_unused_one_and_an_operand_without_grad() -> None:
    def f(x: Any, w: Any, k: Any) -> Any:
        return cond(
            x.sum() > 0,
            lambda a, b, n: (a * b, a + n, (a - b).exp()),
            lambda a, b, n: (a / 2, b * n, a * 0.0),
            (x, w, k),
        )

    def loss(x: Any, w: Any, k: Any) -> Any:
        p, q, _ = f(x, w, k)  # the third output takes no part in the loss
        return (p * 3 + q).sum()

    g = aot_function(loss, fw_compiler=lambda gm, ex: gm)
    k = ember.tensor([2.0, 3.0])  # requires no grad
    for sign in (1.0, -1.0):
        x = ember.tensor([1.0, 2.0]) * sign
        w = ember.tensor([0.5, 4.0])
        got = _grads(lambda a, b: g(a, b, k), x.requires_grad_(), w.requires_grad_())
        want = _grads(lambda a, b: loss(a, b, k), x, w)
        assert _same(got, want)


def test_a_python_number_among_the_operands() -> None:
    """A non-tensor operand gets no gradient (a branch's vjp returns tensors only): it
    crashed the backward with AttributeError on 'int'."""

    def f(x: Any, k: Any, w: Any) -> Any:
        return cond(x.sum() > 0, lambda a, n, b: a * n * b, lambda a, n, b: a - n * b, (x, k, w))

    g = aot_function(f, fw_compiler=lambda gm, ex: gm)
    for sign in (1.0, -1.0):
        x = (ember.tensor([1.0, 2.0]) * sign).requires_grad_()
        w = ember.tensor([0.5, 3.0], requires_grad=True)
        assert _same(_grads(lambda a, b: g(a, 3, b), x, w), _grads(lambda a, b: f(a, 3, b), x, w))


def test_a_nested_cond_and_an_identity_gradient() -> None:
    def f(x: Any) -> Any:
        inner = lambda a: cond(a.max() > 1, lambda b: b + 1, lambda b: b * b, (a,))  # noqa: E731
        return cond(x.sum() > 0, inner, lambda a: a.tanh(), (x,))

    g = aot_function(f, fw_compiler=lambda gm, ex: gm)
    for v in ([2.0, 3.0], [0.1, 0.2], [-1.0, -2.0]):  # each of the three paths
        x = ember.tensor(v, requires_grad=True)
        assert _same(_grads(g, x), _grads(f, x))


def test_against_pytorch() -> None:
    torch = pytest.importorskip("torch")
    from torch._functorch.aot_autograd import aot_function as torch_aot
    from torch._functorch.aot_autograd import make_boxed_func

    def make(lib: Any) -> Any:
        def f(x: Any, y: Any) -> Any:
            return lib.cond(
                x.sum() > 0, lambda a, b: (a * b).sin(), lambda a, b: a.cos() + b, (x, y)
            )

        return f

    validate = torch.distributions.Distribution._validate_args
    try:
        _against_pytorch(torch, torch_aot, make_boxed_func, make)
    finally:  # torch.cond runs dynamo, which turns torch's distribution validation off
        torch.distributions.Distribution.set_default_validate_args(validate)


def _against_pytorch(torch: Any, torch_aot: Any, make_boxed_func: Any, make: Any) -> None:
    for sign in (1.0, -1.0):
        e = aot_function(make(ember), fw_compiler=lambda gm, ex: gm)
        t = torch_aot(make(torch), fw_compiler=lambda gm, ex: make_boxed_func(gm))
        ex, ey = ember.tensor([1.0, 2.0]) * sign, ember.tensor([0.5, -1.0])
        tx, ty = torch.tensor([1.0, 2.0]) * sign, torch.tensor([0.5, -1.0])
        (eo, eg), (to, tg) = (
            _grads(e, ex.requires_grad_(), ey.requires_grad_()),
            _grads(t, tx.requires_grad_(), ty.requires_grad_()),
        )
        assert ember.allclose(eo, ember.tensor(to.tolist()), atol=1e-6)
        for a, b in zip(eg, tg, strict=True):
            assert ember.allclose(a, ember.tensor(b.tolist()), atol=1e-6)
