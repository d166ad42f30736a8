"""``python -m ember``: a short tour that runs a few ops and shows where each was dispatched.

It uses only public extension points: a boxed fallback registered with
``ember.library.Library`` on the ``BackendSelect`` key, which the tour adds to this thread's
include set, so every op that reaches a backend passes through the logger first. The logger
prints the op and the key set, then redispatches to the keys below its own.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import ember
from ember.dispatch.keys import DispatchKey, below, format_keyset, highest, keyset
from ember.dispatch.state import include_keys
from ember.library import Library
from ember.ops.registry import OpOverload

LOG_KEY = DispatchKey.BackendSelect
_BELOW = below(LOG_KEY)


def _describe(x: Any) -> str:
    """``float32[2, 2]`` for a tensor (metadata only: running ops here would log them too)."""
    if isinstance(x, ember.Tensor):
        return f"{x.dtype.name}{list(x.shape)}" + ("@meta" if x.is_meta else "")
    if isinstance(x, (list, tuple)) and any(isinstance(v, ember.Tensor) for v in x):
        return "(" + ", ".join(_describe(v) for v in x) + ")"
    return repr(x)


def log_fallback(op: OpOverload, ks: int, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """Print the op, its inputs and the keys below the logger, then run the op there."""
    rest = ks & _BELOW
    out = op.redispatch(rest, *args, **kwargs)
    inputs = ", ".join(_describe(a) for a in args)
    print(
        f"    {op.name():<26} {highest(rest).name:<5} {format_keyset(rest):<22} "
        f"({inputs}) -> {_describe(out)}"
    )
    return out


@contextmanager
def logging_dispatch() -> Iterator[None]:
    """Log every op that reaches a backend, for the duration of the block."""
    lib = Library("aten", "IMPL")
    try:
        lib.fallback(log_fallback, LOG_KEY)
        with include_keys(keyset(LOG_KEY)):
            yield
    finally:
        lib._destroy()


def step(code: str, fn: Callable[[], Any]) -> Any:
    """Print ``code``, run it with dispatch logging on, then print its result."""
    print(f">>> {code}")
    with logging_dispatch():
        out = fn()
    if out is not None:
        print(textwrap.indent(repr(out), "    "))
    return out


def main() -> None:
    print(f"ember {ember.__version__}: PyTorch's API and dispatcher on NumPy.")
    print("Each op is logged as it reaches a backend: the op, the key whose kernel ran, the")
    print("call's key set below the logger, and its inputs -> output.\n")

    a = ember.tensor([[1.0, 2.0], [3.0, 4.0]])
    i = ember.tensor([10, 20], dtype=ember.int32)
    print(">>> a = ember.tensor([[1.0, 2.0], [3.0, 4.0]])")
    print(">>> i = ember.tensor([10, 20], dtype=ember.int32)")
    step("a + i            # float32 with int32 broadcasts to float32", lambda: a + i)
    step("i * 2            # a Python int keeps int32", lambda: i * 2)
    step("i / 4            # true division promotes int to the default float", lambda: i / 4)
    v = step("v = a.view(4)    # a view: same storage, no copy", lambda: a.view(4))
    step("v.add_(100)      # writing through the view...", lambda: v.add_(100))
    print(f"    a is now {a.tolist()} (a._version == {a._version})")
    step("a.sum()", lambda: a.sum())
    step("a @ a            # matmul decomposes; its parts are what backends see", lambda: a @ a)
    m = step(
        "m = ember.empty(1000, 1000, device='meta')", lambda: ember.empty(1000, 1000, device="meta")
    )
    step("(m @ m).exp()    # meta tensors: shapes and dtypes only, no data", lambda: (m @ m).exp())
    print("\nNext: docs/index.md (the guide) and docs/adding-ops.md (adding an op).")


if __name__ == "__main__":
    main()
