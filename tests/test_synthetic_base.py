"""Synthetic bases (NOTE [synthetic bases] in ember/aot/synthetic_base.py): a call whose
inputs share memory and one of which is written (``f(x, x[:2])`` writing ``x``) is one
graph taking a base per group of such inputs, with eager's values and writes. Before,
``ember.compile`` ran such a signature eagerly (a graph break) and a bare ``aot_function``
raised."""

from __future__ import annotations

from typing import Any

import pytest

import ember
from ember.aot import aot_function

BACKENDS = ["ember", "aot_eager"]


def _keeping(graphs: list[Any]) -> Any:
    def keep(gm: Any, example_inputs: Any) -> Any:
        graphs.append(gm)
        return gm

    return keep


def write_then_read_the_view(a: Any, b: Any) -> Any:
    a.mul_(2)
    return b + 1


def write_the_view_return_both(a: Any, b: Any) -> Any:
    b.add_(10)
    return a * 1, b


def test_a_write_is_seen_through_the_other_view_in_one_graph() -> None:
    graphs: list[Any] = []
    f = aot_function(write_then_read_the_view, _keeping(graphs))
    for _ in range(2):  # the second call reuses the graph
        x, ref = ember.arange(6.0), ember.arange(6.0)
        assert ember.equal(f(x, x[:2]), write_then_read_the_view(ref, ref[:2]))
        assert ember.equal(x, ref)  # the write reached the caller's memory
    assert len(graphs) == 1
    targets = {str(n.target) for n in graphs[0].graph.nodes if n.op == "call_function"}
    assert "aten.as_strided.default" in targets  # the inputs, remade from their base


def test_an_output_viewing_an_input_is_a_view_of_the_callers_memory() -> None:
    f = aot_function(write_the_view_return_both, _keeping([]))
    y, ref = ember.arange(4.0), ember.arange(4.0)
    got, want = f(y, y[1:3]), write_the_view_return_both(ref, ref[1:3])
    assert all(ember.equal(g, w) for g, w in zip(got, want, strict=True))
    assert ember.equal(y, ref)
    got[1].add_(100)  # b's output views y, as eagerly
    want[1].add_(100)
    assert ember.equal(y, ref)


def test_each_layout_is_compiled_once() -> None:
    graphs: list[Any] = []
    f = aot_function(write_then_read_the_view, _keeping(graphs))
    for view in (slice(0, 2), slice(3, 5), slice(0, 2), slice(3, 5)):
        x, ref = ember.arange(6.0), ember.arange(6.0)
        assert ember.equal(f(x, x[view]), write_then_read_the_view(ref, ref[view]))
        assert ember.equal(x, ref)
    assert len(graphs) == 2  # one per layout (offset 0 and offset 3)


def test_two_groups_and_an_input_of_its_own() -> None:
    def f(a: Any, b: Any, c: Any, d: Any, e: Any) -> Any:
        a.add_(1)
        d.mul_(3)
        return b.sum() + c.sum() + e.sum() + a[0]

    g = aot_function(f, _keeping([]))
    x, y, z = ember.arange(5.0), ember.ones(2, 3), ember.full((2,), 7.0)
    xr, yr, zr = x.clone(), y.clone(), z.clone()
    got = g(x, x[1:], z, y, y.t())
    want = f(xr, xr[1:], zr, yr, yr.t())
    assert ember.equal(got, want)
    assert ember.equal(x, xr) and ember.equal(y, yr) and ember.equal(z, zr)


@pytest.mark.parametrize("backend", BACKENDS)
def test_compile_keeps_one_graph(backend: str) -> None:
    g = ember.compile(write_then_read_the_view, backend=backend)
    for _ in range(2):
        x, ref = ember.zeros(3), ember.zeros(3)
        assert ember.equal(g(x, x[:2]), write_then_read_the_view(ref, ref[:2]))
        assert ember.equal(x, ref)
    x, y = ember.zeros(3), ember.zeros(2)  # distinct tensors: another signature
    assert ember.equal(g(x, y), ember.ones(2))
    assert g.graph_breaks == []


def test_inputs_that_need_autograd_still_run_eagerly_or_are_refused() -> None:
    """A base would lose the views' autograd history (and a write into an input that
    requires grad is not traced: docs/aot.md): ember.compile runs the signature eagerly,
    a bare aot_function refuses it and leaves the argument as it was."""
    leaf = ember.ones(4, requires_grad=True)

    def f(a: Any, b: Any) -> Any:
        a.mul_(2)
        return b + 0

    x = leaf.clone()
    with pytest.raises(RuntimeError, match=r"writes an input that requires grad in place"):
        aot_function(f, _keeping([]))(x, x[1:])
    assert ember.equal(x, ember.ones(4))
    g = ember.compile(f, backend="aot_eager")
    x, ref = leaf.clone(), leaf.clone()
    out = g(x, x[1:])
    want = f(ref, ref[1:])
    assert ember.equal(out, want) and ember.equal(x, ref)
    out.sum().backward()
    assert any("writes an input that requires grad" in r for r in g.graph_breaks)
    assert ember.equal(leaf.grad, ember.tensor([0.0, 2.0, 2.0, 2.0]))


def test_against_pytorch() -> None:
    torch = pytest.importorskip("torch")
    from torch._functorch.aot_autograd import aot_function as torch_aot
    from torch._functorch.aot_autograd import make_boxed_func

    t = torch_aot(write_the_view_return_both, lambda gm, ex: make_boxed_func(gm))
    e = aot_function(write_the_view_return_both, _keeping([]))
    ty, ey = torch.arange(4.0), ember.arange(4.0)
    for got, want in zip(e(ey, ey[1:3]), t(ty, ty[1:3]), strict=True):
        assert got.tolist() == want.tolist()
    assert ey.tolist() == ty.tolist()
