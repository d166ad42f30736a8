"""ember.compile of functions with side effects outside their arguments (NOTE [compile
side effects]): ``backward()``, optimizer steps, writes to globals, reads of parameters
from a closure. Each used to run once at trace time on fake tensors and never again (a
silently wrong training loop); now each is a graph break that runs the function eagerly,
with the eager function's results, or (closure tensors: tests/test_compile_lifted.py) an
input of the graph."""

from __future__ import annotations

from typing import Any

import pytest

import ember
from ember._compile import Unsupported
from ember.fx.experimental.proxy_tensor import make_fx

BACKENDS = ["ember", "aot_eager", "custom"]


def _compile(fn: Any, backend: str, **kw: Any) -> Any:
    if backend == "custom":

        def run_graph(gm: Any, example_inputs: Any) -> Any:
            return gm

        return ember.compile(fn, backend=run_graph, **kw)
    return ember.compile(fn, backend=backend, **kw)


def _model_and_data(seed: int = 0) -> tuple[Any, Any, Any]:
    ember.manual_seed(seed)
    model = ember.nn.Sequential(ember.nn.Linear(4, 8), ember.nn.Tanh(), ember.nn.Linear(8, 1))
    return model, ember.randn(16, 4), ember.randn(16, 1)


def _train(
    compiled: bool, backend: str, opt_cls: Any, steps: int = 4, read: bool = False
) -> tuple[list, list]:
    """Losses and final parameters of ``steps`` training steps, each one function
    (``read``: it reads the loss's value before ``backward()``)."""
    model, x, y = _model_and_data()
    opt = opt_cls(model.parameters(), lr=0.05)

    def step(x: Any, y: Any) -> Any:
        opt.zero_grad()
        loss = ember.nn.functional.mse_loss(model(x), y)
        if not read or loss.item() > 0:
            loss.backward()
            opt.step()
        return loss

    run = _compile(step, backend) if compiled else step
    losses = [float(run(x, y)) for _ in range(steps)]
    return losses, [p.detach().clone() for p in model.parameters()]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("opt_name", ["SGD", "Adam"])
def test_a_compiled_training_step_trains_as_eager(backend: str, opt_name: str) -> None:
    opt_cls = getattr(ember.optim, opt_name)
    eager_losses, eager_params = _train(False, backend, opt_cls)
    losses, params = _train(True, backend, opt_cls)
    assert losses == pytest.approx(eager_losses, rel=1e-6)
    assert losses[0] != losses[-1]  # the parameters moved
    for p, q in zip(params, eager_params, strict=True):
        assert ember.allclose(p, q, rtol=1e-6, atol=1e-7)


def test_the_gradients_left_by_a_compiled_step_are_real_tensors() -> None:
    model, x, y = _model_and_data()

    def step(x: Any) -> Any:
        loss = model(x).sum()
        loss.backward()
        return loss

    compiled = ember.compile(step)
    compiled(x)
    grad = model[0].weight.grad
    assert type(grad) is ember.Tensor
    model.zero_grad()
    step(x)
    assert ember.allclose(grad, model[0].weight.grad)
    assert compiled.graph_breaks and "GraphBreak" in compiled.graph_breaks[0]


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_write_to_a_global_happens_at_every_call(backend: str) -> None:
    counter = ember.zeros(3)

    def f(x: Any) -> Any:
        counter.add_(1)
        return x * 2

    compiled = _compile(f, backend)
    for _ in range(3):
        out = compiled(ember.ones(3))
    assert counter.tolist() == [3.0, 3.0, 3.0]
    assert out.tolist() == [2.0, 2.0, 2.0]
    # NOTE [lifted tensors]: the global is an input of the graph, its write an input
    # mutation replayed at every call: no graph break
    assert compiled.graph_breaks == []


