"""make_fx (ember.fx.experimental.proxy_tensor) and the decomposition tables (ember._decomp),
in the style of PyTorch's test/test_proxy_tensor.py: graphs of OpOverloads whose values
equal eager, against torch's make_fx where installed."""

from __future__ import annotations

import functools
import tracemalloc
from typing import Any

import numpy as np
import pytest

import ember
from ember._decomp import core_aten_decompositions, get_decompositions, register_decomposition
from ember._shape_only import ShapeOnlyArray
from ember._subclasses.fake_tensor import FakeTensor
from ember.fx.experimental.proxy_tensor import DataDependentTracingError, make_fx
from ember.ops.registry import OpOverload

torch = pytest.importorskip("torch")
from torch.fx.experimental.proxy_tensor import make_fx as torch_make_fx  # noqa: E402

aten = ember.ops.aten


def calls(gm):
    return [n for n in gm.graph.nodes if n.op == "call_function"]


def names(gm):
    return [str(n.target) for n in calls(gm)]


def torch_names(gm):
    return [str(n.target) for n in gm.graph.nodes if n.op == "call_function"]


def both(*arrays):
    """(ember inputs, torch inputs) of the same values."""
    return [ember.tensor(a) for a in arrays], [torch.tensor(a) for a in arrays]


FUNCTIONS = [
    ("mm_relu_sum", lambda m, x, y: (x @ y.t()).relu().sum(), [(3, 4), (5, 4)]),
    ("pointwise", lambda m, x, y: (x * y + 1).exp() - y / 2, [(3, 4), (3, 4)]),
    ("views", lambda m, x, y: x.view(12).unsqueeze(0).expand(2, 12) * 2, [(3, 4), (1,)]),
    ("reductions", lambda m, x, y: (x.sum(0), x.mean(1, keepdim=True), x.amax()), [(3, 4), (1,)]),
    ("softmax", lambda m, x, y: m.nn.functional.softmax(x, -1), [(3, 4), (1,)]),
    ("linear", lambda m, x, y: m.nn.functional.linear(x, y), [(3, 4), (5, 4)]),
    ("cat", lambda m, x, y: m.cat([x, x * 2]).sum(0), [(3, 4), (1,)]),
]


@pytest.mark.parametrize("mode", ["real", "fake"])
@pytest.mark.parametrize("name,raw,shapes", FUNCTIONS, ids=[f[0] for f in FUNCTIONS])
def test_values_and_ops_match_torch(name, raw, shapes, mode):
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    e_args, t_args = both(*arrays)
    tfn = lambda *a: raw(torch, *a)  # noqa: E731
    fn = lambda *a: raw(ember, *a)  # noqa: E731
    gm = make_fx(fn, tracing_mode=mode)(*e_args)
    assert all(isinstance(n.target, OpOverload) for n in calls(gm))
    got, want = gm(*e_args), fn(*e_args)
    leaves = ember.utils._pytree.tree_leaves
    for g, w in zip(leaves(got), leaves(want), strict=True):
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-6)
    tgm = torch_make_fx(tfn, tracing_mode=mode)(*t_args)
    assert names(gm) == torch_names(tgm)


def test_placeholders_and_code_read_as_torch():
    x = ember.ones(2, 3)
    gm = make_fx(lambda a, b: a + b)(x, x * 2)
    assert [n.name for n in gm.graph.nodes if n.op == "placeholder"] == ["a_1", "b_1"]
    assert "ember.ops.aten.add.Tensor(a_1, b_1)" in gm.code


def _placeholders(gm: Any) -> list[str]:
    return [n.name for n in gm.graph.nodes if n.op == "placeholder"]


def _by_position(x: Any, y: Any = None, *rest: Any) -> Any:
    return x * 2


def _scaled(x: Any, n: int) -> Any:
    return x * n


class _Holder:
    def method(self, x: Any, y: Any) -> Any:
        return x - y


@pytest.mark.parametrize(
    ("fn", "args"),
    [
        (lambda a, b: a + b, 2),
        (_by_position, 3),
        (functools.partial(_by_position, y=1), 1),
        (_scaled, "n"),
        (lambda x, mul: x * mul, 2),  # a parameter named like an op's node
    ],
)
def test_placeholder_names_follow_torch(fn: Any, args: Any) -> None:
    if args == "n":
        e_args, t_args = (ember.ones(2), 3), (torch.ones(2), 3)
    else:
        e_args = tuple(ember.ones(2) for _ in range(args))
        t_args = tuple(torch.ones(2) for _ in range(args))
    gm = make_fx(fn)(*e_args)
    assert _placeholders(gm) == _placeholders(torch_make_fx(fn)(*t_args))
    assert ember.equal(gm(*e_args), fn(*e_args))


