"""Wrapper subclasses whose handler answers for their metadata (issue 18):
``_make_wrapper_subclass(..., dispatch_sizes_strides_policy=, dispatch_device=,
dispatch_layout=)``. Each test logs what ember's handler (and a mode) receives for each
member and compares it with what PyTorch's receives (NOTE [custom metadata]).
"""

from __future__ import annotations

import importlib
import itertools
from typing import Any

import pytest

import ember

torch = pytest.importorskip("torch")

#: member name -> how to read it
MEMBERS: dict[str, Any] = {
    "size()": lambda w, lib: w.size(),
    "size(-1)": lambda w, lib: w.size(-1),
    "shape": lambda w, lib: w.shape,
    "dim": lambda w, lib: w.dim(),
    "ndim": lambda w, lib: w.ndim,
    "ndimension": lambda w, lib: w.ndimension(),
    "len": lambda w, lib: len(w),
    "numel": lambda w, lib: w.numel(),
    "nelement": lambda w, lib: w.nelement(),
    "stride()": lambda w, lib: w.stride(),
    "stride(0)": lambda w, lib: w.stride(0),
    "storage_offset": lambda w, lib: w.storage_offset(),
    "is_contiguous": lambda w, lib: w.is_contiguous(),
    "is_contiguous(contiguous_format)": lambda w, lib: w.is_contiguous(
        memory_format=lib.contiguous_format
    ),
    "is_contiguous(channels_last)": lambda w, lib: w.is_contiguous(memory_format=lib.channels_last),
    "device": lambda w, lib: w.device,
    "is_cpu": lambda w, lib: w.is_cpu,
    "is_meta": lambda w, lib: w.is_meta,
    "get_device": lambda w, lib: w.get_device(),
    "layout": lambda w, lib: w.layout,
    "dtype": lambda w, lib: w.dtype,
}


def _wrapper_class(lib: Any, log: list[str], answer: Any) -> type:
    """A wrapper subclass logging each op; ``answer(func)`` gives its result, or it runs the
    op on the wrapped tensor when ``answer`` returns ``...``."""
    tree_map = importlib.import_module(f"{lib.__name__}.utils._pytree").tree_map

    class W(lib.Tensor):
        @staticmethod
        def __new__(cls, elem: Any, **options: Any) -> Any:
            r = lib.Tensor._make_wrapper_subclass(
                cls, elem.size(), strides=elem.stride(), dtype=elem.dtype, **options
            )
            r.elem = elem
            return r

        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
            log.append(str(func))
            r = answer(func)
            if r is not ...:
                return r

            def un(x: Any) -> Any:
                return x.elem if isinstance(x, W) else x

            return func(*tree_map(un, args), **tree_map(un, kwargs or {}))

        def __repr__(self) -> str:
            return "W"

    return W


def _read_all(lib: Any, options: dict[str, Any], answer: Any) -> dict[str, Any]:
    log: list[str] = []
    W = _wrapper_class(lib, log, answer)
    w = W(lib.arange(6.0).reshape(2, 3), **options)
    out = {}
    for name, read in MEMBERS.items():
        log.clear()
        try:
            v = read(w, lib)
        except (RuntimeError, TypeError) as e:
            v = type(e).__name__
        # the sizes/strides/devices/layouts of both libraries print alike without the prefix
        out[name] = (list(log), str(v).replace(f"{lib.__name__}.", ""))
    return out


_NAMES = ("dispatch_sizes_strides_policy", "dispatch_device", "dispatch_layout")
OPTIONS = [
    dict(zip(_NAMES, c, strict=True))
    for c in itertools.product((None, "sizes", "strides"), (False, True), (False, True))
]


@pytest.mark.parametrize("options", OPTIONS, ids=str)
def test_ops_sent_match_torch(options: dict[str, Any]) -> None:
    """The handler receives PyTorch's ops for every member and option; results agree."""
    run = lambda func: ...  # noqa: E731 - the handler runs every op on what it wraps
    assert _read_all(ember, options, run) == _read_all(torch, options, run)


