"""The two protocols in PyTorch's detail (issue 18): guards that act when made, what a mode
or a handler is handed (factory options, normalised autograd arguments, the popped modes'
order), subclass construction, storages, operator names and the override lists.

Every behaviour test runs on ember and on PyTorch (the ``lib`` fixture), so each expectation
is checked against the real thing. PyTorch's own test files are compared case by case in
docs/fidelity.md ("PyTorch's protocol tests").
"""

from __future__ import annotations

import gc
import inspect
import weakref
from typing import Any

import pytest

import ember
from tests.conftest import sub


def tree_map(lib: Any) -> Any:
    return sub(lib, "utils._pytree").tree_map


def wrapper_class(lib: Any, log: list[str] | None = None) -> type:
    """A storage-less wrapper subclass whose handler unwraps, runs the op and rewraps."""
    tmap = tree_map(lib)

    class W(lib.Tensor):
        @staticmethod
        def __new__(cls, elem):  # noqa: ANN001, ANN205
            r = lib.Tensor._make_wrapper_subclass(
                cls, elem.shape, dtype=elem.dtype, requires_grad=elem.requires_grad
            )
            r.elem = elem
            return r

        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):  # noqa: ANN001, ANN206
            if log is not None:
                log.append(str(func))

            def unwrap(e: Any) -> Any:
                return e.elem if isinstance(e, W) else e

            def wrap(e: Any) -> Any:
                return W(e) if isinstance(e, lib.Tensor) and not isinstance(e, W) else e

            return tmap(wrap, func(*tmap(unwrap, args), **tmap(unwrap, kwargs or {})))

        def __repr__(self) -> str:  # noqa: D105
            return f"W({self.elem!r})"

    return W


# ------------------------------------------------------------------ RAII guards


def test_disable_torch_dispatch_acts_when_made_and_undoes_when_deleted(lib: Any) -> None:
    """``no_dispatch``-style code (a guard held by a name, then deleted) must not recurse."""
    calls: list[str] = []

    class Sub(lib.Tensor):
        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):  # noqa: ANN001, ANN206
            calls.append(str(func))
            guard = lib._C._DisableTorchDispatch()
            out = func(*args, **(kwargs or {}))  # would come back here without the guard
            del guard
            return out

    x = lib.Tensor._make_subclass(Sub, lib.ones(2))
    y = x + 1
    assert calls == ["aten.add.Tensor"]
    assert type(y) is lib.Tensor and y.tolist() == [2.0, 2.0]  # ran below the Python key
    _ = x * 2  # the guard is gone: the handler runs again
    assert calls == ["aten.add.Tensor", "aten.mul.Tensor"]


def test_scoped_guards_also_work_as_context_managers(lib: Any) -> None:
    log: list[str] = []
    mode_cls = sub(lib, "utils._python_dispatch").TorchDispatchMode

    class Record(mode_cls):  # type: ignore[misc, valid-type]
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # noqa: ANN001, ANN204
            log.append(str(func))
            return func(*args, **(kwargs or {}))

    with Record():
        with lib._C._DisableTorchDispatch():
            lib.ones(1)
        lib.zeros(1)
    assert log == ["aten.zeros.default"]


def test_enable_torch_function_acts_when_made(lib: Any) -> None:
    C = lib._C
    with C.DisableTorchFunction():
        assert not C._is_torch_function_enabled()
        guard = C._EnableTorchFunction()
        assert C._is_torch_function_enabled()
        del guard
        assert not C._is_torch_function_enabled()
    assert C._is_torch_function_enabled()


def test_disable_torch_function_subclass_acts_only_as_a_context_manager(lib: Any) -> None:
    """In PyTorch this one is a with-block only: making it changes nothing."""
    C = lib._C
    guard = C.DisableTorchFunctionSubclass()
    assert C._is_torch_function_enabled()
    with guard:
        assert not C._is_torch_function_enabled()
    assert C._is_torch_function_enabled()


def test_auto_dispatch_below_autograd_records_no_graph(lib: Any) -> None:
    x = lib.ones(2, requires_grad=True)
    guard = lib._C._AutoDispatchBelowAutograd()
    y = x * 2
    del guard
    assert y.grad_fn is None and not y.requires_grad
    assert (x * 2).grad_fn is not None