def test_a_bound_method_names_its_placeholders_without_self() -> None:
    # (PyTorch's make_fx refuses a bound method: it counts ``self`` as an argument)
    gm = make_fx(_Holder().method)(ember.ones(2), ember.ones(2))
    assert _placeholders(gm) == ["x_1", "y_1"]


def test_fake_mode_allocates_no_data():
    seen = []

    def f(x):
        y = (x @ x).relu()
        seen.append(type(y._edata))
        return y.sum(0)

    big = ember.ones(1500, 1500)  # 9 MB of float32
    tracemalloc.start()
    gm = make_fx(f, tracing_mode="fake")(big)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert seen == [ShapeOnlyArray]
    assert peak < 2_000_000, peak  # a real trace makes three 9 MB arrays
    val = [n for n in gm.graph.nodes if n.op == "call_function"][-1].meta["val"]
    assert isinstance(val, FakeTensor) and tuple(val.shape) == (1500,)


def test_data_dependent_control_flow_raises_torchs_error():
    def f(x):
        if x.sum() > 0:
            return x + 1
        return x - 1

    for mode in ("real", "fake"):
        with pytest.raises(RuntimeError, match="_local_scalar_dense") as info:
            make_fx(f, tracing_mode=mode)(ember.ones(3))
        assert isinstance(info.value, DataDependentTracingError)
    with pytest.raises(RuntimeError, match="_local_scalar_dense"):
        make_fx(lambda x: x * x.max().item())(ember.ones(3))
    # shapes are Python ints: control flow on them is specialized, not an error
    gm = make_fx(lambda x: x * 2 if x.shape[0] > 2 else x)(ember.ones(3))
    assert names(gm) == ["aten.mul.Tensor"]


def test_closure_tensor_is_a_constant_attribute():
    w = ember.tensor([1.0, 2.0, 3.0])
    gm = make_fx(lambda x: x * w)(ember.ones(3))
    consts = [n for n in gm.graph.nodes if n.op == "get_attr"]
    assert [n.target for n in consts] == ["_tensor_constant0"]
    assert gm._tensor_constant0 is w
    np.testing.assert_array_equal(gm(ember.full((3,), 2.0)).numpy(), [2.0, 4.0, 6.0])


def test_factories_and_random_ops_are_recorded():
    def f(x):
        return x + ember.ones(3) + ember.rand(3) * 0 + ember.arange(3)

    gm = make_fx(f)(ember.zeros(3))
    ops = names(gm)
    assert "aten.ones.default" in ops and "aten.rand.default" in ops
    assert any(o.startswith("aten.arange") for o in ops)
    np.testing.assert_array_equal(gm(ember.zeros(3)).numpy(), [1.0, 2.0, 3.0])
    # random ops survive dead-code elimination; running the graph draws new numbers
    gm2 = make_fx(lambda x: x + ember.rand(3))(ember.zeros(3))
    gm2.graph.eliminate_dead_code()
    assert "aten.rand.default" in names(gm2)


def test_multiple_outputs_get_getitem_nodes_when_used():
    gm = make_fx(lambda x: ember.max(x, 0)[0] * 2)(ember.randn(3, 4))
    assert [n.target.__name__ if not isinstance(n.target, OpOverload) else str(n.target)
            for n in calls(gm)] == ["aten.max.dim", "getitem", "aten.mul.Tensor"]  # fmt: skip


def test_inplace_ops_are_recorded_and_rebind():
    def f(x):
        y = x.clone()
        y.add_(1)
        return y * 2

    gm = make_fx(f)(ember.ones(2))
    assert names(gm) == ["aten.clone.default", "aten.add_.Tensor", "aten.mul.Tensor"]
    mul = calls(gm)[-1]
    assert mul.args[0] is calls(gm)[1]
    np.testing.assert_array_equal(gm(ember.ones(2)).numpy(), [4.0, 4.0])


def test_functional_tracing_removes_writes():
    def f(x):
        y = x.clone()
        y.add_(1)
        y[0].mul_(3)  # a write through a view
        v = y[1]
        y[1].sub_(1)  # v sees it
        return y, v * 1

    x = ember.arange(6.0).reshape(2, 3)
    gm = make_fx(f, _functionalize=True)(x)
    assert not any(
        n.target._schema.is_mutable for n in calls(gm) if isinstance(n.target, OpOverload)
    )
    for g, w in zip(gm(x), f(x), strict=True):
        np.testing.assert_array_equal(g.numpy(), w.numpy())


def test_backward_ops_are_traced():
    def f(x):
        y = (x * x).sin().sum()
        (g,) = ember.autograd.grad(y, [x])
        return g

    x = ember.randn(4, requires_grad=True)
    gm = make_fx(f)(x)
    assert "aten.cos.default" in names(gm)
    np.testing.assert_allclose(gm(x).detach().numpy(), f(x).detach().numpy(), rtol=1e-6)


