"""``ember.fx.subgraph_rewriter`` and ``ember.fx.passes.shape_prop`` against torch.fx's (in the
style of PyTorch's ``test/fx/test_subgraph_rewriter.py``): the same pattern replaced in the same
traced function matches the same occurrences, leaves the same code and the same values."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest

import ember
from ember import fx
from ember.fx.passes.shape_prop import ShapeProp, TensorMetadata, _extract_tensor_metadata
from ember.fx.subgraph_rewriter import replace_pattern, replace_pattern_with_filters

torch = pytest.importorskip("torch")
tfx = pytest.importorskip("torch.fx")
from torch.fx import subgraph_rewriter as t_rewriter  # noqa: E402


def lines(code: str, lib: str) -> list[str]:
    code = code.replace(f"{lib}.", "LIB.")
    return [ln.rstrip() for ln in code.splitlines() if ln.strip()]


def rewrite_both(
    make: Any, pattern: Any, replacement: Any, args: tuple[np.ndarray, ...]
) -> tuple[Any, Any]:
    """Trace ``make(lib)`` in both libraries, replace, compare code, values; the matches."""
    e, t = fx.symbolic_trace(make(ember)), tfx.symbolic_trace(make(torch))
    em = replace_pattern(e, pattern(ember), replacement(ember))
    tm = t_rewriter.replace_pattern(t, pattern(torch), replacement(torch))
    assert len(em) == len(tm)
    assert lines(e.code, "ember") == lines(t.code, "torch")
    e.graph.lint()
    got = e(*[ember.tensor(a) for a in args])
    want = t(*[torch.tensor(a) for a in args])
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)
    return em, tm


X = np.linspace(-2, 2, 12, dtype=np.float32).reshape(3, 4)


def test_replace_one_op_chain() -> None:
    def make(lib: Any) -> Any:
        def f(x):
            val = lib.neg(x) + lib.relu(x)
            return lib.relu(lib.neg(val))  # the pattern twice, once inside an expression

        return f

    em, _ = rewrite_both(
        make,
        lambda lib: lambda x: lib.relu(lib.neg(x)),
        lambda lib: lambda x: lib.sigmoid(x),
        (X,),
    )
    assert all(isinstance(m, fx.subgraph_rewriter.Match) for m in em)


def test_replace_every_occurrence_and_nonoverlapping() -> None:
    def make(lib: Any) -> Any:
        def f(x, y):
            a = lib.add(x, y).relu()
            b = lib.add(a, y).relu()
            return lib.add(b, b).relu() * 2

        return f

    em, tm = rewrite_both(
        make,
        lambda lib: lambda a, b: lib.add(a, b).relu(),
        lambda lib: lambda a, b: lib.sub(a, b).abs(),
        (X, X + 1),
    )
    assert len(em) == len(tm) == 2  # add(b, b): one node cannot be two inputs


def test_inner_node_used_outside_is_not_replaced() -> None:
    def make(lib: Any) -> Any:
        def f(x):
            n = lib.neg(x)
            return lib.relu(n) + n  # neg is used outside the pattern

        return f

    em, tm = rewrite_both(
        make,
        lambda lib: lambda x: lib.relu(lib.neg(x)),
        lambda lib: lambda x: lib.sigmoid(x),
        (X,),
    )
    assert len(em) == len(tm) == 0


def test_literals_must_match_unless_ignored() -> None:
    def make(lib: Any) -> Any:
        def f(x):
            return (x * 2) + (x * 3)

        return f

    em, _ = rewrite_both(make, lambda lib: lambda a: a * 2, lambda lib: lambda a: a + a, (X,))
    assert len(em) == 1
    gm = fx.symbolic_trace(make(ember))
    r = replace_pattern_with_filters(gm, lambda a: a * 2, lambda a: a + a, ignore_literals=True)
    assert len(r) == 2 and all(len(x.replacements) == 1 for x in r)
    np.testing.assert_allclose(gm(ember.tensor(X)).numpy(), 4 * X)


def test_multiple_outputs_pattern() -> None:
    def make(lib: Any) -> Any:
        def f(x, y):
            a, b = x + y, x * y
            return a - b

        return f

    def pattern(lib: Any) -> Any:
        return lambda x, y: (x + y, x * y)

    def replacement(lib: Any) -> Any:
        return lambda x, y: (lib.add(x, y), lib.mul(x, y) * 1.0)

    em, tm = rewrite_both(make, pattern, replacement, (X, X))
    assert len(em) == len(tm) == 1


def test_filters_and_callback() -> None:
    gm = fx.symbolic_trace(lambda x: ember.relu(x) + ember.relu(x * 2))
    only_on_mul = lambda m, g, p: m.placeholder_nodes[0].op == "call_function"  # noqa: E731
    r = replace_pattern_with_filters(
        gm, lambda a: ember.relu(a), lambda a: ember.sigmoid(a), [only_on_mul]
    )
    assert len(r) == 1
    assert [n.target for n in gm.graph.find_nodes(op="call_function")].count(ember.relu) == 1
    # a replacement graph made per match
    gm2 = fx.symbolic_trace(lambda x: ember.relu(x))
    calls: list[Any] = []

    def callback(m: Any, g: Any, p: Any) -> Any:
        calls.append(m.anchors[0].name)
        return fx.symbolic_trace(lambda a: ember.tanh(a)).graph

    replace_pattern_with_filters(gm2, lambda a: ember.relu(a), replacement_callback=callback)
    assert calls == ["relu"] and "ember.tanh(x)" in gm2.code
    with pytest.raises(ValueError, match="replacement"):
        replace_pattern_with_filters(gm2, lambda a: ember.tanh(a))


def test_replacement_with_different_arity_says_so() -> None:
    gm = fx.symbolic_trace(lambda x: ember.relu(x))
    with pytest.raises(ValueError, match="takes 1 inputs but the replacement takes 2"):
        replace_pattern(gm, lambda a: ember.relu(a), lambda a, b: a + b)


def test_replace_in_a_module_keeps_parameters() -> None:
    class M(ember.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.lin = ember.nn.Linear(4, 4)

        def forward(self, x: Any) -> Any:
            return ember.relu(self.lin(x)) * 2

    m = M()
    gm = fx.symbolic_trace(m)
    replace_pattern(gm, lambda a: ember.relu(a) * 2, lambda a: ember.nn.functional.relu6(a))
    x = ember.randn(3, 4)
    np.testing.assert_allclose(
        gm(x).detach().numpy(), ember.nn.functional.relu6(m.lin(x)).detach().numpy()
    )


# ------------------------------------------------------------------ ShapeProp


def test_shape_prop_on_a_traced_module_matches_torch() -> None:
    class Conv(ember.nn.Module):
        def __init__(self, lib: Any) -> None:
            super().__init__()
            self.conv = lib.nn.Conv2d(3, 4, 3)
            self.lib = lib

        def forward(self, x: Any) -> Any:
            y = self.conv(x).relu()
            return y.flatten(1).t(), y.sum(), y.shape

    class TConv(torch.nn.Module):
        forward = Conv.forward

        def __init__(self) -> None:
            super().__init__()
            self.conv = torch.nn.Conv2d(3, 4, 3)

    e, t = fx.symbolic_trace(Conv(ember)), tfx.symbolic_trace(TConv())
    ShapeProp(e).propagate(ember.randn(2, 3, 8, 8))
    from torch.fx.passes.shape_prop import ShapeProp as TShapeProp

    TShapeProp(t).propagate(torch.randn(2, 3, 8, 8))
    for en, tn in zip(e.graph.nodes, t.graph.nodes, strict=True):
        assert en.name == tn.name
        em, tm = en.meta.get("tensor_meta"), tn.meta.get("tensor_meta")
        assert (em is None) == (tm is None), en.name
        if isinstance(em, TensorMetadata):
            assert list(em.shape) == list(tm.shape), en.name
            assert em.stride == tm.stride, en.name
            assert str(em.dtype).split(".")[-1] == str(tm.dtype).split(".")[-1]
            assert em.requires_grad == tm.requires_grad
            assert (em.memory_format is None) == (tm.memory_format is None), en.name
            assert re.sub(r"^\w+\.", "", str(em.memory_format)) == re.sub(
                r"^\w+\.", "", str(tm.memory_format)
            )


def test_extract_tensor_metadata_memory_formats() -> None:
    x = ember.empty(2, 3, 4, 5, memory_format=ember.channels_last)
    assert _extract_tensor_metadata(x).memory_format is ember.channels_last
    assert _extract_tensor_metadata(ember.ones(2, 3)).memory_format is ember.contiguous_format
    assert _extract_tensor_metadata(ember.ones(2, 3).t()).memory_format is None
    assert (
        _extract_tensor_metadata(ember.ones(2, 3), include_contiguity=False).memory_format is None
    )
    meta = _extract_tensor_metadata(ember.ones(2, 3, requires_grad=True))
    assert meta.requires_grad and meta.is_quantized is False and meta.qparams == {}
    tmeta = __import__("torch.fx.passes.shape_prop", fromlist=["x"])._extract_tensor_metadata(
        torch.ones(2, 3, requires_grad=True)
    )
    assert TensorMetadata._fields == type(tmeta)._fields


def test_fake_tensor_prop_records_fake_values_as_torch() -> None:
    from torch.fx.passes.fake_tensor_prop import FakeTensorProp as TFakeTensorProp

    from ember._subclasses.fake_tensor import FakeTensor
    from ember.fx.passes.fake_tensor_prop import FakeTensorProp

    def make(lib: Any) -> Any:
        def f(x, w):
            y = lib.nn.functional.conv2d(x, w, padding=1).relu()
            return y.flatten(1) @ y.flatten(1).t(), y.mean((2, 3)), y.shape[0]

        return f

    e, t = fx.symbolic_trace(make(ember)), tfx.symbolic_trace(make(torch))
    out = FakeTensorProp(e).propagate(ember.randn(2, 3, 8, 8), ember.randn(4, 3, 3, 3))
    assert isinstance(out[0], FakeTensor) and out[2] == 2
    TFakeTensorProp(t).propagate(torch.randn(2, 3, 8, 8), torch.randn(4, 3, 3, 3))
    for en, tn in zip(e.graph.nodes, t.graph.nodes, strict=True):
        ev, tv = en.meta.get("val"), tn.meta.get("val")
        if isinstance(tv, torch.Tensor):
            assert isinstance(ev, FakeTensor), en.name
            assert list(ev.shape) == list(tv.shape) and ev.stride() == tv.stride(), en.name
        elif isinstance(tv, int):
            assert ev == tv, en.name
