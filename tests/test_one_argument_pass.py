"""NOTE [one argument pass] (ember/overrides/__init__.py): a default handler's call back
into the function being handled skips the second binding. These check that what a handler
sees and what it gets back are PyTorch's whatever the handler does with its arguments
before it calls ``super().__torch_function__``."""

from __future__ import annotations

import sys
import threading
from typing import Any

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


def _subclass(lib: Any, change: Any) -> type:
    """A subclass whose handler lets ``change(func, args, kwargs)`` pick what it passes on."""

    class Sub(lib.Tensor):
        seen: list[Any] = []

        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):  # noqa: ANN001, ANN206
            kwargs = {} if kwargs is None else kwargs
            if not cls.seen:  # the call under test only (not detach, numpy, ... after)
                args, kwargs = change(lib, args, kwargs)
            cls.seen.append(getattr(func, "__name__", str(func)))
            return super().__torch_function__(func, types, args, kwargs)

    return Sub


def _run(lib: Any, change: Any, call: Any) -> tuple[Any, type, list[Any]]:
    sub = _subclass(lib, change)
    a = lib.tensor([1.0, 2.0, 3.0]).as_subclass(sub)
    b = lib.tensor([4.0, 5.0, 6.0]).as_subclass(sub)
    out = call(lib, a, b)
    seen = list(sub.seen)
    return out, type(out), seen


def _same(lib: Any, args: Any, kwargs: Any) -> Any:
    return args, kwargs


def _new_tuple(lib: Any, args: Any, kwargs: Any) -> Any:
    return (args[1], args[0], *args[2:]), kwargs  # a new tuple: no shortcut, swapped


def _add_keyword(lib: Any, args: Any, kwargs: Any) -> Any:
    kwargs["alpha"] = 2  # the same call with a keyword the original did not have
    return args, kwargs


def _mutate_keyword(lib: Any, args: Any, kwargs: Any) -> Any:
    if "alpha" in kwargs:
        kwargs["alpha"] = 3  # the same dict object, changed in place
    return args, kwargs


CALLS = {
    "function": lambda lib, a, b: lib.add(a, b),
    "method": lambda lib, a, b: a.add(b),
    "operator": lambda lib, a, b: a + b,
    "reflected": lambda lib, a, b: 2 - a,
    "keyword": lambda lib, a, b: lib.add(a, b, alpha=5),
    "varargs": lambda lib, a, b: a.view(3, 1),
}
CHANGES = {
    "same": _same,
    "new tuple": _new_tuple,
    "add keyword": _add_keyword,
    "mutate keyword": _mutate_keyword,
}


@pytest.mark.parametrize("change", CHANGES)
@pytest.mark.parametrize("call", CALLS)
def test_handler_changes_match_torch(call: str, change: str) -> None:
    if change == "new tuple" and call in ("reflected", "varargs"):
        pytest.skip("swapping the arguments of a one-tensor call is not a valid call")
    if change == "add keyword" and call in ("reflected", "varargs"):
        pytest.skip("the op takes no alpha")
    e, et, eseen = _run(ember, CHANGES[change], CALLS[call])
    t, tt, tseen = _run(torch, CHANGES[change], CALLS[call])
    np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy())
    assert et.__name__ == tt.__name__ == "Sub"
    assert eseen == tseen


def test_mode_still_sees_the_default_handlers_call() -> None:
    """A mode pushed under the subclass's handler sees the call the default handler makes
    (the noted overload runs through the dispatch function, which asks the mode)."""

    def run(lib: Any) -> list[str]:
        overrides = __import__(f"{lib.__name__}.overrides", fromlist=["TorchFunctionMode"])
        log: list[str] = []

        class Log(overrides.TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):  # noqa: ANN001, ANN204
                log.append(f"mode {func.__name__} {[t.__name__ for t in types]}")
                return func(*args, **(kwargs or {}))

        class Sub(lib.Tensor):
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):  # noqa: ANN001, ANN206
                log.append(f"sub {func.__name__}")
                with Log():
                    return super().__torch_function__(func, types, args, kwargs)

        a = lib.tensor([1.0, 2.0]).as_subclass(Sub)
        out = lib.add(a, a)
        log.append(type(out).__name__)
        return log

    assert run(ember) == run(torch)


def test_threads_do_not_share_a_call() -> None:
    """Two threads handling calls at once each get their own op's result."""
    errors: list[BaseException] = []

    class Sub(ember.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):  # noqa: ANN001, ANN206
            return super().__torch_function__(func, types, args, kwargs)

    def work(op: Any, want: float) -> None:
        a = ember.tensor([3.0]).as_subclass(Sub)
        b = ember.tensor([2.0]).as_subclass(Sub)
        try:
            for _ in range(300):
                got = op(a, b).item()
                assert got == want, (op, got, want)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible: interleave the calls
    threads = [
        threading.Thread(target=work, args=(ember.add, 5.0)),
        threading.Thread(target=work, args=(ember.sub, 1.0)),
        threading.Thread(target=work, args=(ember.mul, 6.0)),
    ]
    for th in threads:
        th.start()
    try:
        for th in threads:
            th.join()
    finally:
        sys.setswitchinterval(interval)
    assert not errors, errors[0]
