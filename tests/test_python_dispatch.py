"""``__torch_dispatch__``: the Python key, TorchDispatchMode, wrapper subclasses, the reference
subclasses and the helpers, in the style of PyTorch's test/test_python_dispatch.py.

Every behaviour test runs on ember and on PyTorch (the ``lib`` fixture), so each expectation
is checked against the real thing.
"""

from __future__ import annotations

from typing import Any

import pytest

import ember
from tests.conftest import sub


def recording_mode(lib: Any, log: list[Any]) -> Any:
    """A mode that records ``(str(func), args, kwargs)`` and runs the op."""
    base = sub(lib, "utils._python_dispatch").TorchDispatchMode

    class Record(base):  # type: ignore[misc, valid-type]
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # noqa: ANN001, ANN204
            log.append((str(func), args, kwargs))
            return func(*args, **(kwargs or {}))

    return Record()


def names(log: list[Any]) -> list[str]:
    return [entry[0] for entry in log]


# ---------------------------------------------------------------- what handlers get


def test_defaults_are_stripped(lib: Any) -> None:
    x, y = lib.ones(2), lib.ones(2)
    log: list[Any] = []
    with recording_mode(lib, log):
        lib.add(x, y, alpha=1)
        lib.add(x, y, alpha=2)
        x.sum(0, keepdim=False)
    (n0, a0, k0), (n1, a1, k1), (n2, a2, k2) = log
    assert (n0, len(a0), k0) == ("aten.add.Tensor", 2, {})
    assert (n1, k1) == ("aten.add.Tensor", {"alpha": 2})
    assert n2 == "aten.sum.dim_IntList" and len(a2) == 2 and k2 == {}


def test_positional_parameter_passed_by_keyword_arrives_positionally(lib: Any) -> None:
    x = lib.ones(2, 3)
    log: list[Any] = []
    with recording_mode(lib, log):
        lib.sum(x, dim=1, keepdim=True)
    name, args, kwargs = log[0]
    assert name == "aten.sum.dim_IntList" and len(args) == 3 and args[2] is True
    assert list(args[1]) == [1] and kwargs == {}


def test_to_dtype_arrives_as_to_copy_with_a_typed_dtype(lib: Any) -> None:
    x = lib.ones(2)
    log: list[Any] = []
    with recording_mode(lib, log):
        x.to(dtype=lib.float64)
    name, args, kwargs = log[0]
    assert name == "aten._to_copy.default"
    assert kwargs == {"dtype": lib.float64} and isinstance(kwargs["dtype"], lib.dtype)


@pytest.mark.parametrize(
    ("call", "expected"),
    [
        (lambda lib, x: x @ x, "aten.mm.default"),
        (lambda lib, x: x.reshape(4), "aten.view.default"),
        (lambda lib, x: x.t().contiguous(), "aten.clone.default"),
    ],
    ids=["matmul", "reshape", "contiguous"],
)
def test_composite_ops_arrive_decomposed(lib: Any, call: Any, expected: str) -> None:
    x = lib.ones(2, 2)
    log: list[Any] = []
    with recording_mode(lib, log):
        call(lib, x)
    assert expected in names(log)
    assert not any(
        n.startswith(("aten.matmul", "aten.reshape", "aten.contiguous")) for n in names(log)
    )


def test_factories_reach_the_mode(lib: Any) -> None:
    log: list[Any] = []
    with recording_mode(lib, log):
        lib.ones(2)
        lib.zeros(3)
    assert names(log) == ["aten.ones.default", "aten.zeros.default"]


def test_backward_ops_reach_the_mode(lib: Any) -> None:
    x = lib.ones(2, requires_grad=True)
    log: list[Any] = []
    with recording_mode(lib, log):
        (x * x).sum().backward()
    ops = names(log)
    assert ops[:2] == ["aten.mul.Tensor", "aten.sum.default"]
    assert "aten.expand.default" in ops and ops.count("aten.mul.Tensor") >= 2
    assert x.grad.tolist() == [2.0, 2.0]


def test_op_overload_api(lib: Any) -> None:
    op = lib.ops.aten.add.Tensor
    assert op.__name__ == "add.Tensor" and op.name() == "aten::add.Tensor"
    assert op.overloadpacket.__name__ == "add" and op.namespace == "aten"
    assert str(op._schema).startswith("aten::add.Tensor(Tensor self, Tensor other")
    assert {op: 1}[op] == 1
    assert op(lib.ones(1), lib.ones(1)).tolist() == [2.0]


# ---------------------------------------------------------------- modes


