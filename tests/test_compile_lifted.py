"""ember.compile of functions that read tensors from outside their arguments: each is
lifted into the graph as an input (NOTE [lifted tensors] in ember/_lift.py), so the
graph reads its current value, its gradient reaches it, writes to it happen at every
call, views of it are views, and rebinding the name that held it compiles again."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import ember
import ember.nn.functional as F

BACKENDS = ["ember", "aot_eager", "custom"]

#: a global the tests rebind
SCALE = ember.full((3,), 2.0)
FACTOR = 2.0
CALLS = 0


def _compile(fn: Any, backend: str, **kw: Any) -> Any:
    if backend == "custom":
        return ember.compile(fn, backend=lambda gm, example_inputs: gm, **kw)
    return ember.compile(fn, backend=backend, **kw)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_compiled_loss_over_a_closure_model_trains_as_eager(backend: str) -> None:
    def run(compiled: bool) -> tuple[list[float], list[Any]]:
        ember.manual_seed(0)
        model = ember.nn.Sequential(ember.nn.Linear(4, 8), ember.nn.Tanh(), ember.nn.Linear(8, 1))
        x, y = ember.randn(16, 4), ember.randn(16, 1)
        opt = ember.optim.SGD(model.parameters(), lr=0.1)

        def loss_fn(x: Any, y: Any) -> Any:
            return F.mse_loss(model(x), y)

        fn = _compile(loss_fn, backend) if compiled else loss_fn
        losses = []
        for _ in range(4):
            opt.zero_grad()
            loss = fn(x, y)
            loss.backward()
            opt.step()
            losses.append(loss.item())
        if compiled:
            assert fn.graph_breaks == []
        return losses, [p.detach().clone() for p in model.parameters()]

    (el, ep), (cl, cp) = run(False), run(True)
    np.testing.assert_allclose(cl, el, rtol=1e-5)
    assert el[-1] < el[0]
    for a, b in zip(cp, ep, strict=True):
        assert ember.allclose(a, b, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("backend", ["ember", "aot_eager"])
def test_a_view_of_a_closure_tensor_is_a_view_at_run_time(backend: str) -> None:
    w = ember.arange(6.0).reshape(2, 3)
    row = ember.compile(lambda: w[1], backend=backend)
    with ember.no_grad():
        r = row()
        assert r.tolist() == [3.0, 4.0, 5.0]
        r.mul_(-1)  # writes w, as the eager view would
    assert w[1].tolist() == [-3.0, -4.0, -5.0]
    assert r._base is w or r.untyped_storage() is w.untyped_storage()


@pytest.mark.parametrize("backend", BACKENDS)
def test_requires_grad_of_an_output_follows_the_closure_parameter(backend: str) -> None:
    w = ember.ones(3, requires_grad=True)
    f = _compile(lambda x: w * x, backend)
    out = f(ember.ones(3))
    assert out.requires_grad
    out.sum().backward()
    assert w.grad is not None and w.grad.tolist() == [1.0, 1.0, 1.0]
    with ember.no_grad():
        assert not f(ember.ones(3)).requires_grad


@pytest.mark.parametrize("backend", BACKENDS)
def test_rebinding_a_global_tensor_passes_the_new_one(backend: str) -> None:
    global SCALE
    old = SCALE
    try:

        def f(x: Any) -> Any:
            return x * SCALE

        g = _compile(f, backend)
        assert g(ember.ones(3)).tolist() == [2.0, 2.0, 2.0]
        SCALE = ember.full((3,), 5.0)  # same signature: the graph, with the new tensor
        assert g(ember.ones(3)).tolist() == [5.0, 5.0, 5.0]
        assert g.explain() == []
        SCALE = ember.full((4,), 1.0)  # another shape: a retrace, explained
        assert g(ember.ones(4)).tolist() == [1.0] * 4
        assert any("float32[4] vs float32[3]" in r for r in g.explain()), g.explain()
    finally:
        SCALE = old


def test_rebinding_a_global_number_compiles_again() -> None:
    global FACTOR
    FACTOR = 2.0
    g = ember.compile(lambda x: x * FACTOR, backend="aot_eager")
    assert g(ember.ones(2)).tolist() == [2.0, 2.0]
    FACTOR = 3.0
    assert g(ember.ones(2)).tolist() == [3.0, 3.0]
    assert any("the global 'FACTOR' now holds another object" in r for r in g.explain())


def test_rebinding_a_closure_variable_passes_the_new_tensor() -> None:
    w = ember.ones(2)

    def f(x: Any) -> Any:
        return x + w

    g = ember.compile(f, backend="aot_eager")
    assert g(ember.zeros(2)).tolist() == [1.0, 1.0]
    w = ember.full((2,), 7.0)  # noqa: F841 (read by f through its closure)
    assert g(ember.zeros(2)).tolist() == [7.0, 7.0]
    assert g.explain() == []
    w = "not a tensor"  # noqa: F841
    with pytest.raises(TypeError):
        g(ember.zeros(2))
    assert any("the closure variable 'w' now holds another object" in r for r in g.explain())


def test_replacing_a_closure_module_parameter_compiles_again() -> None:
    lin = ember.nn.Linear(2, 1, bias=False)
    g = ember.compile(lambda x: lin(x), backend="aot_eager")
    x = ember.ones(1, 2)
    with ember.no_grad():
        assert ember.allclose(g(x), lin(x))
        lin.weight = ember.nn.Parameter(ember.full((1, 2), 3.0))
        assert g(x).tolist() == [[6.0]]


def test_a_write_to_a_closure_tensor_happens_at_every_call_without_a_break() -> None:
    seen = ember.zeros(2)

    def f(x: Any) -> Any:
        seen.add_(x)
        return seen * 1

    g = ember.compile(f)
    outs = [g(ember.ones(2)).tolist() for _ in range(3)]
    assert outs == [[1.0, 1.0], [2.0, 2.0], [3.0, 3.0]]
    assert seen.tolist() == [3.0, 3.0]
    assert g.graph_breaks == []


def test_a_changed_shape_of_a_lifted_tensor_retraces() -> None:
    w = ember.ones(3)
    g = ember.compile(lambda x: x.sum() + w.sum(), backend="aot_eager")
    assert g(ember.ones(2)).item() == 5.0
    w.data = ember.ones(5)
    assert g(ember.ones(2)).item() == 7.0
    assert any("float32[5] vs float32[3]" in r for r in g.explain()), g.explain()


def test_a_tensor_the_function_makes_is_made_afresh_at_every_call() -> None:
    def f(x: Any) -> Any:
        t = ember.tensor([1.0, 2.0])
        t.add_(x)
        return t

    g = ember.compile(f, backend="aot_eager")
    for _ in range(3):
        assert g(ember.ones(2)).tolist() == [2.0, 3.0]


def test_a_custom_backend_sees_lifted_tensors_as_inputs() -> None:
    w = ember.full((2,), 3.0)
    got: list[Any] = []

    def backend(gm: Any, example_inputs: Any) -> Any:
        got.append([tuple(t.shape) for t in example_inputs])
        return gm

    g = ember.compile(lambda x: x * w, backend=backend)
    assert g(ember.ones(4, 2)).tolist() == [[3.0, 3.0]] * 4
    assert got == [[(4, 2), (2,)]], "the argument, then the lifted tensor"
    assert not any(n.op == "get_attr" for n in _last_graph(got, g))


def _last_graph(got: list[Any], g: Any) -> Any:
    (entry,) = g.impl.cache.values()
    return entry[0].graph.nodes


def test_assigning_a_global_in_the_function_runs_eagerly() -> None:
    def f(x: Any) -> Any:
        global CALLS
        CALLS += 1
        return x + 1

    g = ember.compile(f)
    before = CALLS
    for _ in range(3):
        g(ember.ones(2))
    assert CALLS == before + 3
    assert any("assigns the global 'CALLS'" in r for r in g.graph_breaks)


def test_assigning_a_closure_variable_in_the_function_runs_eagerly() -> None:
    n = 0

    def f(x: Any) -> Any:
        nonlocal n
        n += 1
        return x * 2

    g = ember.compile(f, backend="aot_eager")
    g(ember.ones(1))
    g(ember.ones(1))
    assert n == 2
    with pytest.raises(ember._compile.Unsupported, match="closure variable 'n'"):
        ember.compile(f, fullgraph=True)(ember.ones(1))


def test_a_global_rebound_at_every_call_stops_compiling_after_the_limit() -> None:
    global FACTOR
    g = ember.compile(lambda x: x * FACTOR, backend="aot_eager")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for k in range(12):
            FACTOR = float(k)
            assert g(ember.ones(3)).tolist() == [float(k)] * 3
    assert any("running it uncompiled" in str(w.message) for w in caught)


LOG: list[Any] = []


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (lambda x: LOG.append(x.shape) or x * 2, "calls LOG.append"),
        (lambda x: print(end="") or x * 2, "calls print"),
    ],
)
def test_python_side_effects_in_the_function_run_it_eagerly(body: Any, reason: str) -> None:
    LOG.clear()
    g = ember.compile(body)
    for _ in range(3):
        assert g(ember.ones(2)).tolist() == [2.0, 2.0]
    assert any(reason in r for r in g.graph_breaks), g.graph_breaks
    if "LOG" in reason:
        assert len(LOG) == 3, "the append happened at every call"


def test_writing_an_item_or_attribute_of_outer_state_runs_eagerly() -> None:
    cache: dict[str, Any] = {}

    class State:
        step = 0

    state = State()

    def f(x: Any) -> Any:
        cache["last"] = x
        return x + 1

    def h(x: Any) -> Any:
        state.step = state.step + 1
        return x + 1

    for fn, why in ((f, "writes an item of cache"), (h, "sets state.step")):
        g = ember.compile(fn, backend="aot_eager")
        g(ember.ones(1))
        g(ember.ones(1))
        assert any(why in r for r in g.graph_breaks), g.graph_breaks
    assert state.step == 2 and cache["last"].tolist() == [1.0]


def test_a_compiled_module_whose_forward_appends_to_a_global_runs_eagerly() -> None:
    class Logging(ember.nn.Module):
        def forward(self, x: Any) -> Any:
            LOG.append(1)
            return x * 3

    LOG.clear()
    m = ember.compile(Logging(), backend="aot_eager")
    m(ember.ones(1))
    m(ember.ones(1))
    assert LOG == [1, 1]
    assert any("calls LOG.append" in r for r in m.graph_breaks)


def test_pure_functions_with_local_lists_still_compile() -> None:
    def f(x: Any) -> Any:
        parts = []
        for k in range(3):
            parts.append(x * k)
        return ember.stack(parts).sum(0)

    g = ember.compile(f, backend="aot_eager")
    assert g(ember.ones(2)).tolist() == [3.0, 3.0]
    assert g.graph_breaks == []


def test_a_write_aot_cannot_trace_runs_eagerly_under_compile() -> None:
    """A write under no_grad into an input that requires grad, then a differentiable use:
    AOTAutograd cannot trace it yet, so ember.compile runs it eagerly (a bare aot_function
    raises NotImplementedError)."""

    def f(x: Any) -> Any:
        with ember.no_grad():
            x.mul_(2)
        return (x * x).sum()

    def run(compiled: bool) -> tuple[float, list[float], list[float]]:
        x = ember.ones(3, requires_grad=True)
        out = (ember.compile(f, backend="aot_eager") if compiled else f)(x)
        out.backward()
        return out.item(), x.detach().tolist(), x.grad.tolist()

    assert run(True) == run(False) == (12.0, [2.0] * 3, [4.0] * 3)
    from ember.aot import aot_function, nop

    with pytest.raises(NotImplementedError, match="writes an input that requires grad"):
        aot_function(f, nop, nop)(ember.ones(3, requires_grad=True))