@pytest.mark.parametrize("options", OPTIONS[1:], ids=str)
def test_handler_returning_none_matches_torch(options: dict[str, Any]) -> None:
    """A handler answering None: the stored sizes, strides, numel, offset and contiguity;
    an error for dim, device and layout (PyTorch's errors are less clear, same types)."""
    assert _read_all(ember, options, lambda func: None) == _read_all(
        torch, options, lambda func: None
    )


def _answers(lib: Any) -> Any:
    table = {
        "aten.sym_size.default": [5, 7],
        "aten.dim.default": 2,
        "aten.sym_stride.default": (1, 5),
        "aten.sym_numel.default": 35,
        "aten.sym_storage_offset.default": 4,
        "aten.is_contiguous.default": False,
        "prim.device.default": lib.device("meta"),
        "prim.layout.default": lib.strided,
    }
    return lambda func: table.get(str(func), ...)


def test_handler_answers_are_what_members_give() -> None:
    """A handler's own answers (not the stored metadata) are what the members return."""
    options = {"dispatch_sizes_strides_policy": "sizes", "dispatch_device": True}
    got = _read_all(ember, options, _answers(ember))
    assert got == _read_all(torch, options, _answers(torch))
    assert got["size()"][1] == "Size([5, 7])" and got["numel"][1] == "35"
    assert got["stride()"][1] == "(1, 5)" and got["storage_offset"][1] == "4"
    assert got["device"][1] == "meta" and got["is_meta"][1] == "True"


@pytest.mark.parametrize("lib", [ember, torch], ids=lambda m: m.__name__)
def test_mode_sees_metadata_ops(lib: Any) -> None:
    """A TorchDispatchMode sees the metadata ops before the subclass's handler."""
    log: list[str] = []
    W = _wrapper_class(lib, log, lambda func: ...)
    mode_cls = importlib.import_module(f"{lib.__name__}.utils._python_dispatch").TorchDispatchMode

    class M(mode_cls):  # type: ignore[misc, valid-type]
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
            log.append("mode " + str(func))
            return func(*args, **(kwargs or {}))

    w = W(lib.ones(2, 3), dispatch_sizes_strides_policy="sizes", dispatch_device=True)
    with M():
        assert tuple(w.size()) == (2, 3) and w.dim() == 2 and w.device.type == "cpu"
    assert log == [
        "mode aten.sym_size.default", "aten.sym_size.default", "mode aten.dim.default",
        "aten.dim.default", "mode prim.device.default", "prim.device.default",
    ]  # fmt: skip


@pytest.mark.parametrize("lib", [ember, torch], ids=lambda m: m.__name__)
def test_not_implemented_and_bad_answers(lib: Any) -> None:
    """NotImplemented from every handler is the usual TypeError; a size that is no list, a
    contiguity that is no bool and an unknown policy are errors."""
    W = _wrapper_class(lib, [], lambda func: NotImplemented)
    w = W(lib.ones(2), dispatch_sizes_strides_policy="sizes")
    with pytest.raises(TypeError):
        w.size()
    W = _wrapper_class(lib, [], lambda func: 3)
    w = W(lib.ones(2), dispatch_sizes_strides_policy="sizes")
    with pytest.raises(RuntimeError, match="sym_size must be a list or a tuple"):
        w.size()
    with pytest.raises(RuntimeError, match="is_contiguous returned invalid type int"):
        w.is_contiguous()
    with pytest.raises(ValueError, match="Unknown sizes_strides_policy: foo"):
        W(lib.ones(2), dispatch_sizes_strides_policy="foo")


def test_ops_on_a_policy_wrapper_still_compute() -> None:
    """The wrapper's other ops and autograd are unchanged by the options."""
    W = _wrapper_class(ember, [], lambda func: ...)
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    w = W(x.detach(), dispatch_sizes_strides_policy="sizes", dispatch_device=True)
    assert (w + w).tolist() == [2.0, 4.0]  # the handler returns the plain result
    assert ember.ops.aten.sym_size.default(x) == [2]
    assert ember.ops.aten.sym_stride.default(x[::2]) == [2]
    assert ember.ops.prim.device.default(x) == ember.device("cpu")
