"""``autograd.graph``'s ``GradientEdge``, ``get_gradient_edge`` and
``register_multi_grad_hook``, ``autograd.grad`` / ``backward`` taking edges, and the
engine running only the nodes on a path to ``inputs=`` (NOTE [pruning to the inputs]).
Each test runs against ember and, when installed, PyTorch (the ``lib`` fixture)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import sub


def _graph(lib: Any) -> Any:
    return sub(lib, "autograd.graph")


def test_grad_through_an_edge_equals_grad_through_the_tensor(lib: Any) -> None:
    ge = _graph(lib).get_gradient_edge
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = x * x
    z = (y * 3).sum()
    (gy,) = lib.autograd.grad(z, ge(y), retain_graph=True)
    (gx,) = lib.autograd.grad(z, ge(x), retain_graph=True)
    assert gy.tolist() == [3.0, 3.0] and gx.tolist() == [6.0, 12.0]
    both = lib.autograd.grad(z, [ge(x), x, ge(x)], retain_graph=True)  # one edge, thrice
    assert [g.tolist() for g in both] == [[6.0, 12.0]] * 3


def test_edge_fields(lib: Any) -> None:
    g = _graph(lib)
    x = lib.ones(2, requires_grad=True)
    leaf = g.get_gradient_edge(x)
    assert isinstance(leaf, g.GradientEdge) and leaf.output_nr == 0
    assert leaf.node.name().endswith("AccumulateGrad") and leaf.ownership_token is None
    a, b = (x * 2).unbind(0)
    eb = g.get_gradient_edge(b)
    assert eb.node is b.grad_fn and eb.output_nr == 1
    with pytest.raises(RuntimeError, match="does not require gradients"):
        g.get_gradient_edge(lib.ones(2))


def test_edge_outlives_its_tensor(lib: Any) -> None:
    ge = _graph(lib).get_gradient_edge
    x = lib.tensor([2.0], requires_grad=True)
    h = x.exp()
    edge = ge(h)
    loss = (h * 4).sum()
    del h
    (g,) = lib.autograd.grad(loss, edge)
    assert g.tolist() == [4.0]


def test_edge_as_output(lib: Any) -> None:
    ge = _graph(lib).get_gradient_edge
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    (g,) = lib.autograd.grad(ge(y), x, grad_outputs=lib.ones(2), retain_graph=True)
    assert g.tolist() == [2.0, 2.0]
    s = (x * 5).sum()
    (g,) = lib.autograd.grad(ge(s), x)  # a scalar's edge: ones implied
    assert g.tolist() == [5.0, 5.0]
    with pytest.raises(RuntimeError, match="implicitly created only for scalar outputs"):
        lib.autograd.grad(ge(y), x)


def test_backward_with_edge_inputs(lib: Any) -> None:
    ge = _graph(lib).get_gradient_edge
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    z = (y * 3).sum()
    z.backward(inputs=[ge(x)], retain_graph=True)
    assert x.grad.tolist() == [6.0, 6.0]
    z.backward(inputs=[ge(y)])  # a non-leaf's edge: nothing to accumulate into
    assert x.grad.tolist() == [6.0, 6.0]


def test_unused_edge_and_materialize(lib: Any) -> None:
    ge = _graph(lib).get_gradient_edge
    x = lib.ones(2, requires_grad=True)
    q = lib.ones(2, requires_grad=True)
    z = (x * 3).sum()
    with pytest.raises(RuntimeError, match="not have been used in the graph"):
        lib.autograd.grad(z, ge(q), retain_graph=True)
    assert lib.autograd.grad(z, ge(q), retain_graph=True, allow_unused=True) == (None,)
    with pytest.raises(RuntimeError, match="materialize_grads cannot be used"):
        lib.autograd.grad(z, ge(q), materialize_grads=True)


def test_multi_grad_hook_all(lib: Any) -> None:
    g = _graph(lib)
    a = lib.ones(2, 3, requires_grad=True)
    b = lib.ones(2, 3, requires_grad=True)
    c, d = a * b, a * b
    seen: list[list[bool]] = []
    h = g.register_multi_grad_hook(
        (a, b, c, d), lambda gs: seen.append([x is not None for x in gs])
    )
    c.sum().backward(retain_graph=True)
    c.sum().backward(inputs=(a,), retain_graph=True)  # b's gradient is not computed
    (c.sum() + d.sum()).backward(retain_graph=True)
    lib.autograd.grad(c.sum(), c, retain_graph=True)  # c's edge: captured only
    assert seen == [[True, True, True, False], [True, False, True, False], [True] * 4,
                    [False, False, True, False]]  # fmt: skip
    h.remove()
    c.sum().backward(retain_graph=True)
    assert len(seen) == 4


def test_multi_grad_hook_all_gets_the_gradients(lib: Any) -> None:
    g = _graph(lib)
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    got: list[Any] = []
    g.register_multi_grad_hook((x, y), lambda gs: got.append([t.tolist() for t in gs]))
    (y * y).sum().backward()
    assert got == [[[18.0, 36.0], [6.0, 12.0]]]


def test_multi_grad_hook_refuses_leaves_in_grad(lib: Any) -> None:
    g = _graph(lib)
    a = lib.ones(2, requires_grad=True)
    b = a * 2
    g.register_multi_grad_hook((a, b), lambda gs: None)
    with pytest.raises(RuntimeError, match="leaf node was passed to _will_engine_execute_node"):
        lib.autograd.grad(b.sum(), a)


def test_multi_grad_hook_any(lib: Any) -> None:
    g = _graph(lib)
    a = lib.ones(2, requires_grad=True)
    b = lib.ones(2, requires_grad=True)
    c = a * b
    calls: list[list[float]] = []
    h = g.register_multi_grad_hook((a, b, c), lambda grad: calls.append(grad.tolist()),
                                   mode="any")  # fmt: skip
    (c * 5).sum().backward(retain_graph=True)  # c's gradient comes first
    (c * 7).sum().backward(retain_graph=True)  # once per pass
    assert calls == [[5.0, 5.0], [7.0, 7.0]]
    h.remove()
    c.sum().backward()
    assert len(calls) == 2
    with pytest.raises(ValueError, match="Expects mode to be one of"):
        g.register_multi_grad_hook((a,), print, mode="every")
    # mode="any" skips a tensor that does not require grad; "all" refuses it (PyTorch
    # with an internal assertion, ember saying why)
    g.register_multi_grad_hook((lib.ones(2),), print, mode="any").remove()
    with pytest.raises(AssertionError if lib.__name__ == "torch" else RuntimeError):
        g.register_multi_grad_hook((lib.ones(2),), print)


def test_grad_runs_only_nodes_on_a_path_to_the_inputs(lib: Any) -> None:
    x = lib.ones(2, requires_grad=True)
    y = x * 2
    z = x * 3
    ran: list[str] = []
    z.register_hook(lambda g: ran.append("z"))
    y.register_hook(lambda g: ran.append("y"))
    lib.autograd.grad((y + z).sum(), y, retain_graph=True)
    assert ran == ["y"]  # z's node leads to no input: it does not run
    lib.autograd.grad((y + z).sum(), x)
    assert sorted(ran) == ["y", "y", "z"]


def test_captured_leaf_goes_through_its_hooks(lib: Any) -> None:
    x = lib.ones(2, requires_grad=True)
    x.register_hook(lambda g: g * 10)
    y = x * 2
    (g,) = lib.autograd.grad(y.sum(), x, retain_graph=True)
    assert g.tolist() == [20.0, 20.0]
    y.sum().backward(inputs=[x])
    assert x.grad.tolist() == [20.0, 20.0]


def test_graph_task_id_outside_and_inside_backward(lib: Any) -> None:
    c = sub(lib, "_C")
    assert c._current_graph_task_id() == -1
    x = lib.ones(2, requires_grad=True)
    y = x * 2
    ids: list[int] = []
    y.register_hook(lambda g: ids.append(c._current_graph_task_id()))
    y.sum().backward(retain_graph=True)
    y.sum().backward()
    assert len(ids) == 2 and ids[0] != ids[1] and -1 not in ids
