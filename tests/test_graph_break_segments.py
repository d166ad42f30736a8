"""A graph break run as compiled pieces (NOTE [graph break segments]): the graph before a
scalar read and the graph after it, each compiled by AOTAutograd, chosen by the value read;
values and gradients equal eager's on every path, and functions the pieces cannot express
run on the lazy device instead."""

from __future__ import annotations

import numpy as np
import pytest

import ember
from ember.aot.aot_autograd import config
from ember.aot.segments import SegmentedFunction
from ember.compiler import metrics


def _branchy(x, w):
    h = (x @ w) * 2 + 1
    if h.sum() > 0:
        y = (h.sin() * h).sum(1)
    else:
        y = h.cos().sum(1) + x.sum()
    return y * 3, h, float(y.abs().max() > 1)


def _segments(compiled) -> SegmentedFunction:
    (entry,) = compiled.impl.cache.values()
    segmented = entry.fallback.fn  # past the lifted tensors (NOTE [lifted tensors])
    assert isinstance(segmented, SegmentedFunction)
    return segmented


@pytest.mark.parametrize("backend", ["ember", "aot_eager"])
def test_both_sides_of_a_branch_run_compiled_and_match_eager(backend):
    f = ember.compile(_branchy, backend=backend)
    rng = np.random.default_rng(0)
    for sign in (1.0, -1.0, 1.0, -1.0):
        xs = np.abs(rng.standard_normal((4, 3))).astype(np.float32)
        ws = (sign * np.abs(rng.standard_normal((3, 5)))).astype(np.float32)
        x, w = ember.tensor(xs), ember.tensor(ws, requires_grad=True)
        w_ref = ember.tensor(ws, requires_grad=True)
        metrics.reset()
        out = f(x, w)
        assert metrics.counter_value("ops_recorded") == 0  # nothing ran on the lazy device
        ref = _branchy(x, w_ref)
        np.testing.assert_allclose(out[0].detach().numpy(), ref[0].detach().numpy(), rtol=1e-5)
        assert out[2] == ref[2]
        (out[0].sum() + out[1].sum()).backward()
        (ref[0].sum() + ref[1].sum()).backward()
        np.testing.assert_allclose(w.grad.numpy(), w_ref.grad.numpy(), rtol=1e-4, atol=1e-5)
    seg = _segments(f)
    assert seg.broken is None and seg.paths == 2
    assert set(seg.root.children) == {True, False}  # one compiled piece per branch
    assert len(f.graph_breaks) == 1


def test_a_value_read_into_arithmetic_is_a_guard():
    def g(x):
        s = x.sum().item()
        return x * s

    f = ember.compile(g, backend="aot_eager")
    for v in (1.0, 2.0, 1.0):
        x = ember.full((3,), v)
        assert f(x).tolist() == g(x).tolist()
    assert _segments(f).paths == 2


def test_past_the_path_limit_it_runs_on_the_lazy_device(monkeypatch):
    monkeypatch.setattr(config, "cache_size_limit", 2)

    def g(x):
        return x * x.sum().item()

    f = ember.compile(g, backend="aot_eager")
    for v in (1.0, 2.0, 3.0, 4.0):
        x = ember.full((2,), v)
        assert f(x).tolist() == g(x).tolist()
    assert "paths" in _segments(f).broken


@pytest.mark.parametrize("kind", ["write", "random"])
def test_writes_and_random_ops_run_on_the_lazy_device(kind):
    def g(x, buf):
        if kind == "write":
            buf.add_(1)
        else:
            buf = ember.rand(2)
        return x * 2 if x.sum() > 0 else x - buf.sum()

    f = ember.compile(g)
    buf, ref = ember.zeros(2), ember.zeros(2)
    x = ember.tensor([1.0, 2.0])
    out = f(x, buf)
    assert out.tolist() == [2.0, 4.0]
    if kind == "write":
        g(x, ref)
        assert buf.tolist() == ref.tolist() == [1.0, 1.0]
    assert "writes a tensor or draws random numbers" in _segments(f).broken


def test_lazy_fallback_takes_made_and_captured_tensors_along():
    # a value-dependent shape runs on the lazy device: the tensors the function makes and
    # the parameters it reads from a closure must join its arguments there
    lin = ember.nn.Linear(2, 2)
    ref_lin = ember.nn.Linear(2, 2)
    ref_lin.load_state_dict(lin.state_dict())
    state = {"lin": lin}

    def g(x):
        y = state["lin"](x) + ember.tensor([1.0, -5.0]) + ember.zeros(2)
        return y[y > 0].sum(), ember.histc(x, bins=2)

    f = ember.compile(g)
    x = ember.tensor([[1.0, 2.0], [3.0, -1.0]])
    out = f(x)
    state["lin"] = ref_lin
    ref = g(x)
    np.testing.assert_allclose(out[0].detach().numpy(), ref[0].detach().numpy(), rtol=1e-6)
    assert out[1].tolist() == ref[1].tolist()
    out[0].backward()
    ref[0].backward()
    np.testing.assert_allclose(lin.weight.grad.numpy(), ref_lin.weight.grad.numpy(), rtol=1e-6)


@pytest.mark.parametrize("backend", ["ember", "aot_eager"])
def test_a_constant_made_before_a_read_is_used_after_it(backend):
    """A closure's tensor is a constant of the graph the pieces come from (a ``get_attr``
    node); a later piece that uses it too copies it (it used to raise ``KeyError:
    '_tensor_constant0'``; found by the random programs over closure tensors)."""
    c = ember.tensor([2.0, 3.0])

    def f(x):
        y = x * c
        if y.sum() > 0:  # a read: the graph breaks here
            return y * c
        return y - c

    compiled = ember.compile(f, backend=backend)
    for x in (ember.tensor([1.0, 2.0]), ember.tensor([-1.0, -2.0])):
        assert ember.equal(compiled(x), f(x))
    assert _segments(compiled).paths == 2
