"""``cond`` and ``while_loop`` as nodes of traced graphs (NOTE [higher-order ops in graphs]
in ember/_higher_order_ops/subgraph.py): under ``make_fx`` each function they take is a
subgraph, tensors read from outside are lifted into operands, and the graph's code is
PyTorch's, name for name. Running the graph takes the branch (the number of iterations)
the values ask for, as eagerly."""

from __future__ import annotations

from typing import Any

import pytest

import ember
from ember.fx.experimental.proxy_tensor import make_fx as ember_make_fx


def _programs(lib: Any) -> dict[str, tuple[Any, list[Any]]]:
    """Functions using ``cond``/``while_loop`` and example arguments, for ``lib``."""
    y = lib.arange(3.0) - 1  # a global-like tensor the branches read: lifted

    def lifted(x: Any, w: Any) -> Any:
        return lib.cond(x.sum() > 0, lambda x: (x * w).sin(), lambda x: x.cos() + y, (x,))

    def two_outputs(x: Any) -> Any:
        return lib.cond(x.sum() > 0, lambda x: (x + 0, x * 2), lambda x: (x + 1, x - 1), (x,))

    def nested(x: Any) -> Any:
        inner = lambda x: lib.cond(x.max() > 1, lambda x: x * 10, lambda x: x * 5, (x,))  # noqa: E731
        return lib.cond(x.sum() > 0, inner, lambda x: x.neg(), (x,))

    def loop(i: Any, x: Any) -> Any:
        return lib.while_loop(lambda i, x: i < 3, lambda i, x: (i + 1, x * y), (i, x))

    def counted(x: Any) -> Any:
        return lib.while_loop(lambda x: x.sum() < 100, lambda x: x * 2 + 1, (x,))

    x = lib.tensor([0.5, -0.25, 2.0])
    return {
        "lifted": (lifted, [x, lib.tensor([1.0, 2.0, 3.0])]),
        "two_outputs": (two_outputs, [x]),
        "nested": (nested, [x]),
        "loop": (loop, [lib.tensor(0), x]),
        "counted": (counted, [x]),
    }


def _code(gm: Any) -> list[str]:
    """A graph's code as ember prints it: PyTorch's with ``torch.`` as ``ember.``, without
    the blank lines and the return annotation PyTorch's adds."""
    lines = gm.code.replace("torch.", "ember.").replace(" -> _Any_", "").splitlines()
    return [line.rstrip() for line in lines if line.strip()]


def _codes(gm: Any) -> dict[str, list[str]]:
    """The code of the graph and of each subgraph, by name."""
    return {name: _code(sub) for name, sub in gm.named_modules()}


@pytest.mark.parametrize("name", list(_programs(ember)))
def test_the_graph_is_pytorchs(name: str) -> None:
    torch = pytest.importorskip("torch")
    from torch.fx.experimental.proxy_tensor import make_fx

    torch._dynamo.reset()  # torch's cond/while_loop compile their functions with dynamo,
    # whose cache otherwise passes integers guarded by earlier programs as operands
    fn, args = _programs(torch)[name]
    want = _codes(make_fx(fn)(*args))
    efn, eargs = _programs(ember)[name]
    assert _codes(ember_make_fx(efn)(*eargs)) == want


@pytest.mark.parametrize("mode", ["real", "fake"])
@pytest.mark.parametrize("name", list(_programs(ember)))
def test_the_graph_takes_the_branch_the_values_ask_for(name: str, mode: str) -> None:
    fn, args = _programs(ember)[name]
    gm = ember_make_fx(fn, tracing_mode=mode, _allow_non_fake_inputs=True)(*args)
    assert any(n.target in (ember.ops.higher_order.cond, ember.ops.higher_order.while_loop)
               for n in gm.graph.nodes)  # fmt: skip
    for scale in (1.0, -1.0, 3.0, 0.1):
        call = [a * scale if a.is_floating_point() else a for a in args]
        got, want = gm(*call), fn(*call)
        got = got if isinstance(got, (tuple, list)) else (got,)
        want = want if isinstance(want, (tuple, list)) else (want,)
        for g, w in zip(got, want, strict=True):
            assert ember.allclose(g, w), (name, scale)


