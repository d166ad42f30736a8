"""Empty (0-element) tensors through every fused-kernel path: ``ember.compile`` on the numba
tier (fusion groups whose NumPy fallback runs, as a group under ``MIN_ELEMENTS`` does),
the NumPy tier, ``aot_function`` and the lazy device, against PyTorch: reductions over an
empty dim, broadcasting with a 0-size dim, transposed empty operands; values, shapes and
gradients. Also the fused kernel itself on empty operands of other shapes than it was
built for."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import ember
from ember.aot import aot_function, nop
from ember.aot.ember_backend import ember_compiler

torch = pytest.importorskip("torch")

FUNCTIONS = {
    "chain_sum": lambda x, w: ((x * w + 1).relu() * 0.5 + x).sum(),
    "chain_mean": lambda x, w: ((x * w + 1).tanh() * 0.5 + x).mean(),
    "sum_dim": lambda x, w: (x * w).exp().sum(0),
    "mean_dim": lambda x, w: (x - w).abs().mean(-1, keepdim=True),
    "softmax": lambda x, w: (x * w).softmax(-1),
    "transposed": lambda x, w: ((x.mT * w.mT).sigmoid() * 2 + w.mT).sum(),
    "matmul": lambda x, w: (x @ w.mT).relu(),
}
SHAPES = [((0, 4), (0, 4)), ((0, 4), (1, 4)), ((4, 0), (4,)), ((0, 4), (4, 0, 4))]


def _lazy(f: Any) -> Any:
    def run(x: Any, w: Any) -> Any:
        lx = x.detach().to("lazy").requires_grad_()
        lw = w.detach().to("lazy").requires_grad_()
        out = f(lx, lw)
        out.sum().backward()
        x.grad, w.grad = lx.grad.to("cpu"), lw.grad.to("cpu")
        return out.to("cpu")

    return run


WAYS = {
    "compile": lambda f: ember.compile(f),
    "aot_ember_numpy": lambda f: aot_function(
        f, lambda gm, ex: ember_compiler(gm, ex, tier_name="numpy")
    ),
    "aot_nop": lambda f: aot_function(f, nop),
    "lazy": _lazy,
}


@pytest.mark.parametrize("shapes", SHAPES, ids=str)
@pytest.mark.parametrize("way", list(WAYS))
def test_empty_tensors_equal_torch(way: str, shapes: Any) -> None:
    rng = np.random.default_rng(0)
    for name, f in FUNCTIONS.items():
        xa, wa = (rng.standard_normal(s).astype(np.float32) for s in shapes)
        tx, tw = torch.tensor(xa, requires_grad=True), torch.tensor(wa, requires_grad=True)
        try:
            want = f(tx, tw)
        except RuntimeError:  # shapes this function does not take (torch says so too)
            continue
        want.sum().backward()
        run = WAYS[way](f)
        for _ in range(2):  # the compiled entry's second call too
            x, w = ember.tensor(xa, requires_grad=True), ember.tensor(wa, requires_grad=True)
            got = run(x, w)
            if way != "lazy":
                got.sum().backward()
            assert tuple(got.shape) == tuple(want.shape), (name, way)
            np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), atol=1e-6)
            for g, t in ((x.grad, tx.grad), (w.grad, tw.grad)):
                assert g is not None and tuple(g.shape) == tuple(t.shape), (name, way)
                np.testing.assert_allclose(g.numpy(), t.numpy(), atol=1e-6)


@pytest.mark.parametrize("reduce", [None, "sum", "mean"])
def test_fused_kernel_fallback_on_empty_operands(reduce: Any) -> None:
    """A fused group built for (3, 4) operands, run on empty ones of other shapes (a 0-size
    row broadcast against a row, a 0-dim one): the fallback's values equal NumPy's."""
    from ember.compiler import graph_meta
    from ember.compiler.numba_tier import FusedKernel

    aten = ember.ops.aten
    g = ember.fx.Graph()
    a, b = g.placeholder("a"), g.placeholder("b")
    meta = graph_meta.tensor_meta((3, 4), (4, 1), np.dtype("float32"))
    a.meta["tensor_meta"] = b.meta["tensor_meta"] = meta
    mul = g.call_function(aten.mul.Tensor, (a, b))
    ex = g.call_function(aten.exp.default, (mul,))
    members = [mul, ex]
    mul.meta["tensor_meta"] = ex.meta["tensor_meta"] = meta
    if reduce is not None:
        red = g.call_function(getattr(aten, reduce).default, (ex,))
        red.meta["tensor_meta"] = graph_meta.tensor_meta((), (), np.dtype("float32"))
        members.append(red)
    kernel = FusedKernel(members, [a, b], [], "fused_empty")
    for sa, sb in [((0, 4), (1, 4)), ((0, 4), (0, 4)), ((4, 0), ()), ((0,), (0,))]:
        xa = np.ones(sa, np.float32)
        xb = np.full(sb, 2.0, np.float32)
        want = np.exp(xa * xb)
        if reduce is not None:
            with np.errstate(invalid="ignore"):  # the mean of nothing: 0 / 0
                total = np.sum(want, dtype=np.float32)
                want = np.asarray(total / want.size if reduce == "mean" else total, np.float32)
        got = kernel(xa, xb)
        assert got.shape == want.shape and got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
