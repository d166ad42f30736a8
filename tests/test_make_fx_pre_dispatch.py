"""``make_fx(pre_dispatch=True)`` (NOTE [pre-dispatch tracing] in
ember/fx/experimental/_pre_dispatch.py): the ops as called, above autograd and before
CompositeImplicitAutograd decompositions, with grad-mode switches as nodes; compared with
the graphs PyTorch's pre-dispatch tracer makes for the same functions."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import ember

from .conftest import requires_torch, torch


def _proxy(lib: Any) -> Any:
    return __import__(f"{lib.__name__}.fx.experimental.proxy_tensor", fromlist=["make_fx"])


def _program(lib: Any) -> tuple[Any, Any]:
    lib.manual_seed(0)
    lin = lib.nn.Linear(3, 2)

    def f(x: Any) -> Any:
        y = lib.nn.functional.gelu(lin(x)).relu()
        with lib.no_grad():
            z = y * 2
        w = lib.nn.functional.dropout(y, 0.5, training=False) + z.sum()
        w.add_(1)
        return w + x.t().sum() + lib.nn.functional.layer_norm(x, (3,)).sum()

    return f, lib.arange(12.0).reshape(4, 3) / 7


def _ops(gm: Any) -> list[str]:
    out = []
    for n in gm.graph.nodes:
        if n.op == "call_function":
            t = n.target
            out.append(
                "_set_grad_enabled" if getattr(t, "__name__", "") == "_set_grad_enabled" else str(t)
            )
    return out


@requires_torch
def test_pre_dispatch_graph_matches_torch() -> None:
    graphs, values = [], []
    for lib in (ember, torch):
        f, x = _program(lib)
        gm = _proxy(lib).make_fx(f, pre_dispatch=True)(x)
        graphs.append([o.replace("torch.ops.", "").replace("ember.ops.", "") for o in _ops(gm)])
        values.append((gm(x).detach().numpy(), f(x).detach().numpy()))
        constants = sorted(n.target for n in gm.graph.nodes if n.op == "get_attr")
        graphs.append(constants)
    assert graphs[0] == graphs[2], (graphs[0], graphs[2])
    assert graphs[1] == graphs[3]  # _param_constant0, _param_constant1
    assert "aten.linear.default" in graphs[0] and "aten.dropout.default" in graphs[0]
    for got, want in values:
        np.testing.assert_allclose(got, want, rtol=1e-6)
    np.testing.assert_allclose(values[0][0], values[1][0], rtol=1e-5)


def test_grad_mode_switches_are_nodes_and_replay() -> None:
    def f(x: Any) -> Any:
        with ember.no_grad():
            y = x * 2
        return y + x

    x = ember.ones(2, requires_grad=True)
    gm = _proxy(ember).make_fx(f, pre_dispatch=True)(x)
    assert _ops(gm) == [
        "_set_grad_enabled",
        "aten.mul.Tensor",
        "_set_grad_enabled",
        "aten.add.Tensor",
    ]
    assert "ember._C._set_grad_enabled(False)" in gm.code
    out = gm(x)
    assert ember.is_grad_enabled()
    out.sum().backward()
    assert x.grad.tolist() == [1.0, 1.0]  # only the add is differentiated, as in f


def test_a_trace_ending_in_no_grad_records_the_switch_and_leaves_grad_on() -> None:
    def f(x: Any) -> Any:
        ember._C._set_grad_enabled(False)
        y = x + 1
        ember._C._set_grad_enabled(True)
        return y

    gm = _proxy(ember).make_fx(f, pre_dispatch=True)(ember.ones(2))
    assert _ops(gm) == ["_set_grad_enabled", "aten.add.Tensor", "_set_grad_enabled"]
    assert ember.is_grad_enabled()


def test_pre_dispatch_in_fake_mode_and_with_decompositions() -> None:
    from ember._decomp import get_decompositions

    decomps = get_decompositions([ember.ops.aten.hardswish])
    f = lambda x: ember.nn.functional.hardswish(x) * 2  # noqa: E731
    gm = _proxy(ember).make_fx(f, decomposition_table=decomps, pre_dispatch=True)(ember.ones(3))
    assert "aten.hardswish.default" not in _ops(gm) and len(_ops(gm)) > 2
    np.testing.assert_allclose(gm(ember.ones(3)).numpy(), f(ember.ones(3)).numpy())
    fake = _proxy(ember).make_fx(f, tracing_mode="fake", pre_dispatch=True)(ember.ones(1000, 1000))
    assert _ops(fake) == ["aten.hardswish.default", "aten.mul.Tensor"]


def test_pre_dispatch_refuses_data_dependent_control_flow() -> None:
    from ember.fx.experimental.proxy_tensor import DataDependentTracingError

    with pytest.raises(DataDependentTracingError):
        _proxy(ember).make_fx(lambda x: x * 2 if x.sum() > 0 else x, pre_dispatch=True)(
            ember.ones(3)
        )


def test_the_key_outside_a_trace_runs_ops_unchanged() -> None:
    from ember.dispatch import state
    from ember.dispatch.keys import PRE_DISPATCH_BIT

    with state.KeyGuard(include=PRE_DISPATCH_BIT):
        y = ember.nn.functional.linear(ember.ones(2, 3), ember.ones(4, 3))
    assert y.tolist() == [[3.0] * 4] * 2