def test_mode_is_off_inside_its_handler_and_with_self_reenters(lib: Any) -> None:
    base = sub(lib, "utils._python_dispatch").TorchDispatchMode
    seen: list[str] = []

    class Twice(base):  # type: ignore[misc, valid-type]
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # noqa: ANN001, ANN204
            seen.append(str(func))
            if func is lib.ops.aten.mul.Tensor:
                with self:
                    lib.ops.aten.neg.default(args[0])
            return func(*args, **(kwargs or {}))

    with Twice():
        lib.ones(2) * 2
    assert seen == ["aten.ones.default", "aten.mul.Tensor", "aten.neg.default"]


def test_nested_modes_run_innermost_first(lib: Any) -> None:
    outer_log: list[Any] = []
    inner_log: list[Any] = []
    with recording_mode(lib, outer_log), recording_mode(lib, inner_log):
        lib.ones(1) + 1
    assert names(inner_log) == names(outer_log) == ["aten.ones.default", "aten.add.Tensor"]


def test_mode_stack_helpers(lib: Any) -> None:
    pd = sub(lib, "utils._python_dispatch")
    log: list[Any] = []
    mode = recording_mode(lib, log)
    assert pd._get_current_dispatch_mode() is None
    with mode as entered:
        assert entered is mode
        assert pd._get_current_dispatch_mode() is mode
        assert pd._get_current_dispatch_mode_stack() == [mode]
        assert pd.is_in_torch_dispatch_mode()
        with pd._disable_current_modes():
            lib.ones(1)
            assert pd._get_current_dispatch_mode() is None
    assert log == [] and not pd.is_in_torch_dispatch_mode()


def test_a_failing_op_leaves_the_mode_active(lib: Any) -> None:
    pd = sub(lib, "utils._python_dispatch")

    class Fail(pd.TorchDispatchMode):  # type: ignore[misc, name-defined]
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # noqa: ANN001, ANN204
            raise ValueError("boom")

    mode = Fail()
    with mode:
        with pytest.raises(ValueError, match="boom"):
            lib.ones(2)
        assert pd._get_current_dispatch_mode() is mode
    assert pd._get_current_dispatch_mode() is None


def test_classmethod_handler_on_a_mode_raises(lib: Any) -> None:
    if lib is not ember:
        pytest.skip("PyTorch accepts the class and fails later, inside the handler call")
    base = sub(lib, "utils._python_dispatch").TorchDispatchMode

    class Cls(base):  # type: ignore[misc, valid-type]
        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):  # noqa: ANN001, ANN206
            return func(*args, **(kwargs or {}))

    with pytest.raises(RuntimeError, match="classmethod"):
        with Cls():
            pass


def test_wrong_return_raises(lib: Any) -> None:
    base = sub(lib, "utils._python_dispatch").TorchDispatchMode

    class Bad(base):  # type: ignore[misc, valid-type]
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # noqa: ANN001, ANN204
            return 3

    with pytest.raises(RuntimeError):
        with Bad():
            lib.ones(2)


def test_no_dispatch_hides_ops(lib: Any) -> None:
    no_dispatch = sub(lib, "utils._mode_utils").no_dispatch
    log: list[Any] = []
    with recording_mode(lib, log):
        with no_dispatch():
            lib.ones(2) + 1
    assert log == []


# ---------------------------------------------------------------- subclasses


def test_modes_beat_subclasses_and_not_implemented_falls_through(lib: Any) -> None:
    base = sub(lib, "utils._python_dispatch").TorchDispatchMode
    order: list[str] = []

    class Sub(lib.Tensor):
        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):  # noqa: ANN001, ANN206
            order.append("sub " + str(func))
            return super().__torch_dispatch__(func, types, args, kwargs)

    class Decline(base):  # type: ignore[misc, valid-type]
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # noqa: ANN001, ANN204
            order.append("mode " + str(func))
            return NotImplemented

    s = lib.ones(2).as_subclass(Sub)
    with Decline():
        out = lib.ops.aten.neg.default(s)
    assert order[:2] == ["mode aten.neg.default", "sub aten.neg.default"]
    assert out.tolist() == [-1.0, -1.0]


def test_subclass_super_runs_the_real_kernel(lib: Any) -> None:
    class Sub(lib.Tensor):
        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):  # noqa: ANN001, ANN206
            return super().__torch_dispatch__(func, types, args, kwargs)

    s = lib.tensor([1.0, 2.0]).as_subclass(Sub)
    out = s * 3
    assert out.tolist() == [3.0, 6.0]
    assert Sub.__torch_function__ is sub(lib, "_C")._disabled_torch_function_impl


def test_all_subclasses_declining_raises_type_error(lib: Any) -> None:
    class Never(lib.Tensor):
        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):  # noqa: ANN001, ANN206
            return NotImplemented

    s = lib.ones(2).as_subclass(Never)
    with pytest.raises(TypeError, match="neg"):
        lib.ops.aten.neg.default(s)