def test_pytree_inputs_and_outputs():
    def f(d, pair):
        return {"s": d["a"] + pair[0], "p": [pair[1] * 2]}

    a, b, c = ember.ones(2), ember.ones(2) * 2, ember.ones(2) * 3
    gm = make_fx(f)({"a": a}, (b, c))
    out = gm({"a": a}, (b, c))
    np.testing.assert_array_equal(out["s"].numpy(), [3.0, 3.0])
    np.testing.assert_array_equal(out["p"][0].numpy(), [6.0, 6.0])


def test_symbolic_says_it_is_unsupported():
    with pytest.raises(NotImplementedError, match="symbolic"):
        make_fx(lambda x: x, tracing_mode="symbolic")(ember.ones(1))


# ------------------------------------------------------------------ decompositions


def test_decomposition_table_is_applied():
    table = get_decompositions([aten.hardswish, aten.silu])
    f = lambda x: ember.nn.functional.hardswish(x) + ember.nn.functional.silu(x)  # noqa: E731
    x = ember.linspace(-5, 5, 11)
    gm = make_fx(f, decomposition_table=table)(x)
    assert "aten.hardswish.default" not in names(gm) and "aten.silu.default" not in names(gm)
    assert "aten.sigmoid.default" in names(gm)
    np.testing.assert_allclose(gm(x).numpy(), f(x).numpy(), rtol=1e-6, atol=1e-7)


def test_core_aten_decompositions_equal_the_kernels():
    x = ember.tensor(np.random.default_rng(1).standard_normal(40).astype(np.float32) * 4)
    g = ember.tensor(np.random.default_rng(2).standard_normal(40).astype(np.float32))
    cases = {
        aten.silu.default: (x,), aten.hardtanh.default: (x, -2, 2), aten.hardsigmoid.default: (x,),
        aten.hardswish.default: (x,), aten.leaky_relu.default: (x, 0.2),
        aten.threshold_backward.default: (g, x, 0.5), aten.hardtanh_backward.default: (g, x, -1, 1),
        aten.mse_loss.default: (x, g), aten.addcmul.default: (x, g, g),
        aten.addcdiv.default: (x, g, g), aten.rsub.Tensor: (x, g), aten.square.default: (x,),
        aten.clamp_min.default: (x, 0.1), aten.mish.default: (x,),
    }  # fmt: skip
    table = core_aten_decompositions()
    for op, args in cases.items():
        got, want = table[op](*args), op(*args)
        assert got.dtype == want.dtype, op
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-6, err_msg=str(op))


def test_get_decompositions_uses_composite_kernels():
    # an op ember defines as a composition: its CompositeImplicitAutograd kernel
    table = get_decompositions([aten.matmul])
    assert aten.matmul.default in table
    a, b = ember.randn(2, 3), ember.randn(3, 4)
    np.testing.assert_allclose(table[aten.matmul.default](a, b).numpy(), (a @ b).numpy(), rtol=1e-6)
    assert get_decompositions([aten.mm]) == {}  # a kernel and nothing registered


def test_register_decomposition():
    mine: dict = {}

    @register_decomposition(aten.neg.default, mine)
    def neg(x):
        return aten.mul.Tensor(x, -1)

    gm = make_fx(lambda x: -x, decomposition_table=mine)(ember.ones(2))
    assert names(gm) == ["aten.mul.Tensor"]
    with pytest.raises(TypeError, match="OpOverload"):
        register_decomposition("neg")(neg)


def test_op_overload_decompose():
    assert aten.mm.default.decompose(ember.ones(2, 2), ember.ones(2, 2)) is NotImplemented
    out = aten.matmul.default.decompose(ember.ones(2, 2), ember.ones(2, 2))
    np.testing.assert_array_equal(out.numpy(), np.full((2, 2), 2.0))


def test_a_tensor_made_inside_is_a_lift_fresh_copy_in_both_modes() -> None:
    """``ember.tensor(data)`` in the traced code: a constant lifted as PyTorch records it
    (``lift_fresh_copy``), also in fake mode (the constant is made fake there)."""
    from ember.fx.experimental.proxy_tensor import make_fx as mfx

    def f(x):  # noqa: ANN001, ANN202
        return x + ember.tensor([1.0, 2.0])

    for mode in ("real", "fake"):
        gm = mfx(f, tracing_mode=mode)(ember.ones(2))
        ops = [str(n.target) for n in gm.graph.nodes if n.op == "call_function"]
        assert ops == ["aten.lift_fresh_copy.default", "aten.add.Tensor"], mode
        assert gm(ember.ones(2)).tolist() == [2.0, 3.0]
