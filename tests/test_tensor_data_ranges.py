"""``ember.tensor(data, dtype=...)`` refuses Python numbers its dtype cannot hold as
PyTorch's does (NOTE [python data ranges] in ``ember/_python_data.py``), where NumPy's cast
would wrap them silently: the same error type and PyTorch's message in ember's."""

from __future__ import annotations

from typing import Any

import pytest

import ember
from tests.conftest import requires_torch, torch

INTEGRAL = ["uint8", "int8", "int16", "int32", "int64", "uint16", "uint32", "uint64"]
BIG = 2**63
VALUES: list[Any] = [
    [70000], [-1], [-255], [-256], [-65535], [-65536], [65535], [65536], [2**32], [-(2**32)],
    [BIG - 1], [-BIG], [BIG], [2**64], [2**70], [-1, BIG], [BIG, 1], [255.0], [256.0],
    [-0.5], [65535.9], [1.5e20], [float("inf")], [float("nan")], [-1.0], [1, -1.0],
    [-1, 2.0], [True, -1.0], [[1, 2], [3, 70000]], 70000, -1, [True], [], [[]], [1j],
    [1 + 0j],
]  # fmt: skip


def _build(lib: Any, value: Any, dtype: str | None) -> tuple[str, Any]:
    try:
        t = lib.tensor(value, dtype=None if dtype is None else getattr(lib, dtype))
    except (RuntimeError, ValueError, OverflowError, TypeError) as e:
        return type(e).__name__, str(e).split("\n")[0]
    return "ok", (repr(t.tolist()), str(t.dtype).split(".")[-1])  # (repr: nan == nan)


@requires_torch
@pytest.mark.parametrize("dtype", [*INTEGRAL, "bool", "float16", "float32", "complex64", None])
def test_python_numbers_fit_the_dtype_as_pytorch(dtype: str | None) -> None:
    for value in VALUES:
        got, want = _build(ember, value, dtype), _build(torch, value, dtype)
        assert got[0] == want[0], (value, dtype, got, want)
        if want[0] == "ok":
            assert got == want, (value, dtype)
        else:  # PyTorch's message, within ember's longer one
            assert want[1] in got[1], (value, dtype, got[1], want[1])


def test_the_message_names_the_value_and_the_way_out() -> None:
    with pytest.raises(RuntimeError, match="uint16 without overflow: 70000; pick a wider"):
        ember.tensor([70000], dtype=ember.uint16)
    with pytest.raises(OverflowError, match=r"\(-1 for uint64\)"):
        ember.tensor([-1], dtype=ember.uint64)
    with pytest.raises(ValueError, match="pass dtype=ember.float64"):
        ember.tensor([2**63])
    assert ember.tensor([-1], dtype=ember.uint32).tolist() == [2**32 - 1]  # as PyTorch's


def test_as_tensor_and_new_tensor_check_too() -> None:
    with pytest.raises(RuntimeError, match="int8 without overflow"):
        ember.as_tensor([300], dtype=ember.int8)
    with pytest.raises(RuntimeError, match="uint16 without overflow"):
        ember.zeros(1, dtype=ember.uint16).new_tensor([70000])
