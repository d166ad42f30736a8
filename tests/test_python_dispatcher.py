"""``ember._dispatch.python``: ``OpOverload.py_impl`` kernels are registered kernels while
``enable_python_dispatcher()`` is on, and the previous kernels come back after."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import ember
from ember._dispatch.python import (
    enable_python_dispatcher,
    is_python_dispatcher_enabled,
    no_python_dispatcher,
)
from ember.dispatch.keys import DispatchKey

aten = ember.ops.aten


@pytest.fixture
def scratch_op() -> Iterator[object]:
    with ember.library.Library("pydisp_test", "DEF") as lib:
        lib.define("twice(Tensor x) -> Tensor")
        lib.impl("twice", lambda x: x * 2, "CPU")
        lib.impl("twice", lambda x: ember.empty_like(x), "Meta")
        op = ember.ops.pydisp_test.twice.default
        yield op
        op.py_kernels.clear()


def test_py_impl_only_in_force_inside_the_block(scratch_op: object) -> None:
    op = scratch_op

    @op.py_impl(DispatchKey.CPU)
    def thrice(x: ember.Tensor) -> ember.Tensor:
        return x * 3

    assert op.py_kernels[DispatchKey.CPU] is thrice
    assert op(ember.ones(1)).item() == 2.0
    with enable_python_dispatcher():
        assert is_python_dispatcher_enabled()
        assert op(ember.ones(1)).item() == 3.0
        with enable_python_dispatcher():  # nesting keeps it on
            assert op(ember.ones(1)).item() == 3.0
        assert op(ember.ones(1)).item() == 3.0
        with no_python_dispatcher():
            assert op(ember.ones(1)).item() == 2.0
        assert op(ember.ones(1)).item() == 3.0
    assert not is_python_dispatcher_enabled()
    assert op(ember.ones(1)).item() == 2.0


def test_py_impl_registered_while_on_takes_effect_and_meta_and_names(scratch_op: object) -> None:
    op = scratch_op
    seen: list[tuple[int, ...]] = []
    with enable_python_dispatcher():

        @op.py_impl("Meta")
        def meta(x: ember.Tensor) -> ember.Tensor:
            seen.append(tuple(x.shape))
            return ember.empty(x.shape, device="meta")

        out = op(ember.empty(4, 5, device="meta"))
    assert out.device.type == "meta" and seen == [(4, 5)]
    op(ember.empty(2, device="meta"))
    assert seen == [(4, 5)]  # the original Meta kernel again


def test_composite_implicit_py_impl_decomposes_an_op_without_backend_kernel(
    scratch_op: object,
) -> None:
    with ember.library.Library("pydisp_test2", "DEF") as lib:
        lib.define("plus_one(Tensor x) -> Tensor")
        op = ember.ops.pydisp_test2.plus_one.default
        op.py_impl(DispatchKey.CompositeImplicitAutograd)(lambda x: x + 1)
        with pytest.raises(NotImplementedError, match="plus_one"):
            op(ember.ones(1))
        with enable_python_dispatcher():
            x = ember.ones(2, requires_grad=True)
            y = op(x)
            y.sum().backward()  # a decomposition: autograd sees its parts
        assert y.tolist() == [2.0, 2.0] and x.grad.tolist() == [1.0, 1.0]
        op.py_kernels.clear()


def test_py_impl_errors_say_why(scratch_op: object) -> None:
    op = scratch_op
    op.py_impl(DispatchKey.CPU)(lambda x: x)
    with pytest.raises(RuntimeError, match="override a python impl"):
        op.py_impl(DispatchKey.CPU)(lambda x: x)
    with pytest.raises(ValueError, match="unknown dispatch key"):
        op.py_impl("NoSuchKey")
    with pytest.raises(NotImplementedError, match="dispatch keys only"):
        op.py_impl(ember._subclasses.fake_tensor.FakeTensorMode)
