"""``ember.fx`` against ``torch.fx``: the same graph built by hand in both prints the same,
names its nodes the same, loses the same dead code, generates the same code and gives the
same values through ``GraphModule`` and ``Interpreter``; plus editing, checking, copying,
``Transformer`` and ``ShapeProp``."""

from __future__ import annotations

import doctest
import operator
import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import ember
from ember import fx
from ember.fx.passes import ShapeProp

torch = pytest.importorskip("torch")
tfx = pytest.importorskip("torch.fx")


def both(build: Callable[[Any, Any, Any], None]) -> tuple[Any, Any]:
    """The graph ``build(fx_module, graph, lib)`` makes, in ember and in torch."""
    eg, tg = fx.Graph(), tfx.Graph()
    build(fx, eg, ember)
    build(tfx, tg, torch)
    return eg, tg


def same_text(ember_text: str, torch_text: str) -> None:
    """Equal once torch's names become ember's (and blank lines are ignored)."""

    def norm(s: str) -> list[str]:
        s = s.replace("torch.ops.", "ember.ops.").replace("torch.nn.Module", "ember.nn.Module")
        lines = [line.rstrip() for line in s.splitlines()]
        return [line for line in lines if line.strip() and not line.strip().startswith("#")]

    assert norm(ember_text) == norm(torch_text)


def mlp_like(m: Any, g: Any, lib: Any) -> None:
    aten = lib.ops.aten
    x, w, b = g.placeholder("x"), g.placeholder("w"), g.placeholder("b")
    t = g.call_function(aten.t.default, (w,))
    mm = g.call_function(aten.addmm.default, (b, x, t))
    r = g.call_function(aten.relu.default, (mm,))
    s = g.call_function(aten.sum.dim_IntList, (r, [0]), {"keepdim": True})
    unused = g.call_function(aten.exp.default, (r,))
    g.call_function(aten.neg.default, (unused,))
    scaled = g.call_function(aten.add.Tensor, (r, s), {"alpha": 2})
    m2 = g.call_function(aten.max.dim, (scaled, 1))
    first = g.call_function(operator.getitem, (m2, 0))
    g.output((first, s))


def test_printed_graphs_match_torch_fx() -> None:
    eg, tg = both(mlp_like)
    same_text(str(eg), str(tg))
    assert [n.name for n in eg.nodes] == [n.name for n in tg.nodes]
    same_text(list(eg.nodes)[4].format_node(), list(tg.nodes)[4].format_node())


def test_names_match_torch_fx() -> None:
    def build(m: Any, g: Any, lib: Any) -> None:
        aten = lib.ops.aten
        x = g.placeholder("x")
        a = g.call_function(aten.add.Tensor, (x, x), name="add")
        b = g.call_function(aten.add.Tensor, (a, x), name="add")
        for name in ("sum", None, "input", "add_1", "add_1"):
            g.call_function(aten.sum.default, (b,), name=name)
        g.erase_node(list(g.nodes)[-1])  # an erased name stays taken
        for name in ("add_1", "2x", "", "list", "x_1"):
            g.call_function(aten.sum.default, (b,), name=name)
        with g.inserting_after(a):
            n1 = g.call_function(aten.neg.default, (a,))
            g.call_function(aten.neg.default, (n1,))
        with g.inserting_before(a):
            g.call_function(aten.neg.default, (x,))
        with g.inserting_before():
            g.placeholder("first")
        with g.inserting_after():
            g.placeholder("y")

    eg, tg = both(build)
    assert [n.name for n in eg.nodes] == [n.name for n in tg.nodes]


def test_dead_code_elimination_matches_torch_fx() -> None:
    def build(m: Any, g: Any, lib: Any) -> None:
        aten = lib.ops.aten
        x, y = g.placeholder("x"), g.placeholder("y")
        dead = g.call_function(aten.exp.default, (x,))
        g.call_function(aten.neg.default, (dead,))
        g.call_function(aten.add_.Tensor, (y, x))  # writes y: kept though nobody reads it
        g.call_function(aten.randn.default, ([2],))  # random: kept, as torch.fx does
        keep = g.call_function(aten.mul.Tensor, (x, x))
        g.output(keep)

    eg, tg = both(build)
    assert eg.eliminate_dead_code() == tg.eliminate_dead_code() is True
    assert [n.name for n in eg.nodes] == [n.name for n in tg.nodes]
    assert eg.eliminate_dead_code() == tg.eliminate_dead_code() is False


