"""``ember.fx.symbolic_trace``, ``Tracer`` and ``Proxy`` against ``torch.fx`` (in the style of
PyTorch's ``test/test_fx.py``): the same function or module traced in both gives the same
nodes (op, name, target by name), the same code, and the same values."""

from __future__ import annotations

import math
import operator
import re
from typing import Any

import numpy as np
import pytest

import ember
from ember import fx
from ember.demo.models import cnn, mlp
from ember.fx.proxy import TraceError

torch = pytest.importorskip("torch")
tfx = pytest.importorskip("torch.fx")


def structure(gm: Any) -> list[tuple[str, str, str]]:
    """(op, name, target) per node, targets named without the library's prefix."""
    out = []
    for n in gm.graph.nodes:
        t = n.target
        if not isinstance(t, str):
            mod = getattr(t, "__module__", "") or ""
            t = f"{'operator' if mod == '_operator' else ''}.{t.__name__}"
        out.append((n.op, n.name, t))
    return out


def code_lines(code: str, lib: str) -> list[str]:
    """The lines of generated code; torch.fx's global ``_operator_abs`` is ember's
    ``operator.abs``."""
    code = re.sub(r"\b_operator_(\w+)\(", r"operator.\1(", code)
    # torch.fx prints the signature's annotations; ember keeps them but does not print them
    code = re.sub(r" : [^,)=]+", "", re.sub(r"\) -> [^:]+:", "):", code))
    lines = [ln.rstrip() for ln in code.replace(f"{lib}.", "LIB.").splitlines()]
    return [ln for ln in lines if ln.strip()]


def to_torch(t: Any) -> Any:
    return torch.from_numpy(np.array(t.detach().numpy()))


def same(a: Any, b: Any, tol: float = 1e-5) -> None:
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=tol, atol=tol)


# ------------------------------------------------------------------ functions


def arith(lib: Any) -> Any:
    def f(x, y):
        a = x + y * 2
        b = 1 - a / y
        c = lib.relu(b) @ x.t()
        d = -(c[0, :] ** 2)
        return d.sum(-1, keepdim=True), x.shape[0], x.dtype, abs(c), c > 0

    return f


def test_function_trace_matches_torch_fx() -> None:
    e, t = fx.symbolic_trace(arith(ember)), tfx.symbolic_trace(arith(torch))
    assert structure(e) == structure(t)
    assert code_lines(e.code, "ember") == code_lines(t.code, "torch")
    assert str(e.graph).replace("ember.", "") == str(t.graph).replace("torch.", "")
    x, y = ember.randn(3, 3), ember.rand(3, 3) + 0.5
    got, want = e(x, y), t(to_torch(x), to_torch(y))
    for g, w in zip(got, want, strict=True):
        if isinstance(g, ember.Tensor):
            same(g, w)
        elif isinstance(g, ember.dtype):
            assert str(g).split(".")[-1] == str(w).split(".")[-1]
        else:
            assert g == w


def test_every_operator_records_its_function() -> None:
    ops = {
        "add": lambda x: x + 1, "radd": lambda x: 1 + x, "sub": lambda x: x - 1,
        "mul": lambda x: x * 2, "truediv": lambda x: x / 2, "floordiv": lambda x: x // 2,
        "mod": lambda x: x % 2, "pow": lambda x: x**2, "matmul": lambda x: x @ x,
        "neg": lambda x: -x, "pos": lambda x: +x, "eq": lambda x: x == 1,
        "ne": lambda x: x != 1, "lt": lambda x: x < 1, "le": lambda x: x <= 1,
        "gt": lambda x: x > 1, "ge": lambda x: x >= 1, "getitem": lambda x: x[0],
    }  # fmt: skip
    for name, fn in ops.items():
        gm = fx.symbolic_trace(fn)
        (node,) = gm.graph.find_nodes(op="call_function")
        assert node.target is getattr(operator, name.removeprefix("r")), name
        x = ember.arange(4.0).reshape(2, 2)
        tx = torch.arange(4.0).reshape(2, 2)
        same(gm(x), fn(tx)) if name not in ("eq", "ne", "lt", "le", "gt", "ge") else (
            np.testing.assert_array_equal(gm(x).numpy(), fn(tx).numpy())
        )


