"""ember.export.export against torch.export.export: the same ops in the graph (PyTorch's
training IR: pre-dispatch, writes kept), the same placeholder names and signature, and
module() computing what the module computes, buffers updated."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import ember
import ember.export

torch = pytest.importorskip("torch")


def _models(lib: Any) -> dict[str, Any]:
    nn = lib.nn

    class WithBN(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.lin = nn.Linear(3, 2)
            self.bn = nn.BatchNorm1d(2)

        def forward(self, x: Any) -> Any:
            return self.bn(self.lin(x)).relu()

    class Conv(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.conv = nn.Conv2d(1, 2, 3, padding=1)
            self.head = nn.Linear(8, 3)

        def forward(self, x: Any) -> Any:
            y = nn.functional.max_pool2d(self.conv(x).relu(), 2)
            return self.head(y.flatten(1)).log_softmax(-1)

    class TwoInputs(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.w = nn.Parameter(lib.ones(3))
            self.register_buffer("scale", lib.full((3,), 2.0))
            self.register_buffer("offset", lib.zeros(3), persistent=False)

        def forward(self, x: Any, y: Any) -> Any:
            return (x * self.w + y) * self.scale + self.offset, x.sum()

    return {
        "linear": (nn.Linear(3, 2), ((4, 3),)),
        "mlp": (nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 2)), ((5, 4),)),
        "bn": (WithBN(), ((4, 3),)),
        "conv": (Conv(), ((2, 1, 4, 4),)),
        "two inputs": (TwoInputs(), ((3,), (3,))),
    }


def _ops(graph: Any) -> list[str]:
    return [str(n.target) for n in graph.nodes if n.op == "call_function"]


def _specs(sig: Any) -> list[tuple[str, str, Any, Any]]:
    return [(s.kind.name, s.arg.name, s.target, s.persistent) for s in sig.input_specs]


def _export_both(name: str) -> tuple[Any, Any, Any, Any, list[np.ndarray]]:
    ember.manual_seed(0)
    em, shapes = _models(ember)[name]
    tm, _ = _models(torch)[name]
    tm.load_state_dict({k: torch.from_numpy(v.numpy().copy()) for k, v in em.state_dict().items()})
    rng = np.random.default_rng(0)
    data = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    eargs = tuple(ember.from_numpy(d.copy()) for d in data)
    targs = tuple(torch.from_numpy(d.copy()) for d in data)
    return ember.export.export(em, eargs), torch.export.export(tm, targs), em, tm, data


@pytest.mark.parametrize("name", ["linear", "mlp", "bn", "conv", "two inputs"])
def test_graph_and_signature_equal_torchs(name: str) -> None:
    ep, tep, *_ = _export_both(name)
    assert _ops(ep.graph) == _ops(tep.graph)
    assert _specs(ep.graph_signature) == _specs(tep.graph_signature)
    assert [s.kind.name for s in ep.graph_signature.output_specs] == [
        s.kind.name for s in tep.graph_signature.output_specs
    ]
    assert list(ep.state_dict) == list(tep.state_dict)
    assert ep.graph_signature.parameters == tep.graph_signature.parameters
    assert ep.graph_signature.buffers == tep.graph_signature.buffers
    assert ep.graph_signature.user_inputs == tep.graph_signature.user_inputs
    assert ep.graph_signature.inputs_to_parameters == tep.graph_signature.inputs_to_parameters
    assert ep.graph_signature.inputs_to_buffers == tep.graph_signature.inputs_to_buffers


@pytest.mark.parametrize("name", ["linear", "mlp", "bn", "conv", "two inputs"])
def test_module_computes_what_the_module_computes(name: str) -> None:
    ep, tep, em, tm, data = _export_both(name)
    run = ep.module()
    assert list(run.state_dict()) == list(tep.module().state_dict())
    got = run(*[ember.from_numpy(d.copy()) for d in data])
    want = tep.module()(*[torch.from_numpy(d.copy()) for d in data])
    got = got if isinstance(got, tuple) else (got,)
    want = want if isinstance(want, tuple) else (want,)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g.detach().numpy(), w.detach().numpy(), rtol=1e-5, atol=1e-6)


def test_module_updates_the_buffers_as_the_module_does() -> None:
    ep, tep, em, tm, data = _export_both("bn")
    run = ep.module()
    before = em.bn.running_mean.clone()
    run(ember.from_numpy(data[0].copy()))
    tep.module()(torch.from_numpy(data[0].copy()))
    assert int(em.bn.num_batches_tracked) == int(tm.bn.num_batches_tracked) == 1
    assert not ember.equal(em.bn.running_mean, before), "module() shares the state"
    np.testing.assert_allclose(
        em.bn.running_mean.numpy(), tm.bn.running_mean.numpy(), rtol=1e-5, atol=1e-7
    )


def test_printing_reads_as_torchs() -> None:
    ep, tep, *_ = _export_both("linear")
    text = str(ep)
    assert text.startswith("ExportedProgram:\n    class GraphModule(")
    assert "p_weight: PARAMETER target='weight'" in text and "input: USER_INPUT" in text
    assert "linear: USER_OUTPUT" in text and "return (linear,)" in text


def test_run_decompositions_lowers_below_autograd() -> None:
    ep, *_ = _export_both("mlp")
    low = ep.run_decompositions()
    ops = _ops(low.graph)
    assert "aten.linear.default" not in ops and "aten.addmm.default" in ops
    x = ember.randn(5, 4)
    assert ember.allclose(low.module()(x), ep.module()(x))
    assert low.graph_signature.parameters == ep.graph_signature.parameters


def test_tied_weights_are_one_input() -> None:
    class Tied(ember.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.a = ember.nn.Linear(2, 2, bias=False)
            self.b = ember.nn.Linear(2, 2, bias=False)
            self.b.weight = self.a.weight

        def forward(self, x: Any) -> Any:
            return self.b(self.a(x))

    m = Tied()
    ep = ember.export.export(m, (ember.ones(1, 2),))
    assert ep.graph_signature.parameters == ("a.weight",)
    assert not any(n.op == "get_attr" for n in ep.graph.nodes)
    assert ember.allclose(ep.module()(ember.ones(1, 2)), m(ember.ones(1, 2)))


def test_refusals_say_what_to_pass() -> None:
    lin = ember.nn.Linear(3, 2)
    with pytest.raises(ValueError, match="tuple of example positional inputs"):
        ember.export.export(lin, [ember.ones(1, 3)])
    with pytest.raises(ValueError, match=r"instance of `torch.nn.Module`"):
        ember.export.export(lambda x: x, (ember.ones(1),))
    with pytest.raises(NotImplementedError, match="dynamic_shapes"):
        ember.export.export(lin, (ember.ones(1, 3),), dynamic_shapes={"x": None})
    ep = ember.export.export(lin, (ember.ones(1, 3),))
    with pytest.raises(RuntimeError, match="use `exported_program.module"):
        ep(ember.ones(1, 3))
    with pytest.raises(ValueError, match="structure differs"):
        ep.module()(ember.ones(1, 3), ember.ones(1, 3))