def test_generated_code_and_results_match_torch_fx() -> None:
    eg, tg = both(mlp_like)
    eg.eliminate_dead_code()
    tg.eliminate_dead_code()
    egm, tgm = fx.GraphModule(ember.nn.Module(), eg), tfx.GraphModule(torch.nn.Module(), tg)
    same_text(egm.code, tgm.code)
    assert "add_tensor = ember.ops.aten.add.Tensor(relu_default, sum_dim_int_list, alpha = 2)" in (
        egm.code
    )
    same_text(egm.print_readable(print_output=False), tgm.print_readable(print_output=False))
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s).astype(np.float32) for s in ((3, 4), (5, 4), (5,))]
    got = egm(*[ember.from_numpy(a.copy()) for a in arrays])
    want = tgm(*[torch.from_numpy(a.copy()) for a in arrays])
    interp = fx.Interpreter(egm).run(*[ember.from_numpy(a.copy()) for a in arrays])
    for g, i, w in zip(got, interp, want, strict=True):
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-5)
        np.testing.assert_allclose(i.numpy(), w.numpy(), rtol=1e-5)


def test_get_attr_and_submodules_come_from_the_root() -> None:
    class Root(ember.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.lin = ember.nn.Linear(3, 2)
            self.register_buffer("scale", ember.tensor(2.0))

    g = fx.Graph()
    x = g.placeholder("x")
    h = g.call_module("lin", (x,))
    s = g.get_attr("scale")
    w = g.get_attr("lin.weight")
    y = g.call_function(ember.ops.aten.mul.Tensor, (h, s))
    z = g.call_method("sum", (w,))
    g.output((y, z))
    root = Root()
    gm = fx.GraphModule(root, g)
    assert "scale" in gm._buffers and gm.lin is root.lin
    assert "self.lin(x)" in gm.code and "w = self.lin.weight" not in gm.code
    x_in = ember.ones(4, 3)
    y_out, z_out = gm(x_in)
    np.testing.assert_allclose(y_out.detach().numpy(), (root.lin(x_in) * 2).detach().numpy())
    assert z_out.item() == pytest.approx(root.lin.weight.sum().item())
    interp = fx.Interpreter(gm).run(x_in)
    np.testing.assert_allclose(interp[0].detach().numpy(), y_out.detach().numpy())
    g2 = fx.Graph()
    g2.output(g2.get_attr("missing"))
    with pytest.raises(RuntimeError, match="no entry 'missing'"):
        fx.GraphModule({}, g2)
    with pytest.raises(RuntimeError, match="nonexistent target missing"):
        fx.Interpreter(ember.nn.Module(), graph=g2).run()


def test_editing_a_graph() -> None:
    aten = ember.ops.aten
    g = fx.Graph()
    x, y = g.placeholder("x"), g.placeholder("y")
    a = g.call_function(aten.add.Tensor, (x, y), name="add")
    b = g.call_function(aten.mul.Tensor, (a, a), name="mul")
    out = g.output(b)
    assert list(a.users) == [b] and b.all_input_nodes == [a] and a.all_input_nodes == [x, y]
    assert x.next is y and a.prev is y
    # replace_all_uses_with / replace_input_with keep both directions of use in step
    n = g.call_function(aten.neg.default, (x,), name="neg")
    b.prepend(n)
    assert [m.name for m in g.nodes] == ["x", "y", "add", "neg", "mul", "output"]
    assert a.replace_all_uses_with(n) == [b]
    assert b.args == (n, n) and not a.users and set(n.users) == {b}
    b.replace_input_with(n, x)
    assert b.args == (x, x) and not n.users
    g.erase_node(n)
    g.erase_node(a)
    with pytest.raises(RuntimeError, match="still had 1 users"):
        g.erase_node(b)
    b.update_arg(1, y)
    b.update_kwarg("k", None)
    assert b.args == (x, y) and b.kwargs == {"k": None}
    b.kwargs = {}
    g.lint()
    # append moves a node; lint catches a use before its definition
    c = g.call_function(aten.exp.default, (b,), name="exp")
    out.append(c)
    with pytest.raises(RuntimeError, match="follow the output"):
        g.lint()
    out.prepend(c)
    g.lint()
    x.prepend(c)
    with pytest.raises(RuntimeError, match="used before it has been defined"):
        g.lint()


def test_copying_nodes_and_graphs() -> None:
    eg, _ = both(mlp_like)
    copy = fx.Graph()
    val_map: dict[fx.Node, fx.Node] = {}
    result = copy.graph_copy(eg, val_map)
    copy.output(result)
    assert str(copy) == str(eg)
    assert all(val_map[n].graph is copy for n in eg.nodes if n.op != "output")
    g = fx.Graph()
    x = g.placeholder("x")
    relu = next(n for n in eg.nodes if n.name == "relu_default")
    relu.meta["tag"] = 1
    new = g.node_copy(relu, lambda n: x)
    assert new.args == (x,) and new.name == "relu_default" and new.meta == {"tag": 1}
    with pytest.raises(RuntimeError, match="another graph"):
        g.call_function(ember.ops.aten.neg.default, (relu,))


def test_map_arg_and_map_aggregate() -> None:
    g = fx.Graph()
    x = g.placeholder("x")
    nested = (x, [1, {"k": x}], slice(None, x))
    assert fx.map_arg(nested, lambda n: n.name) == ("x", [1, {"k": "x"}], slice(None, "x"))
    assert fx.map_aggregate((1, [2]), lambda v: -v) == (-1, [-2])


def test_print_tabular(capsys: pytest.CaptureFixture[str]) -> None:
    eg, _ = both(mlp_like)
    eg.print_tabular()
    rows = capsys.readouterr().out.splitlines()
    assert rows[0].split() == ["opcode", "name", "target", "args", "kwargs"]
    assert any(r.startswith("call_function") and "ember.ops.aten.addmm.default" in r for r in rows)
    assert len(rows) == 2 + len(eg.nodes)


def test_interpreter_frees_values_after_their_last_use() -> None:
    eg, _ = both(mlp_like)
    eg.eliminate_dead_code()
    gm = fx.GraphModule({}, eg)
    seen: list[int] = []

    class Watch(fx.Interpreter):
        def run_node(self, n: fx.Node) -> Any:
            result = super().run_node(n)
            seen.append(len(self.env))
            return result

    rng = np.random.default_rng(1)
    args = [
        ember.from_numpy(rng.standard_normal(s).astype(np.float32)) for s in ((2, 4), (3, 4), (3,))
    ]
    Watch(gm).run(*args)
    assert max(seen) < len(eg.nodes) - 1  # never every value at once
    kept = Watch(gm, garbage_collect_values=False)
    kept.run(*args)
    assert len(kept.env) == len(eg.nodes)
    with pytest.raises(RuntimeError, match="Expected positional argument for parameter b"):
        fx.Interpreter(gm).run(*args[:2])


def test_interpreter_errors_name_the_node() -> None:
    g = fx.Graph()
    x = g.placeholder("x")
    g.output(g.call_function(ember.ops.aten.mm.default, (x, x), name="mm"))
    with pytest.raises(RuntimeError) as info:
        fx.Interpreter(fx.GraphModule({}, g)).run(ember.ones(2, 3))
    assert any("%mm" in note for note in info.value.__notes__)


def test_transformer_rewrites_as_torch_fx() -> None:
    def rewrite(base: Any, lib: Any) -> Any:
        class SwapAddForMul(base):
            def call_function(self, target: Any, args: Any, kwargs: Any) -> Any:
                if target is lib.ops.aten.add.Tensor:
                    return super().call_function(lib.ops.aten.mul.Tensor, args[:2], {})
                return super().call_function(target, args, kwargs)

        return SwapAddForMul

    eg, tg = both(mlp_like)
    egm = rewrite(fx.Transformer, ember)(fx.GraphModule({}, eg)).transform()
    tgm = rewrite(tfx.Transformer, torch)(tfx.GraphModule({}, tg)).transform()
    same_text(str(egm.graph), str(tgm.graph))
    x, w, b = (np.ones(s, np.float32) for s in ((2, 4), (3, 4), (3,)))
    got = egm(ember.from_numpy(x), ember.from_numpy(w), ember.from_numpy(b))
    want = tgm(torch.from_numpy(x), torch.from_numpy(w), torch.from_numpy(b))
    for g_, w_ in zip(got, want, strict=True):
        np.testing.assert_allclose(g_.numpy(), w_.numpy())


@pytest.mark.parametrize("mode", ["real", "meta", "fake"])
def test_shape_propagation_matches_torch_fx(mode: str) -> None:
    from torch.fx.passes.shape_prop import ShapeProp as TorchShapeProp

    eg, tg = both(mlp_like)
    eg.eliminate_dead_code()
    tg.eliminate_dead_code()
    egm, tgm = fx.GraphModule({}, eg), tfx.GraphModule({}, tg)
    shapes = ((2, 4), (3, 4), (3,))
    TorchShapeProp(tgm).propagate(*[torch.ones(s) for s in shapes])
    if mode == "fake":
        from ember._subclasses.fake_tensor import FakeTensorMode

        ShapeProp(egm, fake_mode=FakeTensorMode()).propagate(*[ember.ones(s) for s in shapes])
    else:
        ShapeProp(egm).propagate(
            *[ember.ones(s, device="cpu" if mode == "real" else "meta") for s in shapes]
        )
    for en, tn in zip(eg.nodes, tg.nodes, strict=True):
        if "tensor_meta" not in tn.meta:
            assert "tensor_meta" not in en.meta
            continue
        em, tm = en.meta["tensor_meta"], tn.meta["tensor_meta"]
        if isinstance(tm, tuple) and not hasattr(tm, "shape"):
            em, tm = em[0], tm[0]
        assert tuple(em.shape) == tuple(tm.shape) and em.stride == tm.stride, en.name
        assert str(em.dtype).split(".")[-1] == str(tm.dtype).split(".")[-1]
        val = en.meta["val"]
        val = val[0] if isinstance(val, tuple) else val
        assert val.device.type in ("meta", "cpu") and not hasattr(val._edata, "ctypes")


def test_impure_nodes() -> None:
    g = fx.Graph()
    x = g.placeholder("x")
    assert x.is_impure()
    assert g.call_function(ember.ops.aten.add_.Tensor, (x, x)).is_impure()
    assert g.call_function(ember.ops.aten.rand.default, ([2],)).is_impure()
    assert g.call_function(operator.setitem, (x, 0, 1)).is_impure()
    assert not g.call_function(ember.ops.aten.add.Tensor, (x, x)).is_impure()


def test_code_is_one_line_per_node() -> None:
    eg, _ = both(mlp_like)
    eg.eliminate_dead_code()
    code = fx.GraphModule({}, eg).code
    body = [line for line in code.splitlines()[1:] if line.strip()]
    computing = [n for n in eg.nodes if n.op not in ("placeholder", "output")]
    assert len(body) == len(computing) + 1  # and the return
    assert all(
        re.match(rf"    {n.name} = ", line) for n, line in zip(computing, body, strict=False)
    )


@pytest.mark.parametrize("doc", ["docs/fx.md", "docs/lazy.md"])
def test_doc_examples_run(doc: str) -> None:
    """The ``>>>`` examples of the fx and lazy guides print what they say."""
    from pathlib import Path

    text = (Path(__file__).resolve().parent.parent / doc).read_text(encoding="utf-8")
    test = doctest.DocTestParser().get_doctest(text, {"ember": ember}, doc, doc, 0)
    result = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS).run(test)
    assert result.attempted and result.failed == 0