def test_methods_are_call_method_and_functions_call_function() -> None:
    def f(x):
        return ember.nn.functional.softmax(x.relu().view(-1), 0) + ember.flatten(x).exp()

    gm = fx.symbolic_trace(f)
    kinds = [(n.op, n.target if isinstance(n.target, str) else n.target.__name__)
             for n in gm.graph.nodes]  # fmt: skip
    assert kinds == [
        ("placeholder", "x"), ("call_method", "relu"), ("call_method", "view"),
        ("call_function", "softmax"), ("call_function", "flatten"), ("call_method", "exp"),
        ("call_function", "add"), ("output", "output"),
    ]  # fmt: skip
    assert "ember.nn.functional.softmax(view, 0)" in gm.code
    x = ember.randn(2, 3)
    same(gm(x), f(x))


def test_unpacking_indexes_and_shape_is_getattr() -> None:
    def f(x):
        a, b = x
        n, m = x.shape
        return a * n + b * m

    gm = fx.symbolic_trace(f)
    assert [n.target for n in gm.graph.find_nodes(op="call_function")][:2] == [
        operator.getitem,
        operator.getitem,
    ]
    assert "getattr_1 = x.shape" in gm.code
    x = ember.randn(2, 3)
    same(gm(x), f(x))


@pytest.mark.parametrize(
    "body, error, words",
    [
        ("if x.sum() > 0:\n        return x\n    return -x", TraceError, "control flow"),
        ("for v in x:\n        pass\n    return x", TraceError, "cannot be iterated"),
        ("return len(x)", RuntimeError, "'len' is not supported"),
    ],
)
def test_data_dependent_python_raises_torch_fx_errors(body: str, error: type, words: str) -> None:
    scope: dict[str, Any] = {}
    exec(f"def f(x):\n    {body}\n", scope)  # noqa: S102
    with pytest.raises(error, match=words):
        fx.symbolic_trace(scope["f"])
    with pytest.raises(Exception, match=words):  # torch.fx says the same
        tfx.symbolic_trace(scope["f"])


def test_trace_error_is_a_value_error_named_as_in_torch_fx() -> None:
    assert issubclass(TraceError, ValueError)
    assert fx.proxy.TraceError.__name__ == tfx.proxy.TraceError.__name__


def test_concrete_args_specialize_and_check() -> None:
    def f(x, double, bias=None):
        if bias is not None:
            x = x + bias
        return x * 2 if double else x

    e = fx.symbolic_trace(f, concrete_args={"double": True, "bias": None})
    t = tfx.symbolic_trace(f, concrete_args={"double": True, "bias": None})
    assert [n.op for n in e.graph.nodes] == [n.op for n in t.graph.nodes]
    assert [n.name for n in e.graph.nodes] == [n.name for n in t.graph.nodes]
    assert "ember._assert(eq, 'double has been specialized to have value True" in e.code
    x = ember.ones(2)
    same(e(x, True), t(torch.ones(2), True))
    with pytest.raises(AssertionError, match="double has been specialized"):
        e(x, False)
    with pytest.raises(AssertionError, match="bias has been specialized"):
        e(x, True, ember.ones(2))


def test_concrete_args_ph_keeps_a_placeholder() -> None:
    gm = fx.symbolic_trace(lambda x, y: x + y, concrete_args={"y": fx.PH})
    assert [n.name for n in gm.graph.nodes] == ["x", "y_1", "add", "output"]
    same(gm(ember.ones(2), ember.ones(2)), ember.full((2,), 2.0))


def test_varargs_and_keyword_only_parameters() -> None:
    def f(x, *args, y=2, **kw):
        return x + args[0] * y + kw["z"]

    gm = fx.symbolic_trace(f)
    assert gm.code.startswith("def forward(self, x, *args, y = 2, **kw):")
    one = ember.ones(1)
    same(gm(one, one, y=3, z=one), f(one, one, y=3, z=one))
    same(gm(one, one, z=one), f(one, one, z=one))


def test_math_functions_are_wrapped_and_tensor_constants_kept() -> None:
    k = ember.tensor([1.0, 2.0])

    def f(x):
        return x * math.sqrt(x.shape[0]) + k

    gm = fx.symbolic_trace(f)
    node = next(n for n in gm.graph.nodes if n.target is math.sqrt)
    assert node.op == "call_function"
    assert [n.target for n in gm.graph.find_nodes(op="get_attr")] == ["_tensor_constant0"]
    x = ember.ones(2)
    same(gm(x), f(x))


