"""What PyTorch's published tensor subclasses (``torch/testing/_internal``:
``logging_tensor.py``, ``two_tensor.py``, ``common_subclass.py``, ``subclasses.py``) need,
run unchanged under ember (their imports rewritten to ember), found missing: each piece
here, checked against PyTorch. ``redispatch_function`` (both routes, modes),
``cond``/``cond_op``, ``fake_tensor.is_fake`` and ``_is_tensor_constructor``,
``utils._dtype_abbrs``, ``_export.wrappers``, ``_C._profiler``'s traceback helpers,
``_disable_dynamo``, and the backward seed's ``ones_like`` arguments."""

from __future__ import annotations

import importlib
from typing import Any

import pytest

import ember

from .conftest import requires_torch, torch

LIBS = [ember, torch] if torch is not None else [ember]
ids = [m.__name__ for m in LIBS]


def _sub(lib: Any, name: str) -> Any:
    return importlib.import_module(f"{lib.__name__}.{name}")


def _scaled_mul(overrides: Any) -> Any:
    """``a * b + 1`` as a Python-route function of ``overrides``' library: it hands itself
    to ``handle_torch_function`` when an argument overrides it."""

    def scaled_mul(a: Any, b: Any) -> Any:
        if overrides.has_torch_function((a, b)):
            return overrides.handle_torch_function(scaled_mul, (a, b), a, b)
        return a * b + 1

    return scaled_mul


@requires_torch
@pytest.mark.parametrize("lib", LIBS, ids=ids)
def test_redispatch_function_skips_one_hop_of_a_subclass(lib: Any) -> None:
    overrides = lib.overrides
    seen: list[str] = []

    class Logged(lib.Tensor):
        @classmethod
        def __torch_function__(cls, func: Any, types: Any, args: Any = (), kw: Any = None) -> Any:
            seen.append(func.__name__)
            return overrides.redispatch_function(func, types, args, kw)

    scaled_mul = _scaled_mul(overrides)
    x = lib.tensor([3.0]).as_subclass(Logged)
    out = scaled_mul(x, lib.tensor([4.0]).as_subclass(Logged))
    assert seen == ["scaled_mul", "mul"] and out.tolist() == [13.0]
    assert type(out) is lib.Tensor  # the handler got a plain result back, so no "add"
    seen.clear()
    assert type(lib.add(x, 1)) is lib.Tensor and seen == ["add"]  # the C++ route


@requires_torch
@pytest.mark.parametrize("lib", LIBS, ids=ids)
def test_redispatch_function_in_a_mode_that_reenters_itself(lib: Any) -> None:
    overrides = lib.overrides
    seen: list[str] = []

    class Mode(overrides.TorchFunctionMode):
        def __torch_function__(self, func: Any, types: Any, args: Any = (), kw: Any = None) -> Any:
            seen.append(func.__name__)
            with self:
                return overrides.redispatch_function(func, types, args, kw)

    scaled_mul = _scaled_mul(overrides)
    a, b = lib.tensor([3.0]), lib.tensor([4.0])
    with Mode():
        out = scaled_mul(a, b)
    assert seen == ["scaled_mul", "mul", "add"] and out.tolist() == [13.0]


@requires_torch
@pytest.mark.parametrize("lib", LIBS, ids=ids)
def test_cond_runs_the_branch_pred_picks(lib: Any) -> None:
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    out = lib.cond(x.sum() > 2, lambda t: t * 3, lambda t: t - 1, (x,))
    out.sum().backward()
    assert out.tolist() == [3.0, 6.0] and x.grad.tolist() == [3.0, 3.0]
    assert lib.cond(False, lambda t: t * 3, lambda t: t - 1, (x,)).tolist() == [0.0, 1.0]
    assert _sub(lib, "_higher_order_ops.cond").cond_op.__name__ == "cond"
    assert lib.cond in lib.overrides.get_ignored_functions()


@requires_torch
@pytest.mark.parametrize("lib", LIBS, ids=ids)
def test_fake_tensor_helpers(lib: Any) -> None:
    fake = _sub(lib, "_subclasses.fake_tensor")
    aten = lib.ops.aten
    assert fake._is_tensor_constructor(aten.ones.default)
    assert fake._is_tensor_constructor(aten.empty.memory_format)
    assert not fake._is_tensor_constructor(aten.add.Tensor)
    assert not fake._is_tensor_constructor(aten.ones_like.default)  # takes a tensor
    assert not fake._is_tensor_constructor(aten.unbind.int)
    with fake.FakeTensorMode() as mode:
        f = mode.from_tensor(lib.ones(2))
    assert fake.is_fake(f) and not fake.is_fake(lib.ones(2))


@requires_torch
def test_dtype_abbrs_match_torch() -> None:
    ours = importlib.import_module("ember.utils._dtype_abbrs").dtype_abbrs
    theirs = importlib.import_module("torch.utils._dtype_abbrs").dtype_abbrs
    assert ours
    for d, short in ours.items():
        assert theirs[getattr(torch, str(d).split(".")[-1])] == short


@requires_torch
@pytest.mark.parametrize("lib", LIBS, ids=ids)
def test_markers_and_traceback_helpers(lib: Any) -> None:
    mark = _sub(lib, "_export.wrappers").mark_subclass_constructor_exportable_experimental

    class C:
        @lib._disable_dynamo
        @mark
        def __init__(self, v: int) -> None:
            self.v = v

    assert C(3).v == 3
    prof = _sub(lib, "_C._profiler")
    frames = prof.symbolize_tracebacks([prof.gather_traceback(python=True, script=True, cpp=False)])
    names = [f["name"] for f in frames[0]]
    assert "test_markers_and_traceback_helpers" in names
    assert {"filename", "line", "name"} <= set(frames[0][-1])


@requires_torch
def test_backward_seed_is_ones_like_with_preserve_format() -> None:
    """backward() of a scalar seeds with ``ones_like(out, memory_format=preserve_format)``,
    the call PyTorch's _make_grads makes (a dispatch mode sees its arguments)."""
    seen = []
    for lib, base in ((ember, ember.utils._python_dispatch.TorchDispatchMode),
                      (torch, torch.utils._python_dispatch.TorchDispatchMode)):  # fmt: skip

        class Mode(base):  # type: ignore[misc, valid-type]
            def __torch_dispatch__(
                self, func: Any, types: Any, args: Any = (), kw: Any = None
            ) -> Any:
                if "ones_like" in str(func):
                    seen.append(sorted((k, str(v).split(".")[-1]) for k, v in (kw or {}).items()))
                return func(*args, **(kw or {}))

        x = lib.ones(2, requires_grad=True)
        with Mode():
            (x * 2).sum().backward()
    assert seen[0] == seen[1] == [("memory_format", "preserve_format"), ("pin_memory", "False")]
