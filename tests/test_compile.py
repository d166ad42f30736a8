"""ember.compile: backends (ember on each tier, aot_eager, eager, a custom callable), graph
breaks, compiled modules, the demo's compiled mode, and random programs through
ember.compile and aot_function against eager."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given

import ember
from ember._compile import Unsupported, counters
from ember.aot import aot_function, nop
from ember.aot.aot_autograd import GRAPH_BREAKS
from ember.aot.ember_backend import ember_compiler
from ember.fx.graph_module import GraphModule
from ember.ops.registry import OpOverload


def _mlp_step_fn(x, w1, b1, w2, b2):
    h = ember.nn.functional.linear(x, w1, b1).relu()
    return ember.nn.functional.log_softmax(ember.nn.functional.linear(h, w2, b2), -1)


def _params(seed=0):
    rng = np.random.default_rng(seed)
    shapes = [(8, 12), (16, 12), (16,), (4, 16), (4,)]
    return [ember.tensor(rng.standard_normal(s).astype(np.float32), requires_grad=i > 0)
            for i, s in enumerate(shapes)]  # fmt: skip


@pytest.mark.parametrize(
    "backend,mode",
    [("ember", None), ("ember", "reduce-overhead"), ("ember", "max-autotune"),
     ("aot_eager", None), ("eager", None)],
)  # fmt: skip
def test_backends_values_and_gradients_equal_eager(backend, mode):
    f = ember.compile(_mlp_step_fn, backend=backend, mode=mode)
    a, b = _params(), _params()
    for _ in range(3):  # the numba tier's kernels take over from the second run
        for t in a:
            t.grad = None
        out = f(*a)
        (out * out.detach().exp()).sum().backward()
    ref = _mlp_step_fn(*b)
    (ref * ref.detach().exp()).sum().backward()
    np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), rtol=1e-5, atol=1e-6)
    for x, y in zip(a[1:], b[1:], strict=True):
        np.testing.assert_allclose(x.grad.numpy(), y.grad.numpy(), rtol=1e-4, atol=1e-6)


def test_ember_backend_runs_generated_numpy_code_and_fuses():
    seen = []

    def spy(gm, example_inputs):
        fn = ember_compiler(gm, example_inputs, tier_name="numba")
        seen.append(fn.source)
        return fn

    f = aot_function(lambda x, w: ((x * w + 1).relu() * 0.5 + x).sum(), spy)
    x, w = ember.randn(50_000), ember.randn(50_000)
    for _ in range(2):
        out = f(x, w)
    np.testing.assert_allclose(out.item(), ((x * w + 1).relu() * 0.5 + x).sum().item(), rtol=1e-4)
    assert "def graph(" in seen[0] and "_fused" in seen[0]


def test_custom_backend_gets_a_graph_and_real_example_inputs():
    calls = []

    def backend(gm, example_inputs):
        calls.append((gm, example_inputs))
        assert isinstance(gm, GraphModule)
        assert all(
            isinstance(n.target, OpOverload) for n in gm.graph.find_nodes(op="call_function")
        )
        return gm.forward

    f = ember.compile(lambda x, y: (x @ y).tanh(), backend=backend)
    x = ember.randn(3, 4, requires_grad=True)
    y = ember.randn(4, 2)
    out = f(x, y)
    out.sum().backward()  # the callable runs under autograd
    assert len(calls) == 1 and calls[0][1][0] is x
    np.testing.assert_allclose(x.grad.numpy(), ((1 - (x @ y).tanh() ** 2) @ y.t()).detach().numpy(),
                               rtol=1e-5)  # fmt: skip
    f(x, y)
    assert len(calls) == 1
    f(ember.randn(5, 4), y)
    assert len(calls) == 2 and "float32[5, 4] vs float32[3, 4]" in f.explain()[0]


def test_unknown_backend_and_mode_say_what_exists():
    with pytest.raises(RuntimeError, match="unknown backend 'inductor'"):
        ember.compile(lambda x: x, backend="inductor")
    with pytest.raises(RuntimeError, match="unknown mode 'fast'"):
        ember.compile(lambda x: x, mode="fast")


def _branchy(x):
    if x.sum() > 0:
        return x * 2
    return x - 1


def test_fullgraph_raises_on_data_dependent_control_flow():
    f = ember.compile(_branchy, fullgraph=True)
    with pytest.raises(Unsupported, match="_local_scalar_dense"):
        f(ember.ones(3))
    g = ember.compile(lambda x: x[x > 0], fullgraph=True)  # data-dependent output shape
    with pytest.raises(Unsupported, match="nonzero|index"):
        g(ember.ones(3))


def test_graph_break_runs_on_the_lazy_device_and_is_counted():
    counters.clear()
    f = ember.compile(_branchy)
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    out = f(x)
    assert out.device.type == "cpu"
    np.testing.assert_array_equal(out.detach().numpy(), [2.0, 4.0])
    out.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 2.0])
    np.testing.assert_array_equal(f(-x.detach()).numpy(), [-2.0, -3.0])
    assert len(f.graph_breaks) == 2  # one per signature (requires_grad differs)
    assert sum(counters["graph_break"].values()) == 2
    assert "_local_scalar_dense" in f.graph_breaks[0]
    assert any("graph break" in r for r in f.explain())


def test_graph_break_applies_writes_to_inputs():
    def f(x, buf):
        buf.add_(1)
        return x[x > 0] * 2

    g = ember.compile(f)
    buf = ember.zeros(2)
    out = g(ember.tensor([-1.0, 3.0]), buf)
    np.testing.assert_array_equal(out.numpy(), [6.0])
    np.testing.assert_array_equal(buf.numpy(), [1.0, 1.0])


def test_compiled_module_keeps_state_dict_parameters_and_modes():
    ember.manual_seed(0)
    net = ember.nn.Sequential(ember.nn.Linear(6, 8), ember.nn.Dropout(0.5), ember.nn.Linear(8, 2))
    c = ember.compile(net)
    assert [n for n, _ in c.named_parameters()] == [
        "_orig_mod." + n for n, _ in net.named_parameters()
    ]
    assert list(c.parameters())[0] is net[0].weight
    assert list(c.state_dict()) == ["_orig_mod." + k for k in net.state_dict()]
    x = ember.randn(4, 6)
    c.eval()
    assert not net.training
    np.testing.assert_allclose(c(x).detach().numpy(), net(x).detach().numpy(), rtol=1e-6)
    c.train()
    assert net.training
    out = c(x)  # dropout: a new graph for training mode
    assert (out.detach().numpy() != net.eval()(x).detach().numpy()).any()
    assert any("bool True vs bool False" in r for r in c.explain())  # training flags
    net.answer = 42
    assert c._orig_mod is net and c.answer == 42  # attributes of the original


def test_compiled_training_matches_eager_with_batch_norm():
    def build():
        ember.manual_seed(1)
        return ember.nn.Sequential(
            ember.nn.Linear(5, 7), ember.nn.BatchNorm1d(7), ember.nn.ReLU(), ember.nn.Linear(7, 3)
        )

    eager, model = build(), build()
    compiled = ember.compile(model)
    opt_e = ember.optim.SGD(eager.parameters(), lr=0.1)
    opt_c = ember.optim.SGD(model.parameters(), lr=0.1)
    rng = np.random.default_rng(0)
    for _ in range(4):
        x = ember.tensor(rng.standard_normal((6, 5)).astype(np.float32))
        y = ember.tensor(rng.integers(0, 3, 6))
        for m, opt in ((eager, opt_e), (compiled, opt_c)):
            opt.zero_grad()
            loss = ember.nn.functional.cross_entropy(m(x), y)
            loss.backward()
            opt.step()
    for (n, a), b in zip(eager.state_dict().items(), model.state_dict().values(), strict=True):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-6, err_msg=n)


def test_demo_compiled_mode_has_the_same_losses():
    from ember.demo import data, models
    from ember.demo.train import train

    split = data.split_digits(64)
    accs = {}
    for mode in ("eager", "compiled"):
        ember.manual_seed(0)
        m = models.mlp()
        opt = models.RECIPES["mlp"].optimizer(m.parameters())
        r = train("mlp", m, opt, split, epochs=1, batch_size=16, seed=0, mode=mode)
        accs[mode] = (r.accuracy, [p.detach().numpy().copy() for p in m.parameters()])
    assert accs["eager"][0] == accs["compiled"][0]
    for a, b in zip(accs["eager"][1], accs["compiled"][1], strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)


def test_compiled_one_op_call_reuses_its_entry():
    f = ember.compile(lambda x: x + 1)
    x = ember.ones(4)
    f(x)
    entry = f.impl.cache
    f(x)
    assert len(entry) == 1


# ---------------------------------------------------------------- random programs


def _run_compiled(program: Any, compile_fn: Any) -> Any:
    """The program's steps as one function, compiled, then the loss and backward eagerly."""
    from ember.testing._internal.programs import Run, _weights

    inputs = [inp.make(ember) for inp in program.inputs]
    names = [inp.name for inp in program.inputs]
    outs_names = [o for s in program.steps for o in s.outputs]

    def body(*xs):
        values = dict(zip(names, xs, strict=True))
        for step in program.steps:
            values.update(zip(step.outputs, step.execute(ember, values), strict=True))
        return tuple(values[n] for n in outs_names)

    run = Run({}, {})
    try:
        outs = compile_fn(body)(*inputs)
    except GRAPH_BREAKS:
        return None
    except Exception as exc:  # noqa: BLE001 - the error is the finding
        run.error = f"compiled run raised {type(exc).__name__}: {exc}"
        return run
    run.values.update(zip(names, inputs, strict=True))
    run.values.update(zip(outs_names, outs, strict=True))
    if program.loss:
        loss = sum((run.values[n] * _weights(ember, run.values[n])).sum() for n in program.loss)
        loss.backward()
        for inp, x in zip(program.inputs, inputs, strict=True):
            if inp.requires_grad:
                run.grads[inp.name] = x.grad
    return run