def my_leaf(x: Any, n: int) -> Any:
    if n > 1:  # Python control flow: untraceable, so it is a leaf
        return x * n
    return x


fx.wrap("my_leaf")


def test_wrap_records_one_call_function() -> None:
    def f(x):
        return my_leaf(x, 3) + 1

    gm = fx.symbolic_trace(f)
    node = next(n for n in gm.graph.nodes if n.op == "call_function")
    assert node.target is my_leaf and node.meta["is_wrapped"]
    same(gm(ember.ones(2)), ember.full((2,), 4.0))
    assert my_leaf(ember.ones(1), 2).item() == 2.0  # unpatched after the trace
    with pytest.raises(NotImplementedError, match="top level"):
        fx.wrap("my_leaf")


# ------------------------------------------------------------------ modules


def twin(lib: Any, builder: str) -> tuple[Any, Any]:
    """The demo's model built in ember, and the same layers (same weights) in torch."""
    m = {"mlp": mlp, "cnn": cnn}[builder]()
    layers = []
    for layer in m:
        kind = type(layer).__name__
        if kind == "Linear":
            t = torch.nn.Linear(layer.in_features, layer.out_features)
        elif kind == "Conv2d":
            t = torch.nn.Conv2d(layer.in_channels, layer.out_channels, 3, padding=1)
        elif kind == "MaxPool2d":
            t = torch.nn.MaxPool2d(2)
        else:
            t = getattr(torch.nn, kind)()
        for name, p in layer.named_parameters():
            getattr(t, name).data = to_torch(p)
        layers.append(t)
    return m, torch.nn.Sequential(*layers)


@pytest.mark.parametrize("builder", ["mlp", "cnn"])
def test_demo_models_trace_as_torch_fx(builder: str) -> None:
    m, tm = twin(ember, builder)
    e, t = fx.symbolic_trace(m), tfx.symbolic_trace(tm)
    assert structure(e) == structure(t)
    assert code_lines(e.code, "ember") == code_lines(t.code, "torch")
    assert type(e).__name__ == "GraphModule" and e._class_name == "Sequential"
    x = ember.randn(4, 1, 8, 8)
    same(e(x), t(to_torch(x)), 1e-4)
    same(e(x), m(x))