def test_no_dispatch_helper_of_pytorch_style(lib: Any) -> None:
    """The published ``no_dispatch`` context manager: a guard held across a ``yield``."""
    import contextlib

    @contextlib.contextmanager
    def no_dispatch() -> Any:
        guard = lib._C._DisableTorchDispatch()
        try:
            yield
        finally:
            del guard

    class Sub(lib.Tensor):
        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):  # noqa: ANN001, ANN206
            with no_dispatch():
                return func(*args, **(kwargs or {}))

    x = lib.Tensor._make_subclass(Sub, lib.arange(3.0))
    assert (x * 2).sum().item() == 6.0


# ------------------------------------------------------------------ factories and modes


def test_function_mode_sees_a_factory_before_its_device_is_parsed(lib: Any) -> None:
    seen: list[Any] = []

    class MyDevice(sub(lib, "overrides").TorchFunctionMode):  # type: ignore[misc]
        def __torch_function__(self, func, types, args=(), kwargs=None):  # noqa: ANN001, ANN204
            kwargs = kwargs or {}
            if kwargs.get("device") == "my_device":
                seen.append((func.__name__, args, dict(kwargs)))
                return "made on my_device"
            return func(*args, **kwargs)

    with MyDevice():
        assert lib.empty(4, device="my_device") == "made on my_device"
        assert lib.zeros(2, 3, device="my_device") == "made on my_device"
        assert lib.ones(2).shape == (2,)  # other calls run as usual
    assert seen == [
        ("empty", (4,), {"device": "my_device"}),
        ("zeros", (2, 3), {"device": "my_device"}),
    ]
    with pytest.raises(RuntimeError, match="my_device"):
        lib.empty(4, device="my_device")  # no mode: the parser's error


def test_modes_receive_factory_options_as_pytorch_passes_them(lib: Any) -> None:
    log: list[Any] = []
    mode_cls = sub(lib, "utils._python_dispatch").TorchDispatchMode

    class Record(mode_cls):  # type: ignore[misc, valid-type]
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # noqa: ANN001, ANN204
            log.append((str(func), {k: str(v) for k, v in (kwargs or {}).items()}))
            return func(*args, **(kwargs or {}))

    x = lib.ones(2)
    with Record():
        lib.ones(2)
        lib.zeros(2, dtype=lib.float64)
        lib.empty(3, layout=lib.strided)
        lib.arange(3)
        lib.full((2,), 1.0)
        lib.zeros(1, device="meta")
        lib.ones_like(x)
        x.new_zeros(3)
        x.to(dtype=lib.float64)  # not a TensorOptions binding: no pin_memory
    cpu, meta, f64 = str(lib.device("cpu")), str(lib.device("meta")), str(lib.float64)
    opts = {"device": cpu, "pin_memory": "False"}
    assert log == [
        ("aten.ones.default", opts),
        ("aten.zeros.default", {"dtype": f64, **opts}),
        ("aten.empty.memory_format", {"layout": str(lib.strided), **opts}),
        ("aten.arange.default", opts),
        ("aten.full.default", opts),
        ("aten.zeros.default", {"device": meta, "pin_memory": "False"}),
        ("aten.ones_like.default", {"pin_memory": "False"}),
        ("aten.new_zeros.default", {"pin_memory": "False"}),
        ("aten._to_copy.default", {"dtype": f64}),
    ]


def test_disable_current_modes_yields_the_popped_modes_top_first(lib: Any) -> None:
    pd = sub(lib, "utils._python_dispatch")

    class Pass(pd.TorchDispatchMode):  # type: ignore[misc]
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # noqa: ANN001, ANN204
            return func(*args, **(kwargs or {}))

    a, b = Pass(), Pass()
    with a, b:
        with pd._disable_current_modes() as popped:
            assert popped[0] is b and popped[1] is a
            assert pd._get_current_dispatch_mode() is None
        assert pd._get_current_dispatch_mode_stack() == [a, b]


# ------------------------------------------------------------------ subclass construction


def test_make_subclass_sets_requires_grad_without_the_handler(lib: Any) -> None:
    calls: list[Any] = []

    class Sub(lib.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):  # noqa: ANN001, ANN206
            calls.append(func)
            return super().__torch_function__(func, types, args, kwargs or {})

    s = lib.Tensor._make_subclass(Sub, lib.ones(2), True)
    assert calls == []
    assert type(s) is Sub and s.requires_grad and s.is_leaf
    with pytest.raises(RuntimeError, match="floating point"):
        lib.Tensor._make_subclass(Sub, lib.ones(2, dtype=lib.int64), True)


