"""What the two modes see of ``tensor``, ``as_tensor`` and ``from_numpy`` is PyTorch's
(NOTE [data builders and modes] in ``ember/_factory.py``): a TorchFunctionMode sees the
builder's call with the keyword arguments given (those not at their default: PyTorch
also passes one given at its default) and nothing inside it; a TorchDispatchMode
sees ``lift_fresh``, ``_to_copy`` and ``detach`` as PyTorch's builders dispatch them."""

from __future__ import annotations

import importlib
from typing import Any

import numpy as np
import pytest

import ember

from .conftest import requires_torch, torch


def _seen(lib: Any) -> list[Any]:
    tfm = lib.overrides.TorchFunctionMode
    tdm = importlib.import_module(f"{lib.__name__}.utils._python_dispatch").TorchDispatchMode
    log: list[Any] = []

    class F(tfm):  # type: ignore[misc, valid-type]
        def __torch_function__(self, func: Any, types: Any, args: Any = (), kw: Any = None) -> Any:
            log.append(("TF", func.__name__, type(args[0]).__name__, sorted(kw or {})))
            return func(*args, **(kw or {}))

    class D(tdm):  # type: ignore[misc, valid-type]
        def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kw: Any = None) -> Any:
            shown = sorted((k, str(v).split(".")[-1]) for k, v in (kw or {}).items())
            log.append(("TD", str(func).split("aten.")[-1], shown))
            return func(*args, **(kw or {}))

    arr, t = np.ones(2), lib.ones(2)
    builders = [
        lambda: lib.tensor([1.0, 2.0]),
        lambda: lib.tensor([1, 2], dtype=lib.float64),
        lambda: lib.tensor(3),
        lambda: lib.tensor([1.0], requires_grad=True),
        lambda: lib.tensor(arr),
        lambda: lib.as_tensor([1.0, 2.0]),
        lambda: lib.as_tensor(arr),
        lambda: lib.as_tensor(arr, dtype=lib.float32),
        lambda: lib.as_tensor(t),
        lambda: lib.as_tensor(t, dtype=lib.float64),
        lambda: lib.from_numpy(arr),
    ]
    for build in builders:
        for mode in (F, D):
            log.append("--")
            with mode():
                build()
    return log


@requires_torch
def test_modes_see_the_data_builders_as_pytorchs() -> None:
    ours, theirs = _seen(ember), _seen(torch)
    assert ours == theirs
    assert ("TF", "tensor", "list", ["dtype"]) in ours  # the call, with the kwargs given
    assert ("TD", "lift_fresh.default", []) in ours


@requires_torch
@pytest.mark.filterwarnings("ignore:To copy construct from a tensor")  # PyTorch's advice
def test_tensor_of_a_tensor_dispatches_detach_and_to_copy() -> None:
    seen = []
    for lib in (ember, torch):
        tdm = importlib.import_module(f"{lib.__name__}.utils._python_dispatch").TorchDispatchMode

        class D(tdm):  # type: ignore[misc, valid-type]
            def __torch_dispatch__(
                self, func: Any, types: Any, args: Any = (), kw: Any = None
            ) -> Any:
                seen.append(str(func).split("aten.")[-1])
                return func(*args, **(kw or {}))

        x = lib.ones(2, requires_grad=True)
        with D():
            y = lib.tensor(x.detach())
        assert not y.requires_grad and y.tolist() == [1.0, 1.0]
    assert seen[: len(seen) // 2] == seen[len(seen) // 2 :]