class Block(ember.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = ember.nn.Linear(4, 4)
        self.scale = ember.nn.Parameter(ember.ones(4))
        self.register_buffer("shift", ember.zeros(4))

    def forward(self, x: Any) -> Any:
        return ember.relu(self.lin(x)) * self.scale + self.shift


class Net(ember.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.block = Block()
        self.head = ember.nn.Linear(4, 2)

    def forward(self, x: Any) -> Any:
        h = self.block(x)
        return self.head(h + self.block.lin.weight.sum())


def test_user_modules_are_traced_through_parameters_are_get_attr() -> None:
    net = Net()
    gm = fx.symbolic_trace(net)
    rows = [(n.op, str(n.target)) for n in gm.graph.nodes if n.op != "call_function"]
    assert rows == [
        ("placeholder", "x"), ("call_module", "block.lin"), ("get_attr", "block.scale"),
        ("get_attr", "block.shift"), ("get_attr", "block.lin.weight"),
        ("call_method", "sum"), ("call_module", "head"), ("output", "output"),
    ]  # fmt: skip
    assert "block_lin = self.block.lin(x)" in gm.code
    x = ember.randn(3, 4)
    same(gm(x), net(x))
    assert dict(gm.named_parameters()).keys() >= {"block.scale", "block.lin.weight"}
    assert "block.shift" in dict(gm.named_buffers())
    stack = next(n for n in gm.graph.nodes if n.target == "block.lin").meta["nn_module_stack"]
    assert list(stack) == ["block", "block.lin"]


def test_custom_tracer_leaf_rules() -> None:
    class BlockLeaf(fx.Tracer):
        def is_leaf_module(self, m: Any, qualname: str) -> bool:
            return isinstance(m, Block) or super().is_leaf_module(m, qualname)

    class NoLeaves(fx.Tracer):
        def is_leaf_module(self, m: Any, qualname: str) -> bool:
            return False

    net = Net()
    g = BlockLeaf().trace(net)
    assert [n.target for n in g.find_nodes(op="call_module")] == ["block", "head"]
    g2 = NoLeaves().trace(net)
    assert g2.find_nodes(op="call_module") == []
    assert {n.target.__name__ for n in g2.find_nodes(op="call_function")} >= {"linear"}
    x = ember.randn(2, 4)
    same(fx.GraphModule(net, g)(x), net(x))
    same(fx.GraphModule(net, g2)(x), net(x))


def test_overriding_call_module_and_create_proxy() -> None:
    seen: list[str] = []

    class Recording(fx.Tracer):
        def call_module(self, m: Any, forward: Any, args: Any, kwargs: Any) -> Any:
            seen.append(self.path_of_module(m))
            return super().call_module(m, forward, args, kwargs)

        def create_proxy(self, kind: str, target: Any, args: Any, kwargs: Any, *a: Any,
                         **k: Any) -> Any:  # fmt: skip
            p = super().create_proxy(kind, target, args, kwargs, *a, **k)
            p.node.meta["tag"] = kind
            return p

    g = Recording().trace(Net())
    assert seen == ["block", "block.lin", "head"]
    # a buffer used as an argument is made by create_arg (create_node), as in torch.fx
    tagged = [n.op for n in g.nodes if n.meta.get("tag") == n.op]
    assert tagged == [n.op for n in g.nodes if n.op != "output" and n.target != "block.shift"]


class LSTMWrapper(ember.nn.Module):
    def __init__(self, lib: Any = ember) -> None:
        super().__init__()
        self.lstm = lib.nn.LSTM(4, 8, batch_first=True)
        self.fc = lib.nn.Linear(8, 2)

    def forward(self, x: Any) -> Any:
        out, (h, c) = self.lstm(x)
        return self.fc(out[:, -1]) + h[0].sum(-1, keepdim=True)


class TorchLSTMWrapper(torch.nn.Module):
    forward = LSTMWrapper.forward

    def __init__(self) -> None:
        super().__init__()
        self.lstm = torch.nn.LSTM(4, 8, batch_first=True)
        self.fc = torch.nn.Linear(8, 2)


def test_lstm_wrapper_with_leaf_modules() -> None:
    m, tm = LSTMWrapper(), TorchLSTMWrapper()
    e, t = fx.symbolic_trace(m), tfx.symbolic_trace(tm)
    assert structure(e) == structure(t)
    assert code_lines(e.code, "ember") == code_lines(t.code, "torch")
    x = ember.randn(3, 5, 4)
    same(e(x), m(x))


def encoder_layer(lib: Any) -> Any:
    """A hand-written post-norm Transformer encoder layer class of ``lib``."""

    class Layer(lib.nn.Module):
        def __init__(self, d: int = 16, heads: int = 2) -> None:
            super().__init__()
            self.attn = lib.nn.MultiheadAttention(d, heads, batch_first=True)
            self.ff1, self.ff2 = lib.nn.Linear(d, 2 * d), lib.nn.Linear(2 * d, d)
            self.norm1, self.norm2 = lib.nn.LayerNorm(d), lib.nn.LayerNorm(d)

        def forward(self, x: Any) -> Any:
            a, _ = self.attn(x, x, x, need_weights=False)
            x = self.norm1(x + a)
            b, s, d = x.shape
            h = lib.nn.functional.gelu(self.ff1(x))
            return self.norm2(x + self.ff2(h)).reshape(b, s, d)

    return Layer


def test_transformer_encoder_layers() -> None:
    layer = encoder_layer(ember)()
    gm = fx.symbolic_trace(layer)
    assert [n.target for n in gm.graph.find_nodes(op="call_module")] == [
        "attn", "norm1", "ff1", "ff2", "norm2"
    ]  # fmt: skip
    x = ember.randn(2, 5, 16)
    same(gm(x), layer(x))
    # ember.nn's layer itself, with its optional arguments fixed
    enc = ember.nn.TransformerEncoderLayer(16, 2, 32, dropout=0.0, batch_first=True)
    fixed = {"src_mask": None, "src_key_padding_mask": None, "is_causal": False}
    gm2 = fx.symbolic_trace(enc, concrete_args=fixed)
    assert {"self_attn", "linear1", "linear2", "norm1", "norm2"} <= {
        n.target for n in gm2.graph.find_nodes(op="call_module")
    }
    same(gm2(x), enc(x))

    # and as a leaf of a model around it
    class Model(ember.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.enc = enc

        def forward(self, x: Any) -> Any:
            return self.enc(x).mean(1)

    gm3 = fx.symbolic_trace(Model())
    assert [n.target for n in gm3.graph.find_nodes(op="call_module")] == ["enc"]
    same(gm3(x), enc(x).mean(1))


def test_graph_module_recompile_after_editing() -> None:
    gm = fx.symbolic_trace(lambda x: ember.relu(x) + 1)
    for n in gm.graph.nodes:
        if n.op == "call_function" and n.target is ember.relu:
            n.target = ember.sigmoid
    gm.recompile()
    assert "ember.sigmoid(x)" in gm.code
    same(gm(ember.zeros(2)), ember.full((2,), 1.5))


def test_transformer_proxies_do_arithmetic() -> None:
    class AddToMul(fx.Transformer):
        def call_function(self, target: Any, args: Any, kwargs: Any) -> Any:
            if target is operator.add:
                return args[0] * args[1]  # Proxy arithmetic records a mul node
            return super().call_function(target, args, kwargs)

    gm = fx.symbolic_trace(lambda x, y: x + y)
    new = AddToMul(gm).transform()
    assert [n.target for n in new.graph.find_nodes(op="call_function")] == [operator.mul]
    same(new(ember.full((2,), 3.0), ember.full((2,), 2.0)), ember.full((2,), 6.0))


def test_proxy_on_a_hand_built_graph() -> None:
    g = fx.Graph()
    x = fx.Proxy(g.placeholder("x"))
    y = ember.nn.functional.relu(x).sum() * 2
    g.output(y.node)
    gm = fx.GraphModule(ember.nn.Module(), g)
    assert gm(ember.tensor([-1.0, 2.0])).item() == 4.0
    g.lint()


@pytest.mark.parametrize("builder", ["mlp", "cnn"])
def test_printed_graph_module_matches_torch_fx(builder: str) -> None:
    m, tm = twin(ember, builder)
    e, t = fx.symbolic_trace(m), tfx.symbolic_trace(tm)
    assert repr(e) == repr(t)
    assert code_lines(str(e), "ember") == code_lines(str(t), "torch")
    assert e._get_name() == t._get_name() == "Sequential"


def many_calls(lib: Any) -> Any:
    class M(lib.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.lin = lib.nn.Linear(4, 4)
            self.register_buffer("buf", lib.ones(4))

        def forward(self, x: Any) -> Any:
            y = self.lin(self.lin(x))  # one module called twice: lin, lin_1
            z = x.new_zeros(x.shape) + self.buf.add(y)  # a real tensor's method, proxy argument
            w = lib.cat([y, z], dim=1).to(lib.float64)
            d = lib.log_softmax(w, dim=-1)
            return d.size(0), x.dim(), x.size(), x.new_ones(x.shape[0]), lib.softmax(y, dim=-1)

    return M


def test_module_calls_methods_and_factories_match_torch_fx() -> None:
    e, t = fx.symbolic_trace(many_calls(ember)()), tfx.symbolic_trace(many_calls(torch)())
    assert structure(e) == structure(t)
    assert code_lines(e.code, "ember") == code_lines(t.code, "torch")
    out = e(ember.ones(2, 4))
    assert out[0] == 2 and out[1] == 2 and list(out[2]) == [2, 4]


def test_retracing_a_graph_module_gives_the_same_graph() -> None:
    gm = fx.symbolic_trace(many_calls(ember)())
    again = fx.symbolic_trace(gm)
    assert structure(again) == structure(gm)
    assert again.code == gm.code
    x = ember.randn(3, 4)
    for a, b in zip(again(x), gm(x), strict=True):
        if isinstance(a, ember.Tensor):
            same(a, b)
        else:
            assert a == b


class ShapeBranch(ember.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.w = ember.nn.Parameter(ember.ones(3, 4))

    def forward(self, x: Any) -> Any:
        if self.w.shape[0] == 3 and self.w.dim() == 2:  # Python control flow on a parameter
            return x @ self.w.t()
        return x


def test_param_shapes_constant_lets_code_branch_on_parameter_shapes() -> None:
    with pytest.raises(TraceError, match="control flow"):
        fx.symbolic_trace(ShapeBranch())
    g = fx.Tracer(param_shapes_constant=True).trace(ShapeBranch())
    gm = fx.GraphModule(ShapeBranch(), g)
    assert [n.target for n in g.find_nodes(op="get_attr")] == ["w"]
    same(gm(ember.ones(2, 4)), ember.full((2, 3), 4.0))
    tg = tfx.Tracer(param_shapes_constant=True).trace(
        type("T", (torch.nn.Module,), {
            "__init__": lambda s: (torch.nn.Module.__init__(s),
                                   setattr(s, "w", torch.nn.Parameter(torch.ones(3, 4))))[0],
            "forward": ShapeBranch.forward,
        })()
    )  # fmt: skip
    assert [n.op for n in g.nodes] == [n.op for n in tg.nodes]


def scale(x: Any) -> Any:
    return x * 3


def test_autowrap_functions_are_leaves() -> None:
    def f(x):
        return scale(x) + 1

    g = fx.Tracer(autowrap_functions=(scale,)).trace(f)
    assert [n.target for n in g.find_nodes(op="call_function")] == [scale, operator.add]
    assert scale(ember.ones(1)).item() == 3.0  # put back after the trace
    plain = fx.symbolic_trace(f)
    assert [n.target for n in plain.graph.find_nodes(op="call_function")] == [
        operator.mul, operator.add
    ]  # fmt: skip


def test_graph_module_submodule_editing() -> None:
    gm = fx.symbolic_trace(Net())
    assert gm.add_submodule("extra.act", ember.nn.ReLU())
    assert isinstance(gm.get_submodule("extra.act"), ember.nn.ReLU)
    gm.delete_all_unused_submodules()
    assert not hasattr(gm, "extra")
    assert {n for n, _ in gm.named_modules()} == {"", "block", "block.lin", "head"}
    assert gm.delete_submodule("head") and not gm.delete_submodule("head")


def test_factories_of_traced_sizes_are_recorded_as_torch_fx_does() -> None:
    def make(lib: Any) -> Any:
        def f(x):
            return lib.zeros(x.shape) + lib.arange(x.shape[1]) + lib.full((x.shape[0], 1), 2.0)

        return f

    e, t = fx.symbolic_trace(make(ember)), tfx.symbolic_trace(make(torch))
    assert structure(e) == structure(t)
    assert code_lines(e.code, "ember") == code_lines(t.code, "torch")
    same(e(ember.ones(2, 3)), t(torch.ones(2, 3)))
    assert ember.zeros.__name__ == "zeros" and fx.symbolic_trace(make(ember)).code == e.code
    assert isinstance(ember.zeros(2), ember.Tensor)  # put back after tracing


def test_encoder_layer_traces_as_in_torch_fx() -> None:
    e = fx.symbolic_trace(encoder_layer(ember)())
    t = tfx.symbolic_trace(encoder_layer(torch)())
    assert structure(e) == structure(t)
    # torch's gelu is torch._C._nn.gelu, ember's ember.nn.functional.gelu: same name
    norm = [
        ln.replace("LIB._C._nn.gelu", "LIB.nn.functional.gelu")
        for ln in code_lines(t.code, "torch")
    ]
    assert code_lines(e.code, "ember") == norm


def test_deepcopy_and_copy_of_a_traced_module() -> None:
    import copy

    gm = fx.symbolic_trace(mlp())
    x = ember.randn(2, 1, 8, 8)
    y = gm(x)
    deep = copy.deepcopy(gm)
    assert deep.graph is not gm.graph and deep.graph.owning_module is deep
    assert all(n.graph is deep.graph for n in deep.graph.nodes)
    assert deep.code == gm.code and repr(deep) == repr(gm)
    same(deep(x), y)
    next(iter(deep.parameters())).data.zero_()  # its own parameters
    same(gm(x), y)
    shallow = copy.copy(gm)
    assert shallow.graph is gm.graph
    same(shallow(x), y)