@pytest.mark.parametrize(
    "branch",
    [
        lambda x: x,  # an operand returned: aliasing
        lambda x: x[:2],  # a view of one
        lambda x: x.add_(1),  # an operand written in place
        lambda x: x.sum(),  # a shape the other branch does not have
        lambda x: (x + 1, x + 2),  # a structure the other branch does not have
    ],
    ids=["alias", "view", "write", "shape", "structure"],
)
def test_impure_or_mismatched_branches_are_refused_as_by_pytorch(branch: Any) -> None:
    torch = pytest.importorskip("torch")
    from torch.fx.experimental.proxy_tensor import make_fx

    for lib, trace in ((torch, make_fx), (ember, ember_make_fx)):
        x = lib.tensor([1.0, 2.0, 3.0])
        cond = lib.cond
        with pytest.raises(Exception) as info:
            trace(lambda x, cond=cond: cond(x.sum() > 0, branch, lambda x: x * 2, (x,)))(x)
        if lib is ember:
            assert type(info.value) is RuntimeError and "cond:" in str(info.value)
        assert lib.equal(x, lib.tensor([1.0, 2.0, 3.0]))  # the input is untouched


@pytest.mark.parametrize("backend", ["ember", "aot_eager", "custom"])
def test_compiled_without_grad_the_ops_are_nodes_of_one_graph(backend: str) -> None:
    w = ember.tensor([1.0, -2.0, 0.5, 3.0])

    def f(x: Any) -> Any:
        a, b = ember.cond(x.sum() > 0, lambda x: (x.sin() * w, x + 1),
                          lambda x: (x.cos() - 1, x * w), (x,))  # fmt: skip
        _, z = ember.while_loop(lambda i, z: i < 3, lambda i, z: (i + 1, z * 2),
                                (ember.tensor(0), a))  # fmt: skip
        return z + b

    graphs: list[Any] = []

    def keep(gm: Any, example_inputs: Any) -> Any:
        graphs.append(gm)
        return gm

    compiled = ember.compile(f, backend=keep if backend == "custom" else backend)
    with ember.no_grad():
        for scale in (1.0, -1.0, 2.0, -0.5):
            x = ember.tensor([0.5, 1.0, -0.25, 2.0]) * scale
            assert ember.allclose(compiled(x), f(x))
    assert compiled.explain() == []  # one graph, compiled once, no break
    if graphs:
        targets = [n.target for n in graphs[0].graph.nodes]
        assert ember.ops.higher_order.cond in targets
        assert ember.ops.higher_order.while_loop in targets


def test_compiled_with_grad_a_cond_stays_in_the_graph_and_a_while_loop_breaks_it() -> None:
    """Autograd sees through a ``cond`` node (tests/test_cond_autograd.py); not yet through
    a ``while_loop``: its condition's read is a graph break, and the gradients are eager's
    in both cases."""
    f = lambda x: ember.cond(x.sum() > 0, lambda x: x.sin() * 2, lambda x: x.cos(), (x,))  # noqa: E731

    def loop(x: Any) -> Any:
        body = lambda i, v: (i + 1, v * 2)  # noqa: E731
        return ember.while_loop(lambda i, v: v.abs().sum() < 10, body, (ember.tensor(0), x))[1]

    for fn, breaks in ((f, False), (loop, True)):
        compiled = ember.compile(fn)
        for scale in (1.0, -1.0):
            x = (ember.tensor([0.5, 1.0, 2.0]) * scale).requires_grad_()
            x2 = x.detach().clone().requires_grad_()
            compiled(x).sum().backward()
            fn(x2).sum().backward()
            assert ember.allclose(x.grad, x2.grad)
        assert any("graph break" in r for r in compiled.explain()) == breaks


def test_export_keeps_cond_and_while_loop_and_runs_them() -> None:
    class Net(ember.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.lin = ember.nn.Linear(3, 3)

        def forward(self, x: Any) -> Any:
            y = ember.cond(x.sum() > 0, lambda x: x * 2, lambda x: x - 1, (x,))
            z = ember.while_loop(lambda z: z.sum() < 10,
                                    lambda z: self.lin(z).abs() + z.abs() + 1, (y,))  # fmt: skip
            return z

    net = Net()
    ep = ember.export.export(net, (ember.ones(3),))
    targets = [n.target for n in ep.graph.nodes]
    assert ember.ops.higher_order.cond in targets
    assert ember.ops.higher_order.while_loop in targets
    decomposed = ep.run_decompositions()
    for x in (ember.ones(3), -ember.ones(3), ember.full((3,), 20.0)):
        with ember.no_grad():
            want = net(x)
            assert ember.allclose(ep.module()(x), want)
            assert ember.allclose(decomposed.module()(x), want)
