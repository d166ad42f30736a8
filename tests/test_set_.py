"""``Tensor.set_`` in PyTorch's five forms (NOTE [set_ forms] in ``ember/_tensor_set.py``):
what the tensor becomes, the storage it shares, its version counter, autograd's answer and
what the two protocols see, each against PyTorch."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

import ember
from tests.conftest import requires_torch, torch

#: one call per case on a library ``L``: ``x`` a float32 zeros(2), ``a`` arange(6.)
FORMS: dict[str, Callable[..., Any]] = {
    "tensor": lambda L, x, a: x.set_(a),
    "tensor view": lambda L, x, a: x.set_(a[2:]),
    "empty": lambda L, x, a: x.set_(),
    "storage": lambda L, x, a: x.set_(a.untyped_storage()),
    "storage offset size": lambda L, x, a: x.set_(a.untyped_storage(), 1, (2, 2)),
    "storage offset size stride": lambda L, x, a: x.set_(a.untyped_storage(), 1, (2, 2), (1, 2)),
    "storage keywords": lambda L, x, a: x.set_(
        source=a.untyped_storage(), storage_offset=2, size=(3,), stride=(1,)
    ),
    "storage empty size": lambda L, x, a: x.set_(a.untyped_storage(), 3, (0,)),
    "tensor offset size": lambda L, x, a: x.set_(a, 1, (2,)),
    "tensor view offset size": lambda L, x, a: x.set_(a[2:], 1, (2,)),
    "tensor keywords": lambda L, x, a: x.set_(a, storage_offset=1, size=(2,)),
    "int32 over float bytes": lambda L, x, a: x.int().set_(a.untyped_storage(), 0, (3,)),
    "float64 over float bytes": lambda L, x, a: x.double().set_(a.untyped_storage(), 0, (3,)),
    # refused as PyTorch refuses them
    "dtype mismatch": lambda L, x, a: x.double().set_(a),
    "None": lambda L, x, a: x.set_(None),
    "offset without size": lambda L, x, a: x.set_(a.untyped_storage(), 1),
    "negative offset": lambda L, x, a: x.set_(a.untyped_storage(), -1, (2,)),
    "negative stride": lambda L, x, a: x.set_(a.untyped_storage(), 0, (2,), (-1,)),
    "stride length": lambda L, x, a: x.set_(a.untyped_storage(), 0, (2, 3), (1,)),
    "other device": lambda L, x, a: x.set_(L.empty(3, device="meta").untyped_storage()),
}


def _run(lib: Any, case: str) -> tuple[Any, ...]:
    x, a = lib.zeros(2), lib.arange(6.0)
    try:
        r = FORMS[case](lib, x, a)
    except (RuntimeError, TypeError) as e:
        return type(e).__name__, None
    shares = r.numel() == 0 or r.untyped_storage().data_ptr() == a.untyped_storage().data_ptr()
    return (
        r.tolist(), tuple(r.shape), r.stride(), r.storage_offset(), str(r.dtype).split(".")[1],
        r._version, a._version, shares,
    )  # fmt: skip


@requires_torch
@pytest.mark.parametrize("case", list(FORMS))
def test_set_form_as_pytorch(case: str) -> None:
    assert _run(ember, case) == _run(torch, case)


@requires_torch
@pytest.mark.parametrize("lib", [ember, torch], ids=["ember", "torch"])
def test_set_shares_memory_and_returns_self(lib: Any) -> None:
    a = lib.arange(6.0)
    x = lib.zeros(2)
    view = x[:1]
    assert x.set_(a.untyped_storage(), 1, (2,)) is x
    x[0] = 100.0
    assert a[1].item() == 100.0 and view.tolist() == [0.0]  # old views keep the old memory
    a.add_(1)  # the version counters stay apart
    assert x._version == 2 and a._version == 1 and x.tolist() == [101.0, 3.0]
    assert x.untyped_storage() is a.untyped_storage()


@requires_torch
@pytest.mark.parametrize("lib", [ember, torch], ids=["ember", "torch"])
def test_set_and_autograd(lib: Any) -> None:
    a = lib.arange(6.0)
    for call in (lambda t: t.set_(a), lambda t: t.set_(), lambda t: t.set_(a.untyped_storage())):
        with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
            call(lib.zeros(2, requires_grad=True))
        leaf = lib.zeros(2, requires_grad=True)
        with lib.no_grad():
            call(leaf)  # no check without grad mode, as in-place ops
        assert leaf.requires_grad and leaf.is_leaf
    y = lib.ones(2, requires_grad=True) * 2
    y.set_(a)
    assert type(y.grad_fn).__name__ == "NotImplemented" and y.requires_grad
    w = lib.ones(6, requires_grad=True)
    z = lib.zeros(2)
    z.set_(w * 2)  # a source that requires grad makes the result require it
    assert type(z.grad_fn).__name__ == "NotImplemented" and z.requires_grad
    with pytest.raises(RuntimeError, match="derivative for .*set_.* not implemented"):
        z.sum().backward()


def _seen(lib: Any, case: str) -> list[str]:
    overrides = __import__(f"{lib.__name__}.overrides", fromlist=["TorchFunctionMode"])
    dispatch = __import__(f"{lib.__name__}.utils._python_dispatch", fromlist=["x"])
    log: list[str] = []

    class Functions(overrides.TorchFunctionMode):  # type: ignore[misc,name-defined]
        def __torch_function__(self, func: Any, types: Any, args: Any = (), kw: Any = None):  # type: ignore[no-untyped-def]
            log.append("F " + getattr(func, "__name__", str(func)))
            return func(*args, **(kw or {}))

    class Ops(dispatch.TorchDispatchMode):  # type: ignore[misc,name-defined]
        def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kw: Any = None):  # type: ignore[no-untyped-def]
            log.append(f"D {func} {list(args[2:])}")
            return func(*args, **(kw or {}))

    class Sub(lib.Tensor):  # type: ignore[misc,name-defined]
        @classmethod
        def __torch_function__(cls, func: Any, types: Any, args: Any = (), kw: Any = None):  # type: ignore[no-untyped-def]
            log.append("S " + getattr(func, "__name__", str(func)))
            return super().__torch_function__(func, types, args, kw)

    a = lib.arange(6.0)
    storage, tail = a.untyped_storage(), a[2:]
    with Functions():
        FORMS[case](lib, lib.zeros(2), a)
    with Ops():
        FORMS[case](lib, lib.zeros(2), a if "view" not in case else tail)
    FORMS[case](lib, lib.zeros(2).as_subclass(Sub), a)
    del storage
    return log


@requires_torch
@pytest.mark.parametrize(
    "case", ["tensor", "empty", "storage", "storage offset size stride", "tensor offset size"]
)
def test_protocols_see_what_pytorchs_see(case: str) -> None:
    # __torch_function__ sees nothing (PyTorch's binding checks no overrides); a dispatch
    # mode sees the overload PyTorch's binding picks
    assert _seen(ember, case) == _seen(torch, case)


def test_meta_tensors_take_a_layout() -> None:
    m = ember.zeros(2, device="meta")
    m.set_(ember.empty(6, device="meta").untyped_storage(), 1, (2, 2))
    assert m.shape == (2, 2) and m.stride() == (2, 1) and m.storage_offset() == 1
    assert m.set_().shape == (0,)


def test_a_layout_past_the_storage_says_ember_cannot_grow_it() -> None:
    with pytest.raises(RuntimeError, match="ember cannot grow a storage in place"):
        ember.zeros(2).set_(ember.arange(6.0).untyped_storage(), 5, (2,))