COMPILERS = {
    "ember.compile": lambda body: ember.compile(body),
    "aot_function": lambda body: aot_function(body, nop),
}


@pytest.mark.parametrize("how", list(COMPILERS))
def test_random_programs_compiled_equal_eager(how):
    """Random programs (tests/test_random_programs.py) through ember.compile and
    aot_function against eager: values, dtypes, shapes and input gradients.
    ``EMBER_COMPILE_PROGRAMS`` sets how many (default 40; explore with more)."""
    pytest.importorskip("torch")  # the generator runs candidate steps with PyTorch
    from ember.testing._internal.programs import compare, program_settings, programs

    @program_settings(40)
    @given(programs())
    def check(program: Any) -> None:
        actual = _run_compiled(program, COMPILERS[how])
        if actual is None:  # aot_function cannot trace a data-dependent program
            return
        expected = program.run(ember)
        raised = (actual.error or "").partition("compiled run raised ")[2]
        if raised and (expected.error or "").endswith(f"raised {raised}"):
            return  # eager raises the same error at one of the steps
        problems = compare(program, actual, expected)
        assert not problems, f"{program.to_source()}\n" + "\n".join(problems)

    check()


def test_compile_without_networkx_uses_the_default_partitioner(monkeypatch) -> None:
    """NOTE [partitioner without networkx]: a plain ``pip install .`` has no networkx; the
    "ember" backend then partitions as the default partitioner does, with eager's values."""
    import sys

    from ember import _compile
    from ember.aot.partitioners import default_partition

    monkeypatch.setitem(sys.modules, "networkx", None)  # ``import networkx`` raises
    assert _compile._partitioner() is default_partition
    ember.manual_seed(0)
    model = ember.nn.Sequential(ember.nn.Linear(4, 8), ember.nn.ReLU(), ember.nn.Linear(8, 2))
    x = ember.randn(5, 4)
    eager = model(x).sum()
    eager.backward()
    grads = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    compiled = ember.compile(model)(x).sum()
    compiled.backward()
    assert ember.allclose(compiled, eager)
    for p, g in zip(model.parameters(), grads, strict=True):
        assert ember.allclose(p.grad, g)
