"""The small top-level functions scripts call (``ember/_script_helpers.py``) and
``ember.compiler.disable`` / ``is_compiling``, against PyTorch's."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import ember

from .conftest import torch

LIBS = [ember, torch] if torch is not None else [ember]


@pytest.mark.parametrize("lib", LIBS, ids=lambda m: m.__name__)
def test_check_family_raises_each_error_type(lib: Any) -> None:
    lib._check(True)
    with pytest.raises(RuntimeError, match="boom"):
        lib._check(False, lambda: "boom")
    with pytest.raises(RuntimeError, match="Expected cond to be True"):
        lib._check(False)
    for fn, err in (
        (lib._check_index, IndexError),
        (lib._check_value, ValueError),
        (lib._check_type, TypeError),
        (lib._check_not_implemented, NotImplementedError),
    ):
        with pytest.raises(err):
            fn(False, lambda: "no")
    with pytest.raises(ValueError, match="x"):
        lib._check_with(ValueError, False, lambda: "x")


@pytest.mark.filterwarnings("ignore:_check_is_size will be removed")
@pytest.mark.parametrize("lib", LIBS, ids=lambda m: m.__name__)
def test_sym_helpers_and_check_is_size(lib: Any) -> None:
    assert (lib.sym_int(3.7), lib.sym_int(-3.7), lib.sym_max(2, 3), lib.sym_min(2, 3)) == (
        3,
        -3,
        3,
        2,
    )
    assert lib.sym_float(2) == 2.0 and lib.sym_not(True) is False
    lib._check_is_size(0)
    with pytest.raises(RuntimeError):
        lib._check_is_size(-1)


@pytest.mark.parametrize("lib", LIBS, ids=lambda m: m.__name__)
def test_asarray_shares_memory_and_copies_when_asked(lib: Any) -> None:
    a = np.zeros(3, dtype=np.float32)
    t = lib.asarray(a)
    t[0] = 5.0
    assert a[0] == 5.0
    c = lib.asarray(a, copy=True)
    c[1] = 7.0
    assert a[1] == 0.0
    x = lib.ones(2)
    assert lib.asarray(x) is x
    assert lib.asarray(x, dtype=lib.float64).dtype == lib.float64
    with pytest.raises(ValueError):
        lib.asarray(x, dtype=lib.float64, copy=False)
    assert lib.asarray([1, 2]).dtype == lib.int64
    assert lib.asarray([1.5], requires_grad=True).requires_grad


@pytest.mark.parametrize("lib", LIBS, ids=lambda m: m.__name__)
def test_frombuffer_typename_is_storage(lib: Any) -> None:
    buf = bytearray(np.array([1.0, 2.0, 3.0], dtype=np.float32).tobytes())
    t = lib.frombuffer(buf, dtype=lib.float32, count=2, offset=4)
    assert t.tolist() == [2.0, 3.0]
    t[0] = 9.0  # shares the buffer
    assert np.frombuffer(buf, dtype=np.float32)[1] == 9.0
    assert lib.typename(lib.ones(2)) == f"{lib.__name__}.FloatTensor"
    assert lib.typename(3) == "int"
    assert lib.typename(lib.nn.Linear(1, 1)).endswith("Linear")
    assert lib.is_storage(lib.ones(2).untyped_storage()) and not lib.is_storage(lib.ones(2))


@pytest.mark.parametrize("lib", LIBS, ids=lambda m: m.__name__)
def test_default_device_tensor_type_and_interop_threads(lib: Any) -> None:
    assert lib.get_default_device() == lib.device("cpu")
    lib.set_default_device("cpu")
    lib.set_num_interop_threads(lib.get_num_interop_threads())  # torch: only once, same n ok
    assert lib.get_num_interop_threads() >= 1


def test_set_default_tensor_type_and_refusals() -> None:
    try:
        ember.set_default_tensor_type("torch.DoubleTensor")
        assert ember.get_default_dtype() is ember.float64
    finally:
        ember.set_default_dtype(ember.float32)
    with pytest.raises(TypeError, match="FloatTensor or DoubleTensor"):
        ember.set_default_tensor_type("torch.IntTensor")
    with pytest.raises(NotImplementedError, match="device="):
        ember.set_default_device("meta")


def test_sym_int_takes_the_torch_function_protocol() -> None:
    class Duck:
        @classmethod
        def __torch_function__(cls, func: Any, types: Any, args: Any = (), kwargs: Any = None):
            return func.__name__

    assert ember.sym_int(Duck()) == "sym_int"


def test_compiler_disable_and_is_compiling() -> None:
    def f(x: Any) -> Any:  # (no side effect: it would run the function eagerly)
        return x * 2 if ember.compiler.is_compiling() else x * 3

    assert f(ember.ones(2)).tolist() == [3.0, 3.0]
    assert ember.compile(f)(ember.ones(2)).tolist() == [2.0, 2.0]
    assert not ember.compiler.is_compiling()
    assert ember.compiler.disable(abs) is abs and ember.compiler.disable()(abs) is abs