def test_a_write_through_a_view_of_a_global_is_a_break_too() -> None:
    table = ember.zeros(2, 3)

    def f(x: Any) -> Any:
        table[0].add_(x)
        return x.sum()

    compiled = ember.compile(f)
    compiled(ember.ones(3))
    compiled(ember.ones(3))
    assert table.tolist() == [[2.0, 2.0, 2.0], [0.0, 0.0, 0.0]]


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_parameter_read_from_a_closure_gets_its_gradient(backend: str) -> None:
    lin = ember.nn.Linear(3, 2)
    compiled = _compile(lambda x: lin(x).sum(), backend)
    out = compiled(ember.ones(4, 3))
    assert out.requires_grad
    out.backward()
    assert lin.weight.grad is not None
    assert lin.weight.grad.tolist() == [[4.0, 4.0, 4.0], [4.0, 4.0, 4.0]]


def test_a_closure_parameter_under_no_grad_still_compiles_to_a_graph() -> None:
    lin = ember.nn.Linear(3, 2)
    compiled = ember.compile(lambda x: lin(x).relu())
    with ember.no_grad():
        out = compiled(ember.ones(4, 3))
        with ember.no_grad():
            expected = lin(ember.ones(4, 3)).relu()
    assert compiled.graph_breaks == []
    assert ember.allclose(out, expected)
    with ember.no_grad():
        lin.weight.mul_(2)  # the graph reads the parameter's current value
        assert ember.allclose(compiled(ember.ones(4, 3)), lin(ember.ones(4, 3)).relu())


def test_writes_to_the_arguments_stay_in_the_graph() -> None:
    def f(x: Any) -> Any:
        x.mul_(2)
        return x + 1

    compiled = ember.compile(f)
    x = ember.ones(3)
    out = compiled(x)
    assert compiled.graph_breaks == []
    assert x.tolist() == [2.0, 2.0, 2.0] and out.tolist() == [3.0, 3.0, 3.0]


def test_compiling_an_optimizer_step_updates_the_parameters() -> None:
    results = []
    for compiled in (False, True):
        model, x, y = _model_and_data()
        opt = ember.optim.Adam(model.parameters(), lr=0.1)
        step = ember.compile(opt.step) if compiled else opt.step
        for _ in range(3):
            opt.zero_grad()
            ember.nn.functional.mse_loss(model(x), y).backward()
            step()
        results.append([p.detach().clone() for p in model.parameters()])
    for p, q in zip(*results, strict=True):
        assert ember.allclose(p, q)


def test_fullgraph_refuses_a_side_effect() -> None:
    lin = ember.nn.Linear(3, 1)

    def step(x: Any) -> Any:
        with ember.no_grad():
            out = lin(x).sum()
        out.requires_grad_(True).backward()
        return out

    with pytest.raises(Unsupported, match=r"step has a side effect.*backward\(\)"):
        ember.compile(step, fullgraph=True)(ember.ones(2, 3))


def test_a_read_value_then_backward_runs_eagerly() -> None:
    """A data-dependent read first (the graph-break pieces' trace), then backward: the
    pieces' real-tensor trace stops at the side effect before it happens."""
    eager_losses, eager_params = _train(False, "ember", ember.optim.SGD, read=True)
    losses, params = _train(True, "ember", ember.optim.SGD, read=True)
    assert losses == pytest.approx(eager_losses, rel=1e-6)
    for p, q in zip(params, eager_params, strict=True):
        assert ember.allclose(p, q, rtol=1e-6, atol=1e-7)


def test_make_fx_still_traces_backward_and_closures() -> None:
    """Only ember.compile's trace of user code breaks: make_fx records a backward inside
    the traced function and reads a closure's parameter as a constant, as PyTorch's."""
    w = ember.ones(3, requires_grad=True)

    def f(x: Any) -> Any:
        y = (x * w).sum()
        y.backward()
        return y

    gm = make_fx(f)(ember.ones(3))
    assert any(n.op == "get_attr" for n in gm.graph.nodes)
    assert w.grad is not None and w.grad.tolist() == [1.0, 1.0, 1.0]