def test_tensor_new_on_a_meta_tensor_stays_meta(lib: Any) -> None:
    class Sub(lib.Tensor):
        pass

    s = lib.Tensor.__new__(Sub, lib.empty(2, 3, device="meta"))
    assert type(s) is Sub and s.is_meta and s.device.type == "meta"
    assert tuple(s.shape) == (2, 3)


# ------------------------------------------------------------------ storages


def test_one_weak_referenceable_storage_object_per_memory(lib: Any) -> None:
    x = lib.arange(6.0)
    st = x.untyped_storage()
    assert x.untyped_storage() is st
    assert x[2:].untyped_storage() is st
    assert x.view(2, 3).t().untyped_storage() is st
    assert x.detach().untyped_storage() is st
    ref = weakref.ref(st)
    assert ref() is st
    assert lib.arange(6.0).untyped_storage() is not st


def test_weak_id_key_dictionary_tracks_storages(lib: Any) -> None:
    """A memory tracker keys storages weakly: an entry lives as long as its tensors."""
    weak = sub(lib, "utils.weak")
    seen = weak.WeakIdKeyDictionary()
    x = lib.ones(4)
    seen[x.untyped_storage()] = "x"
    assert seen[x[1:].untyped_storage()] == "x"
    assert len(seen) == 1
    del x
    gc.collect()
    assert len(seen) == 0


def test_meta_tensor_storage_is_shared_by_views(lib: Any) -> None:
    m = lib.empty(4, 2, device="meta")
    assert m[1:].untyped_storage() is m.untyped_storage()
    assert m.untyped_storage().nbytes() == 32
    assert m.untyped_storage().data_ptr() == 0


def test_wrapper_storage_refuses_data_ptr(lib: Any) -> None:
    W = wrapper_class(lib)
    w = W(lib.ones(2))
    st = w.untyped_storage()
    with pytest.raises(RuntimeError, match="invalid python storage"):
        st.data_ptr()
    assert w.untyped_storage() is st


# ------------------------------------------------------------------ names and lists


def test_resolve_name_and_module_of_operators(lib: Any) -> None:
    ov = sub(lib, "overrides")
    op = lib.ops.aten.mul.Tensor
    assert ov.resolve_name(op) == "aten.mul.Tensor"
    assert op.__module__.endswith("ops.aten")
    assert type(op).__module__ != op.__module__  # the class keeps its own module


def test_ignored_functions_list_subclass_plumbing(lib: Any) -> None:
    ignored = sub(lib, "overrides").get_ignored_functions()
    for f in (
        lib.Tensor.as_subclass,
        lib.Tensor._make_subclass,
        lib.Tensor._make_wrapper_subclass,
        lib.Tensor.__hash__,
        lib.Tensor.__new__,
    ):
        assert f in ignored, f
    assert lib.Tensor.add not in ignored and lib.add not in ignored


def test_testing_override_signatures_name_input_other_out(lib: Any) -> None:
    dummies = sub(lib, "overrides").get_testing_overrides()
    params = inspect.signature(dummies[lib.add]).parameters
    assert list(params)[:2] == ["input", "other"] and params["out"].default is None
    assert list(inspect.signature(dummies[lib.abs]).parameters)[0] == "input"


# ------------------------------------------------------------------ the Python route


def function_recorder(lib: Any, names: tuple[str, ...], seen: list[Any]) -> Any:
    class Record(sub(lib, "overrides").TorchFunctionMode):  # type: ignore[misc]
        def __torch_function__(self, func, types, args=(), kwargs=None):  # noqa: ANN001, ANN204
            if func.__name__ in names:
                seen.append(
                    (
                        func.__name__,
                        [type(a).__name__ for a in args],
                        sorted(kwargs or {}),
                        [t.__name__ for t in types],
                    )
                )
            return func(*args, **(kwargs or {}))

    return Record()