def test_plain_method_handler_works(lib: Any) -> None:
    class Plain(lib.Tensor):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # noqa: ANN001, ANN204
            return lib.zeros(2)

    s = lib.ones(2).as_subclass(Plain)
    assert lib.ops.aten.neg.default(s).tolist() == [0.0, 0.0]


def test_wrapper_subclass_costs_nothing_and_holds_no_data(lib: Any) -> None:
    class W(lib.Tensor):
        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):  # noqa: ANN001, ANN206
            return NotImplemented

    w = lib.Tensor._make_wrapper_subclass(W, (10**6, 10**6), dtype=lib.float64)
    assert tuple(w.shape) == (10**6, 10**6) and w.dtype == lib.float64
    assert w.stride() == (10**6, 1) and w.device.type == "cpu"
    with pytest.raises((RuntimeError, TypeError)):
        w.tolist()


def test_wrapper_subclass_needs_torch_dispatch(lib: Any) -> None:
    if lib is not ember:
        pytest.skip("PyTorch allows it (the error comes at the first op); ember refuses early")

    class NoDispatch(lib.Tensor):
        pass

    with pytest.raises(TypeError, match="__torch_dispatch__"):
        lib.Tensor._make_wrapper_subclass(NoDispatch, (2,))


# ---------------------------------------------------------------- reference subclasses


def test_logging_tensor_logs_forward_and_backward(lib: Any) -> None:
    lt = sub(lib, "testing._internal.logging_tensor")
    x = lt.LoggingTensor(lib.ones(1), requires_grad=True)
    with lt.capture_logs() as logs:
        lt.log_input("x", x)
        (x * x).sum().backward()
    ops = [line.split(" = ")[1].split("(")[0].rsplit("aten.", 1)[-1] for line in logs]
    assert logs[0] == "$0: f32[1] = input('x')"
    assert ops[1:4] == ["mul.Tensor", "sum.default", "ones_like.default"]
    assert "expand.default" in ops and ops.count("mul.Tensor") == 3
    assert type(x.grad) is lt.LoggingTensor and x.grad.elem.tolist() == [2.0]


def test_logging_tensor_alpha_and_to(lib: Any) -> None:
    lt = sub(lib, "testing._internal.logging_tensor")
    x = lt.LoggingTensor(lib.ones(1))
    with lt.capture_logs() as logs:
        lib.add(x, x, alpha=1)
        x.to(dtype=lib.float64)
    assert "alpha" not in logs[0] and logs[0].endswith("add.Tensor($0, $0)")
    assert logs[1].startswith("$2: f64[1]") and "_to_copy.default($0, dtype=" in logs[1]


def test_logging_tensor_of_a_logging_tensor(lib: Any) -> None:
    lt = sub(lib, "testing._internal.logging_tensor")
    x = lt.LoggingTensor(lt.LoggingTensor(lib.ones(2)))
    with lt.capture_logs() as logs:
        y = x + 1
    assert len(logs) == 2 and all("add.Tensor" in line for line in logs)
    assert type(y) is lt.LoggingTensor and type(y.elem) is lt.LoggingTensor


def test_logging_mode_logs_factories(lib: Any) -> None:
    lt = sub(lib, "testing._internal.logging_tensor")
    with lt.capture_logs(is_mode=True) as logs:
        with lt.LoggingTensorMode():
            lib.ones(2) + 1
    assert logs[0].startswith("$0: f32[2] = ") and "ones.default" in logs[0]
    assert logs[1].endswith("add.Tensor($0, 1)")


def test_two_tensor(lib: Any) -> None:
    tt = sub(lib, "testing._internal.two_tensor")
    pd = sub(lib, "utils._python_dispatch")
    t = tt.TwoTensor(lib.ones(2), lib.zeros(2))
    out = t * 2 + 1
    assert type(out) is tt.TwoTensor
    assert out.a.tolist() == [3.0, 3.0] and out.b.tolist() == [1.0, 1.0]
    assert pd.is_traceable_wrapper_subclass(t) and t.__tensor_flatten__() == (["a", "b"], None)
    assert t.add_(1) is t and t.a.tolist() == [2.0, 2.0]
    v = t.view(2, 1)
    assert v._base is t and type(v) is tt.TwoTensor
    with tt.TwoTensorMode():
        z = lib.ones(2)
    assert type(z) is tt.TwoTensor


def test_two_tensor_autograd(lib: Any) -> None:
    tt = sub(lib, "testing._internal.two_tensor")
    x = tt.TwoTensor(lib.ones(2), lib.full((2,), 3.0)).requires_grad_()
    (x * x).sum().backward()
    assert type(x.grad) is tt.TwoTensor
    assert x.grad.a.tolist() == [2.0, 2.0] and x.grad.b.tolist() == [6.0, 6.0]


