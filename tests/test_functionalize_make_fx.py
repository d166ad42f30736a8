"""``make_fx(functionalize(f))`` in real and fake mode for writes through views (NOTE
[functional tracing]), against PyTorch's ``make_fx(torch.func.functionalize(f))``: the
graph gives the same outputs and the same updated inputs, and has no in-place op but the
``copy_`` that puts a written input's new value back (as PyTorch's graph has)."""

from __future__ import annotations

import numpy as np
import pytest

import ember
from ember.func import functionalize
from ember.fx.experimental.proxy_tensor import make_fx
from ember.ops.registry import OpOverload

torch = pytest.importorskip("torch")
from torch.fx.experimental.proxy_tensor import make_fx as torch_make_fx  # noqa: E402


def _view_add(x):
    y = x.view(-1)
    y.add_(1)
    return x * 2


def _slice_mul(x):
    x[:, 1:].mul_(3)
    return x + 1


def _transpose_add(x):
    x.t().add_(1)
    return x * 2


def _diagonal_add(x):
    x.diagonal().add_(5)
    return x.sum()


def _select_of_clone(x):
    y = x.clone()
    z = y[1]
    z.add_(1)
    return y


def _two_views_of_clone(x):
    y = x.clone()
    a, b = y[0], y[:, 1]
    a.mul_(2)  # b sees a's write
    b.add_(b)
    return y, a * 1, b * 1


def _chained_views(x):
    y = x.clone().view(3, 3)
    y.t()[0, 1:].sub_(4)
    y.view(-1)[::4].mul_(-1)
    return y


def _input_slice_and_read(x):
    v = x[1:, :2]
    v.add_(x[:2, 1:])
    return v.sum(0), x.t() + 0


def _strided_step(x):
    x[::2, ::2].fill_(7)
    return x * 1


CASES = [
    _view_add,
    _slice_mul,
    _transpose_add,
    _diagonal_add,
    _select_of_clone,
    _two_views_of_clone,
    _chained_views,
    _input_slice_and_read,
    _strided_step,
]
DATA = np.arange(9.0, dtype=np.float32).reshape(3, 3) - 4.0


def _flat(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


def _mutable_ops(nodes, placeholders):
    """The graph's in-place or ``out=`` ops other than a ``copy_`` into an input."""
    bad = []
    for n in nodes:
        if n.op != "call_function":
            continue
        schema = getattr(n.target, "_schema", None)
        mutable = (
            schema.is_mutable
            if isinstance(n.target, OpOverload)
            else schema is not None and schema.is_mutable
        )
        name = str(n.target)
        if mutable and not ("copy_" in name and n.args[0] in placeholders):
            bad.append(name)
    return bad


@pytest.mark.parametrize("mode", ["real", "fake"])
@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__.strip("_"))
def test_functionalized_graph_matches_torch(f, mode):
    gm = make_fx(functionalize(f), tracing_mode=mode)(ember.tensor(DATA))
    tgm = torch_make_fx(torch.func.functionalize(f), tracing_mode=mode)(torch.tensor(DATA))
    for g in (gm, tgm):
        phs = [n for n in g.graph.nodes if n.op == "placeholder"]
        assert _mutable_ops(g.graph.nodes, phs) == [], g.code
    assert not any(n.op == "get_attr" for n in gm.graph.nodes), gm.code  # no constants
    x, tx = ember.tensor(DATA), torch.tensor(DATA)
    outs, touts = _flat(gm(x)), _flat(tgm(tx))
    assert len(outs) == len(touts)
    for a, b in zip(outs, touts, strict=True):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    np.testing.assert_array_equal(x.numpy(), tx.numpy())  # the input's update
    ex = ember.tensor(DATA)
    eager = _flat(f(ex))
    for a, b in zip(outs, eager, strict=True):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    np.testing.assert_array_equal(x.numpy(), ex.numpy())


@pytest.mark.parametrize("mode", ["real", "fake"])
def test_functionalized_graph_of_a_transposed_input(mode):
    """A write through a view of a non-contiguous input (its storage span is rebuilt)."""

    def f(x):
        x[0].add_(1)
        return x * 2

    gm = make_fx(functionalize(f), tracing_mode=mode)(ember.tensor(DATA).t())
    assert not any(n.op == "get_attr" for n in gm.graph.nodes), gm.code
    phs = [n for n in gm.graph.nodes if n.op == "placeholder"]
    assert _mutable_ops(gm.graph.nodes, phs) == []
    x, tx = ember.tensor(DATA), torch.tensor(DATA)
    out = gm(x.t())
    tout = f(tx.t())
    np.testing.assert_array_equal(out.numpy(), tout.numpy())
    np.testing.assert_array_equal(x.numpy(), tx.numpy())


def test_fake_trace_allocates_no_data():
    gm = make_fx(functionalize(_slice_mul), tracing_mode="fake")(ember.ones(1000, 1000))
    for n in gm.graph.nodes:
        val = n.meta.get("val")
        if isinstance(val, ember.Tensor):
            assert not isinstance(val._edata, np.ndarray)