@pytest.mark.parametrize("backend", ["ember", "aot_eager"])
def test_a_compiled_lazy_module_infers_its_shapes_eagerly_then_compiles(backend: str) -> None:
    ember.manual_seed(0)
    model = ember.nn.Sequential(ember.nn.LazyLinear(3), ember.nn.ReLU(), ember.nn.LazyLinear(1))
    compiled = ember.compile(model, backend=backend)
    x = ember.randn(4, 5)
    first = compiled(x)  # runs eagerly: the parameters get their shapes
    assert model[0].weight.shape == (3, 5) and model[2].weight.shape == (1, 3)
    assert type(model[0]) is ember.nn.Linear
    impl = compiled.__dict__["_compiled"].impl
    assert len(impl.cache) == 0
    second = compiled(x)
    assert len(impl.cache) == 1  # now traced
    second.sum().backward()
    grads = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    expected = model(x)
    expected.sum().backward()
    assert ember.allclose(first, expected) and ember.allclose(second, expected)
    for g, p in zip(grads, model.parameters(), strict=True):
        assert ember.allclose(g, p.grad)


class _Counting(ember.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = ember.nn.Linear(2, 2)
        self.calls = 0
        self.last: Any = None

    def forward(self, x: Any) -> Any:
        self.calls += 1
        out = self.lin(x)
        self.last = out
        return out


def test_a_module_setting_its_own_attributes_in_forward_runs_eagerly() -> None:
    """``self.calls += 1`` would run at trace time only, and ``self.last = out`` would keep
    a fake tensor: each call runs as written instead."""
    model = _Counting()
    compiled = ember.compile(model)
    x = ember.ones(1, 2)
    for _ in range(3):
        out = compiled(x)
    assert model.calls == 3
    assert type(model.last) is ember.Tensor and ember.equal(model.last, out)
    assert "sets self.calls" in compiled.graph_breaks[0]


def test_common_modules_compile_without_a_graph_break() -> None:
    """ember's own modules set no state of theirs in forward, so none of them breaks."""
    nn = ember.nn
    cases = [
        (nn.Conv2d(2, 3, 3), (ember.randn(1, 2, 6, 6),)),
        (nn.BatchNorm2d(2), (ember.randn(2, 2, 4, 4),)),
        (nn.LSTM(4, 5, batch_first=True), (ember.randn(2, 3, 4),)),
        (nn.TransformerEncoderLayer(8, 2, 16, batch_first=True), (ember.randn(2, 3, 8),)),
        (nn.MultiheadAttention(8, 2, batch_first=True), (ember.randn(2, 3, 8),) * 3),
        (nn.utils.parametrizations.spectral_norm(nn.Linear(3, 2)), (ember.randn(2, 3),)),
    ]
    for module, args in cases:
        compiled = ember.compile(module)
        compiled(*args)
        assert compiled.graph_breaks == [], type(module).__name__


def _closure_run(program: Any, compiled: bool) -> Any:
    """The program's steps as a function of no arguments reading its inputs from a closure,
    called twice (the inputs doubled in place between the calls) under no_grad: its
    values, and the inputs after both calls (writes into them must land each time)."""
    from ember.testing._internal.programs import Run

    # not requiring grad: a view of a closure's tensor that requires grad, made under
    # no_grad, requires grad eagerly (as PyTorch's) but is a graph output here
    inputs = [inp.make(ember).requires_grad_(False) for inp in program.inputs]
    names = [inp.name for inp in program.inputs]
    outs_names = [o for s in program.steps for o in s.outputs]

    def body() -> Any:
        values = dict(zip(names, inputs, strict=True))
        for step in program.steps:
            values.update(zip(step.outputs, step.execute(ember, values), strict=True))
        return tuple(values[n] for n in outs_names)

    fn = ember.compile(body) if compiled else body
    run = Run({}, {})
    with ember.no_grad():
        try:
            fn()
            for x in inputs:
                if x.is_floating_point():
                    x.mul_(2)
            outs = fn()
        except Exception as exc:  # noqa: BLE001 - the error is the finding
            run.error = f"{type(exc).__name__}: {exc}"
            return run
    run.values.update(zip(names, inputs, strict=True))
    run.values.update(zip(outs_names, outs, strict=True))
    return run


def test_random_programs_over_closure_tensors_compiled_equal_eager() -> None:
    """Random programs (tests/test_random_programs.py) whose inputs are a closure's, not
    arguments: they are lifted into the graph as inputs (NOTE [lifted tensors]), read at
    each call, and a write into one (directly or through a view) is done at each call.
    ``EMBER_COMPILE_PROGRAMS`` sets how many (``EMBER_COMPILE_EXPLORE``: new ones)."""
    pytest.importorskip("torch")  # the generator runs candidate steps with PyTorch
    from hypothesis import given

    from ember.testing._internal.programs import compare, program_settings, programs

    @program_settings(30)
    @given(programs())
    def check(program: Any) -> None:
        expected = _closure_run(program, compiled=False)
        if expected.error is not None:
            return  # the program itself fails under this protocol (a write to a leaf)
        actual = _closure_run(program, compiled=True)
        problems = compare(program, actual, expected)
        assert not problems, f"{program.to_source()}\n" + "\n".join(problems)

    check()


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_closure_tensor_is_read_at_every_call_never_folded(backend: str) -> None:
    """NOTE [live constants]: a graph of a closure's tensor alone (no argument) is not
    folded to its value at compile time."""
    x = ember.full((), 0.5)
    compiled = _compile(lambda: ember.abs(x) * 2, backend)
    with ember.no_grad():
        assert compiled().item() == 1.0
        x.mul_(3)
        assert compiled().item() == 3.0


def test_a_generator_made_in_the_function_runs_eagerly() -> None:
    """A Generator made (or reseeded) inside starts afresh at each eager call; a graph made
    from one trace would draw on from its state."""

    def draw(x: Any) -> Any:
        g = ember.Generator().manual_seed(7)
        return ember.rand(3, generator=g) + x

    compiled = ember.compile(draw)
    first, second = compiled(ember.zeros(3)), compiled(ember.zeros(3))
    assert ember.equal(first, second) and ember.equal(first, draw(ember.zeros(3)))
    assert "Generator" in compiled.graph_breaks[0]
    outside = ember.Generator().manual_seed(7)  # made outside: the graph draws from it
    compiled_outside = ember.compile(lambda x: ember.rand(3, generator=outside) + x)
    a, b = compiled_outside(ember.zeros(3)), compiled_outside(ember.zeros(3))
    eager = ember.Generator().manual_seed(7)
    assert ember.equal(a, ember.rand(3, generator=eager))
    assert ember.equal(b, ember.rand(3, generator=eager))


def test_aliasing_arguments_without_writes_stay_one_graph() -> None:
    g = ember.compile(lambda a, b: a + b, backend="aot_eager")
    x = ember.arange(4.0)
    assert ember.equal(g(x, x[:4]), x * 2)
    assert not g.graph_breaks


@pytest.mark.parametrize("backend", BACKENDS)
def test_reading_grad_in_a_compiled_function_runs_eagerly(backend: str) -> None:
    """The trace's tensors hold no .grad: reading the argument's is a graph break."""

    def f(x: Any) -> Any:
        return x.grad * 2 if x.grad is not None else x * 0

    g = _compile(f, backend)
    w = ember.ones(2, requires_grad=True)
    w.grad = ember.full((2,), 5.0)
    assert ember.equal(g(w), ember.full((2,), 10.0))
    assert any(".grad" in r for r in g.graph_breaks)
    with pytest.raises(Unsupported, match=r"\.grad"):
        _compile(f, backend, fullgraph=True)(w)


def test_setting_grad_in_a_compiled_function_runs_eagerly() -> None:
    def f(x: Any) -> Any:
        x.grad = None
        return x * 1

    w = ember.ones(2, requires_grad=True)
    w.grad = ember.ones(2)
    ember.compile(f, backend="aot_eager")(w)
    assert w.grad is None


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_write_into_an_input_that_requires_grad_runs_eagerly(backend: str) -> None:
    """The trace's inputs are leaves, so the write raised autograd's leaf error from
    ember.compile (eagerly the input is not a leaf and the write is fine)."""
    leaf = ember.ones(4, requires_grad=True)
    g = _compile(lambda a: a.mul_(2) * 3, backend)
    out = g(leaf.clone())
    out.sum().backward()
    assert ember.equal(out, ember.full((4,), 6.0))
    assert ember.equal(leaf.grad, ember.full((4,), 6.0))
    assert any("writes an input that requires grad in place" in r for r in g.graph_breaks)
    with pytest.raises(RuntimeError, match="leaf Variable"):  # eagerly a leaf refuses it
        g(leaf)
