"""``ExportedProgram.run_decompositions()`` against PyTorch's: a pure graph of the same ops,
the new values of written parameters, buffers and user inputs returned first with their
kinds in the signature, and ``module()`` writing them back; batch norm's undeclared writes
traced as ``_native_batch_norm_legit_functional`` (NOTE [undeclared writes]), in export and
in AOTAutograd alike."""

from __future__ import annotations

import collections
from typing import Any

import numpy as np
import pytest

import ember
import ember.export
from ember.aot import aot_function
from ember.export.graph_signature import OutputKind
from tests.test_export import _models

torch = pytest.importorskip("torch")


def _writing(lib: Any) -> tuple[Any, tuple[tuple[int, ...], ...]]:
    """A module writing a buffer, a user input and (through batch norm) running stats."""
    nn = lib.nn

    class Writes(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.bn = nn.BatchNorm1d(3)
            self.register_buffer("count", lib.zeros(1))

        def forward(self, x: Any, y: Any) -> Any:
            self.count.add_(1)
            y.mul_(2)
            return self.bn(x) + y, self.count

    return Writes(), ((4, 3), (3,))


def _both(name: str) -> tuple[Any, Any, Any, Any, list[np.ndarray]]:
    if name == "writes":
        (e, shapes), (t, _) = _writing(ember), _writing(torch)
    else:
        (e, shapes), (t, _) = _models(ember)[name], _models(torch)[name]
    t.load_state_dict({k: torch.from_numpy(v.numpy().copy()) for k, v in e.state_dict().items()})
    rng = np.random.default_rng(0)
    xs = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    ep = ember.export.export(e, tuple(ember.from_numpy(x.copy()) for x in xs))
    tp = torch.export.export(t, tuple(torch.from_numpy(x.copy()) for x in xs))
    return ep.run_decompositions(), tp.run_decompositions(), e, t, xs


def _ops(graph: Any) -> collections.Counter[str]:
    return collections.Counter(str(n.target) for n in graph.nodes if n.op == "call_function")


NAMES = ["linear", "mlp", "bn", "conv", "two inputs", "writes"]


@pytest.mark.parametrize("name", NAMES)
def test_the_decomposed_graph_has_torchs_ops_and_signature(name: str) -> None:
    ep, tp, *_ = _both(name)
    assert _ops(ep.graph) == _ops(tp.graph)
    outputs = [(s.kind.name, s.target) for s in ep.graph_signature.output_specs]
    assert outputs == [(s.kind.name, s.target) for s in tp.graph_signature.output_specs]
    inputs = [(s.kind.name, s.target) for s in ep.graph_signature.input_specs]
    assert inputs == [(s.kind.name, s.target) for s in tp.graph_signature.input_specs]


@pytest.mark.parametrize("name", NAMES)
def test_the_decomposed_graph_is_pure(name: str) -> None:
    ep, *_ = _both(name)
    for n in ep.graph.nodes:
        if n.op == "call_function" and hasattr(n.target, "_schema"):
            assert not n.target._schema.is_mutable, n.format_node()
            assert n.target is not ember.ops.aten.native_batch_norm.default


def test_module_writes_back_what_the_program_writes() -> None:
    ep, tp, e, t, xs = _both("writes")
    assert ep.graph_signature.buffers_to_mutate == {
        s.arg.name: s.target
        for s in ep.graph_signature.output_specs
        if s.kind is OutputKind.BUFFER_MUTATION
    }
    assert sorted(ep.graph_signature.buffers_to_mutate.values()) == sorted(
        tp.graph_signature.buffers_to_mutate.values()
    )
    assert list(ep.graph_signature.user_inputs_to_mutate.values()) == ["y"]
    em, tm = ep.module(), tp.module()
    ex, ey = (ember.from_numpy(x.copy()) for x in xs)
    tx, ty = (torch.from_numpy(x.copy()) for x in xs)
    for _ in range(2):  # the second call starts from the first one's writes
        (eo, ec), (to, tc) = em(ex, ey), tm(tx, ty)
        np.testing.assert_allclose(eo.detach().numpy(), to.detach().numpy(), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(ec.numpy(), tc.numpy())
    np.testing.assert_allclose(ey.numpy(), ty.numpy())  # the user input, written twice
    for (name, eb), (_, tb) in zip(em.named_buffers(), tm.named_buffers(), strict=True):
        np.testing.assert_allclose(eb.numpy(), tb.numpy(), rtol=1e-5, atol=1e-6, err_msg=name)


def test_output_kinds_are_numbered_as_torchs() -> None:
    from torch.export.graph_signature import OutputKind as TorchKind

    assert {k.name: k.value for k in OutputKind} == {k.name: k.value for k in TorchKind}


def test_a_metadata_write_into_an_input_is_refused_by_name() -> None:
    class T(ember.nn.Module):
        def forward(self, x: Any) -> Any:
            x.t_()
            return x + 1

    ep = ember.export.export(T(), (ember.ones(2, 3),))
    with pytest.raises(NotImplementedError, match=r"input 'x' in place \(from \[2, 3\] to"):
        ep.run_decompositions()


def test_aot_traces_batch_norm_training_as_its_functional_op() -> None:
    graphs: list[Any] = []

    def capture(gm: Any, example: Any) -> Any:
        graphs.append(gm)
        return gm

    def f(x: Any, w: Any, rm: Any, rv: Any) -> Any:
        return ember.nn.functional.batch_norm(x, rm, rv, w, training=True).sum()

    x = ember.randn(4, 3, requires_grad=True)
    w = ember.ones(3, requires_grad=True)
    rm, rv = ember.zeros(3), ember.ones(3)
    aot_function(f, capture)(x, w, rm, rv).backward()
    rm0, rv0 = ember.zeros(3), ember.ones(3)
    x0, w0 = x.detach().requires_grad_(), w.detach().requires_grad_()
    f(x0, w0, rm0, rv0).backward()
    assert ember.allclose(rm, rm0) and ember.allclose(rv, rv0)
    assert rm._version == rm0._version == 1
    assert ember.allclose(x.grad, x0.grad, atol=1e-6) and ember.allclose(w.grad, w0.grad)
    forward = graphs[0].graph
    targets = [n.target for n in forward.nodes if n.op == "call_function"]
    assert ember.ops.aten._native_batch_norm_legit_functional.default in targets
    assert not any(getattr(t, "_schema", None) and t._schema.is_mutable for t in targets)


def test_batch_norm_in_evaluation_stays_native_batch_norm() -> None:
    graphs: list[Any] = []

    def capture(gm: Any, example: Any) -> Any:
        graphs.append(gm)
        return gm

    bn = ember.nn.BatchNorm1d(3).eval()
    version = bn.running_mean._version
    with ember.no_grad():
        aot_function(lambda x: bn(x), capture)(ember.randn(4, 3))
    targets = [n.target for n in graphs[0].graph.nodes if n.op == "call_function"]
    assert ember.ops.aten.native_batch_norm.default in targets
    assert bn.running_mean._version == version  # nothing written