def test_autograd_grad_and_backward_hand_handlers_normalised_arguments(lib: Any) -> None:
    seen: list[Any] = []
    x = lib.ones(2, requires_grad=True)
    y = (x * 2).sum()
    with function_recorder(lib, ("grad", "backward"), seen):
        lib.autograd.grad(y, x, retain_graph=True)
        lib.autograd.grad([y], [x], retain_graph=True)
        lib.autograd.backward(y, retain_graph=True)
        y.backward()
    grad_kwargs = [
        "allow_unused",
        "create_graph",
        "grad_outputs",
        "is_grads_batched",
        "materialize_grads",
        "only_inputs",
        "retain_graph",
    ]
    assert seen == [
        ("grad", ["tuple", "tuple"], grad_kwargs, ["Tensor"]),
        ("grad", ["tuple", "tuple"], grad_kwargs, ["Tensor"]),
        (
            "backward",
            ["tuple"],
            ["create_graph", "grad_tensors", "inputs", "retain_graph"],
            ["Tensor"],
        ),
        (
            "backward",
            ["Tensor"],
            ["create_graph", "gradient", "inputs", "retain_graph"],
            ["Tensor"],
        ),
    ]
    assert x.grad.tolist() == [4.0, 4.0]


def test_autograd_grad_takes_pytorch_positional_order(lib: Any) -> None:
    """The sixth parameter is ``only_inputs``, as in PyTorch (``allow_unused`` is seventh)."""
    x = lib.ones(2, requires_grad=True)
    z = lib.ones(2, requires_grad=True)
    (g, gz) = lib.autograd.grad((x * 3).sum(), (x, z), None, None, False, True, True)
    assert g.tolist() == [3.0, 3.0] and gz is None
    with pytest.raises(RuntimeError, match="cannot be empty"):
        lib.autograd.grad((x * 3).sum(), [])


# ------------------------------------------------------------------ wrapper subclasses


def test_wrapper_prints_through_its_handler() -> None:
    """Printing a storage-less wrapper asks its handler for the values (``item()`` is
    ``aten._local_scalar_dense``), so the default repr shows what it wraps. ember only:
    PyTorch 2.13's default repr of this wrapper fails (a float element's ``W.__format__``,
    an int tensor's recursion); docs/fidelity.md lists the difference."""
    lib = ember
    log: list[str] = []
    W = wrapper_class(lib, log)
    del W.__repr__  # the default Tensor repr
    w = W(lib.tensor([[1, 2, 3], [4, 5, 6]]))
    assert repr(w) == "W([[1, 2, 3],\n   [4, 5, 6]])"
    assert "aten._local_scalar_dense.default" in log
    assert W(lib.tensor([2.5])).item() == 2.5
    assert float(W(lib.tensor(0.5))) == 0.5 and bool(W(lib.tensor([1])))


def test_printing_a_large_wrapper_asks_only_for_the_shown_values() -> None:
    log: list[str] = []
    W = wrapper_class(ember, log)
    del W.__repr__
    text = repr(W(ember.arange(5000)))
    assert text == "W([   0,    1,    2,  ..., 4997, 4998, 4999])"
    assert log.count("aten._local_scalar_dense.default") == 6


def test_wrapper_detach_shares_the_version_counter_and_data_does_not(lib: Any) -> None:
    """PyTorch's test_version, and the view bookkeeping of a wrapper's view ops."""
    W = wrapper_class(lib)
    w = W(lib.ones(4))
    v, d, dd = w.view(2, 2), w.detach(), w.data
    assert v._base is w and v._is_view()
    assert d._base is None and not d._is_view()
    assert not dd._is_view()
    v.add_(1)
    assert w._version == 1
    d.add_(1)
    assert w._version == 2 and v._version == 2 and d._version == 2
    dd.add_(1)
    assert w._version == 2 and dd._version == 1


def test_plain_data_has_its_own_version_counter(lib: Any) -> None:
    x = lib.ones(2)
    x.data.add_(1)
    assert x._version == 0
    x.detach().add_(1)
    assert x._version == 1


def test_in_place_op_on_a_wrapper_returns_the_very_object(lib: Any) -> None:
    W = wrapper_class(lib)
    w, out = W(lib.ones(3)), W(lib.zeros(3))
    assert w.add_(1) is w and w.mul_(2) is w
    assert lib.add(w, w, out=out) is out
    assert w.elem.tolist() == [4.0, 4.0, 4.0] and out.elem.tolist() == [8.0, 8.0, 8.0]


def test_in_place_op_on_a_subclass_returns_the_very_object(lib: Any) -> None:
    class Sub(lib.Tensor):
        pass

    x = lib.ones(2).as_subclass(Sub)
    assert x.add_(1) is x
    y = x
    y += 1
    assert y is x and x.tolist() == [3.0, 3.0]