# ---------------------------------------------------------------- helpers


def test_normalize_function(lib: Any) -> None:
    normalize = sub(lib, "fx.operator_schemas").normalize_function
    x = lib.ones(1)
    both = normalize(lib.ops.aten.add.Tensor, (x, x), {})
    assert len(both.args) == 2 and both.kwargs == {"alpha": 1}
    only = normalize(lib.ops.aten.add.Tensor, (x, x), {}, normalize_to_only_use_kwargs=True)
    assert only.args == () and list(only.kwargs) == ["input", "other", "alpha"]
    s = normalize(lib.ops.aten.sum.dim_IntList, (x, [0]), {})
    assert len(s.args) == 2 and s.kwargs == {"keepdim": False, "dtype": None}


def test_pytree(lib: Any) -> None:
    pytree = sub(lib, "utils._pytree")
    tree = [1, (2, None), {"b": 3, "a": 4}]
    leaves, spec = pytree.tree_flatten(tree)
    assert leaves == [1, 2, None, 3, 4]
    assert pytree.tree_unflatten(leaves, spec) == tree
    assert pytree.tree_map(lambda v: v, tree) == tree
    assert pytree.tree_map_only(int, lambda v: -v, [1, "s", 2.0]) == [-1, "s", 2.0]
    assert pytree.tree_leaves({"x": (1, [2])}) == [1, 2]
    assert pytree.tree_structure((1, 2)).num_leaves == 2


def test_return_and_correct_aliasing_in_place(lib: Any) -> None:
    pd = sub(lib, "utils._python_dispatch")
    x = lib.ones(2)
    other = lib.zeros(2)
    out = pd.return_and_correct_aliasing(lib.ops.aten.add_.Tensor, (x, x), {}, other)
    assert out is x


def test_saving_an_output_for_backward_dispatches_detach(lib: Any) -> None:
    lt = sub(lib, "testing._internal.logging_tensor")
    x = lt.LoggingTensor(lib.ones(2), requires_grad=True)
    with lt.capture_logs() as logs:
        x.exp()
    ops = [line.split(" = ")[1].split("(")[0].rsplit("aten.", 1)[-1] for line in logs]
    assert ops == ["exp.default", "detach.default"]


def test_schema_normalize_fills_defaults_and_moves_keywords() -> None:
    schema = ember.ops.aten.sum.dim_IntList._schema
    x = ember.ones(2)
    args, kwargs = schema.normalize((x,), {"dim": [0], "keepdim": True})
    assert args[0] is x and list(args[1]) == [0] and kwargs == {"keepdim": True, "dtype": None}
    args, kwargs = schema.normalize((x, [0]), {}, normalize_to_only_use_kwargs=True)
    assert args == () and list(kwargs) == ["input", "dim", "keepdim", "dtype"]
    with pytest.raises(TypeError, match="unexpected"):
        schema.normalize((x, [0]), {"bogus": 1})


def test_handler_ops_are_not_recorded_unless_reentrant(lib: Any) -> None:
    reentrant = sub(lib, "overrides").enable_reentrant_dispatch
    seen: list[bool] = []

    class W(lib.Tensor):
        @staticmethod
        def __new__(cls, e):  # noqa: ANN001, ANN205
            return lib.Tensor._make_wrapper_subclass(cls, e.shape, dtype=e.dtype)

        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):  # noqa: ANN001, ANN206
            inner = lib.ones(2, requires_grad=True)
            seen.append((inner * 2).requires_grad)
            with reentrant():
                seen.append((inner * 2).requires_grad)
            return lib.zeros(2)

    lib.ops.aten.neg.default(W(lib.ones(2)))
    lib.ops.aten.neg.default(W(lib.ones(2)).requires_grad_())
    assert seen == [False, True, False, True]


def test_wrapper_version_counter_data_and_set(lib: Any) -> None:
    tt = sub(lib, "testing._internal.two_tensor")
    x = tt.TwoTensor(lib.ones(2), lib.zeros(2))
    v = x._version
    x.add_(1)  # the handler writes the inner tensors; the wrapper's counter moves too
    assert x._version == v + 1
    assert type(x.data) is tt.TwoTensor
    y = x.view(2)
    y.mul_(2)
    assert y._version == x._version
    z = lib.zeros(2)
    assert z.set_(lib.ones(3)) is z and z.tolist() == [1.0, 1.0, 1.0] and z._version == 1
    with pytest.raises(RuntimeError, match="in-place"):
        lib.zeros(2, requires_grad=True).set_(lib.ones(2))
