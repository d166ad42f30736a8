"""``TypedStorage``: what ``Tensor.storage()`` returns and what ``TypedStorage(...)`` makes,
against PyTorch's (the ``lib`` fixture runs each test on ember and, when installed, on
PyTorch)."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from typing import Any

import pytest


@pytest.fixture(autouse=True)
def _quiet() -> Iterator[None]:
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "TypedStorage is deprecated")
        yield


def _name(dtype: Any) -> str:
    return str(dtype).split(".")[-1]


def test_storage_of_a_view_is_all_the_memory(lib: Any) -> None:
    x = lib.arange(6, dtype=lib.float32)
    s = x[2:5].storage()
    assert isinstance(s, lib.TypedStorage) and type(s).__name__ == "TypedStorage"
    assert s.size() == len(s) == 6 and s.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    assert _name(s.dtype) == "float32" and str(s.device) == "cpu"
    assert s.element_size() == 4 and s.nbytes() == 24 and s.data_ptr() == x.data_ptr()
    assert s.untyped() is x.untyped_storage() and type(s.untyped()).__name__ == "UntypedStorage"
    assert s[3] == 3.0 and s[-1] == 5.0 and list(s) == s.tolist()
    assert not s.is_shared() and not s.is_sparse and not s.is_cuda


def test_indexing_errors(lib: Any) -> None:
    s = lib.arange(6.0).storage()
    with pytest.raises(IndexError, match="index 10 out of range for storage of size 6"):
        s[10]
    with pytest.raises(RuntimeError, match="slices are only supported in UntypedStorage"):
        s[1:3]


def test_writes_reach_the_tensor(lib: Any) -> None:
    x = lib.arange(6, dtype=lib.float32)
    s = x[1:].storage()
    s[0] = 100.0
    assert x.tolist() == [100.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    s[1:3] = 7.0
    assert x.tolist()[:3] == [100.0, 7.0, 7.0]
    assert s.fill_(2) is s and x.tolist() == [2.0] * 6
    other = lib.zeros(6).storage()
    other.copy_(s)
    assert other.tolist() == [2.0] * 6


def test_storage_reads_the_bytes_in_the_tensors_dtype(lib: Any) -> None:
    x = lib.ones(2, dtype=lib.float32)
    s = x.view(lib.int32).storage()
    assert _name(s.dtype) == "int32" and s.tolist() == [1065353216, 1065353216]
    assert lib.zeros(2, 3).t().storage().tolist() == [0.0] * 6
    assert lib.tensor([True, False]).storage().tolist() == [True, False]
    assert lib.tensor([1 + 2j]).storage().tolist() == [1 + 2j]
    assert lib.ones(2, dtype=lib.bfloat16).storage().tolist() == [1.0, 1.0]
    assert type(lib.arange(3).storage()[1]) is int


def test_constructors(lib: Any) -> None:
    assert lib.TypedStorage(3, dtype=lib.float64).size() == 3
    s = lib.TypedStorage([1, 2, 3], dtype=lib.int64)
    assert s.tolist() == [1, 2, 3] and _name(s.dtype) == "int64"
    empty = lib.TypedStorage()
    assert empty.size() == 0 and _name(empty.dtype) == "float32"
    x = lib.arange(6.0)
    w = lib.TypedStorage(wrap_storage=x.untyped_storage(), dtype=lib.float32, _internal=True)
    assert w.size() == 6 and w.untyped() is x.untyped_storage()


def test_copies_and_conversions(lib: Any) -> None:
    x = lib.arange(3.0)
    s = x.storage()
    c = s.clone()
    assert c.tolist() == [0.0, 1.0, 2.0] and c.data_ptr() != x.data_ptr()
    c[0] = 9.0
    assert x[0].item() == 0.0
    d = s.double()
    assert _name(d.dtype) == "float64" and d.tolist() == [0.0, 1.0, 2.0]
    assert s.long().tolist() == [0, 1, 2] and s.cpu().data_ptr() == s.data_ptr()
    assert s.pickle_storage_type() == "FloatStorage"
    assert s.type() == f"{lib.__name__}.FloatStorage"


def test_repr(lib: Any) -> None:
    r = repr(lib.arange(3).storage())
    assert r == (
        f" 0\n 1\n 2\n[{lib.__name__}.storage.TypedStorage(dtype={lib.__name__}.int64, "
        "device=cpu) of size 3]"
    )


def test_storage_warns_once_as_pytorch(lib: Any) -> None:
    import importlib

    mod = importlib.import_module("ember.storage" if lib.__name__ == "ember" else "torch.storage")
    if lib.__name__ == "ember":
        mod._warned_typed.clear()
    else:
        pytest.skip("PyTorch's once-only flag is internal: only ember's is reset here")
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        lib.ones(2).storage()
        lib.ones(2).storage()
    assert [str(w.message)[:27] for w in got] == ["TypedStorage is deprecated."]