def test_saving_an_input_for_backward_dispatches_no_detach(lib: Any) -> None:
    """Only saved outputs are detached (``exp`` saves its result; ``mul`` its inputs)."""
    log: list[str] = []
    W = wrapper_class(lib, log)
    x = W(lib.tensor([3.0], requires_grad=True))
    _ = x * x
    assert log == ["aten.mul.Tensor"]
    log.clear()
    _ = x.exp()
    assert sorted(log) == ["aten.detach.default", "aten.exp.default"]


# ------------------------------------------------------------------ binary operators


def test_binary_operator_turns_a_handler_type_error_into_not_implemented(lib: Any) -> None:
    """``Tensor.__add__`` returns NotImplemented when the handler raises TypeError, so
    Python tries the other operand's reflected method (PyTorch's
    ``_handle_torch_function_and_wrap_type_error_to_not_implemented``)."""

    class Sub(lib.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):  # noqa: ANN001, ANN206
            raise TypeError("Sub: no")

        def __radd__(self, other: Any) -> str:
            return "Sub.__radd__"

    s = lib.ones(2).as_subclass(Sub)
    assert lib.ones(2) + s == "Sub.__radd__"
    with pytest.raises(TypeError):
        s + 1  # noqa: B018 - the reflected int.__radd__ cannot help: the TypeError surfaces
    with pytest.raises(TypeError, match="Sub: no"):
        lib.add(lib.ones(2), s)  # a function is not an operator: the handler's error


# ------------------------------------------------------------------ subclass attribute names

#: names subclass authors give their own state (PyTorch's Tensor keeps its state in C++, so
#: none of them collides there): ember's Tensor must not use them either
SUBCLASS_NAMES = [
    "_data", "_keys", "elem", "_elem", "data_", "_t", "inner", "_inner", "a", "b", "_tensor",
    "_value", "_values", "_shape", "_dtype", "_device", "_meta", "_storage", "_offset_", "_impl",
]  # fmt: skip


@pytest.mark.parametrize("name", SUBCLASS_NAMES)
def test_subclass_attributes_do_not_collide_with_tensor_state(lib: Any, name: str) -> None:
    class Sub(lib.Tensor):
        pass

    s = lib.arange(3.0).as_subclass(Sub)
    setattr(s, name, "mine")
    assert getattr(s, name) == "mine"
    out = (s + 1).as_subclass(lib.Tensor)
    assert out.tolist() == [1.0, 2.0, 3.0]
    assert s.shape == (3,) and s.dtype == lib.float32 and s.sum().item() == 3.0
    assert repr(s).startswith("Sub([0., 1., 2.]")
    s.requires_grad_()
    (s * 2).sum().backward()
    assert s.grad.tolist() == [2.0, 2.0, 2.0]


def test_wrapper_subclass_with_slots_named_like_tensor_state(lib: Any) -> None:
    """A wrapper keeping what it wraps in ``_data`` (as several published examples do)."""
    tmap = tree_map(lib)

    class DataWrapper(lib.Tensor):
        __slots__ = ("_data",)

        @staticmethod
        def __new__(cls, data):  # noqa: ANN001, ANN205
            r = lib.Tensor._make_wrapper_subclass(cls, data.shape, dtype=data.dtype)
            r._data = data
            return r

        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):  # noqa: ANN001, ANN206
            def unwrap(e: Any) -> Any:
                return e._data if isinstance(e, DataWrapper) else e

            def wrap(e: Any) -> Any:
                return DataWrapper(e) if isinstance(e, lib.Tensor) else e

            return tmap(wrap, func(*tmap(unwrap, args), **tmap(unwrap, kwargs or {})))

    w = DataWrapper(lib.tensor([1.0, 2.0]))
    out = w * 3
    assert type(out) is DataWrapper and out._data.tolist() == [3.0, 6.0]
    assert out.shape == (2,) and out.dtype == lib.float32


def test_all_same_mode(lib: Any) -> None:
    mu = sub(lib, "utils._mode_utils")
    mode_cls = sub(lib, "utils._python_dispatch").TorchDispatchMode
    x, y = mode_cls(), mode_cls()
    assert mu.all_same_mode([x, x, x])
    assert not mu.all_same_mode([x, None]) and not mu.all_same_mode([x, y])
