"""The one thread-local state object: include/exclude key sets, grad mode, mode stacks.

Every change goes through a ``with`` block that restores the old value in ``finally``.

# NOTE [fast path counter]
``ACTIVE[0]`` counts the with-blocks, in any thread, that currently change the include or
exclude set. While it is zero no thread has touched them, so the hot path may skip reading
the thread-local object altogether. It is a global (not thread-local) count, so it can only
err towards taking the slow path, never towards skipping a thread's state.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ember.dispatch.keys import DispatchKey, below


class _LocalState(threading.local):
    include: int = 0
    exclude: int = 0
    grad_enabled: bool = True
    inference_mode: bool = False

    def __init__(self) -> None:
        self.function_modes: list[Any] = []  # TorchFunctionMode stack
        self.dispatch_modes: list[Any] = []  # TorchDispatchMode stack


local = _LocalState()
_PYTHON_BIT = 1 << DispatchKey.Python
ACTIVE = [0]  # see NOTE [fast path counter]


def effective_keys(ks: int, op: object = None) -> int:
    """The key set a call runs with: its arguments' keys ``ks`` plus this thread's include
    set, minus its exclude set (the one place that computes it); ``op`` names the call in
    the error when nothing is left.

    >>> from ember.dispatch.state import effective_keys
    >>> effective_keys(1)
    1
    """
    ks = (ks | local.include) & ~local.exclude
    if not ks:
        raise RuntimeError(f"{op}: every key of the call is excluded; nothing can run it")
    return ks


def python_key_sees(t: Any) -> bool:
    """Whether a ``__torch_dispatch__`` handler (a wrapper subclass or a mode) sees calls on
    tensor ``t`` in this thread: the question a decomposition asks instead of reading keys.

    >>> from ember.dispatch.state import python_key_sees
    >>> python_key_sees(ember.ones(2))
    False
    """
    return bool((t._keys | local.include) & _PYTHON_BIT)


def include_set() -> int:
    return local.include


def exclude_set() -> int:
    return local.exclude


@contextmanager
def include_keys(ks: int) -> Iterator[None]:
    """Add ``ks`` to this thread's include set for the block."""
    old = local.include
    local.include = old | ks
    ACTIVE[0] += 1
    try:
        yield
    finally:
        local.include = old
        ACTIVE[0] -= 1


@contextmanager
def exclude_keys(ks: int) -> Iterator[None]:
    """Remove ``ks`` from every call's key set in this thread for the block."""
    old = local.exclude
    local.exclude = old | ks
    ACTIVE[0] += 1
    try:
        yield
    finally:
        local.exclude = old
        ACTIVE[0] -= 1


@contextmanager
def set_keys(include: int, exclude: int) -> Iterator[None]:
    """Replace both sets for the block (used to snapshot and restore state)."""
    old = local.include, local.exclude
    local.include, local.exclude = include, exclude
    ACTIVE[0] += 1
    try:
        yield
    finally:
        local.include, local.exclude = old
        ACTIVE[0] -= 1


def dispatch_below(key: DispatchKey) -> Any:
    """Exclude ``key`` and everything above it: ops in the block start below ``key``."""
    return exclude_keys(~below(key) & ((1 << 32) - 1))


# ------------------------------------------------------------ __torch_function__ state
# NOTE [torch function state]
# PyTorch keeps three states: enabled, subclasses disabled, all disabled. ember keeps them as
# the two torch-function keys in this thread's exclude set (TorchFunction excluded: subclass
# handlers off; both excluded: modes off too), and the mode stack's being non-empty as the
# TorchFunctionMode key in its include set, so the generated dispatch functions test all of
# it with the key-set arithmetic they already do.

TF_BITS = (1 << DispatchKey.TorchFunction) | (1 << DispatchKey.TorchFunctionMode)


#: TorchFunctionModes pushed, in any thread: while 0, Tensor members written in Python skip
#: the protocol's check for plain tensors (a global count, so it errs towards checking)
FUNCTION_MODES = [0]


def _push_mode(stack: list[Any], key: DispatchKey, mode: Any) -> None:
    """Push ``mode``; the first one puts ``key`` in this thread's include set."""
    if not stack:
        local.include |= 1 << key
        ACTIVE[0] += 1
    stack.append(mode)


def _pop_mode(stack: list[Any], key: DispatchKey, what: str) -> Any:
    """Pop the top mode; the last one takes ``key`` out of this thread's include set."""
    if not stack:
        raise RuntimeError(f"Trying to pop from an empty {what} stack")
    mode = stack.pop()
    if not stack:
        local.include &= ~(1 << key)
        ACTIVE[0] -= 1
    return mode


def push_function_mode(mode: Any) -> None:
    """Push ``mode`` on this thread's TorchFunctionMode stack (the include bit goes with it)."""
    FUNCTION_MODES[0] += 1
    _push_mode(local.function_modes, DispatchKey.TorchFunctionMode, mode)


def pop_function_mode() -> Any:
    """Pop this thread's top TorchFunctionMode."""
    mode = _pop_mode(local.function_modes, DispatchKey.TorchFunctionMode, "TorchFunctionMode")
    FUNCTION_MODES[0] -= 1
    return mode


class TorchFunctionGuard:
    """A with-block setting which torch-function keys this thread excludes: ``add`` joins
    the ones already excluded, ``keep`` masks them first (``keep=0, add=0``: all enabled).
    A class, not a generator, because the default ``__torch_function__`` enters one per
    call (NOTE [torch function state])."""

    __slots__ = ("_old", "_keep", "_add")

    def __init__(self, keep: int, add: int) -> None:
        self._keep = keep | ~TF_BITS
        self._add = add

    def __enter__(self) -> None:
        old = self._old = local.exclude
        local.exclude = (old & self._keep) | self._add
        ACTIVE[0] += 1

    def __exit__(self, *exc: object) -> None:
        local.exclude = self._old
        ACTIVE[0] -= 1


# ------------------------------------------------------------ __torch_dispatch__ state


def push_dispatch_mode(mode: Any) -> None:
    """Push ``mode`` on this thread's TorchDispatchMode stack; a non-empty stack puts the
    Python key in the include set (NOTE [python key] in ``ember/_python_key.py``)."""
    _push_mode(local.dispatch_modes, DispatchKey.Python, mode)


def pop_dispatch_mode() -> Any:
    """Pop this thread's top TorchDispatchMode."""
    return _pop_mode(local.dispatch_modes, DispatchKey.Python, "TorchDispatchMode")


class KeyGuard:
    """A with-block that adds ``exclude`` to, and removes ``allow`` from, this thread's
    exclude set (``_DisableTorchDispatch``, ``enable_reentrant_dispatch``)."""

    __slots__ = ("_old", "_exclude", "_allow")

    def __init__(self, exclude: int = 0, allow: int = 0) -> None:
        self._exclude, self._allow = exclude, allow

    def __enter__(self) -> None:
        old = self._old = local.exclude
        local.exclude = (old | self._exclude) & ~self._allow
        ACTIVE[0] += 1

    def __exit__(self, *exc: object) -> None:
        local.exclude = self._old
        ACTIVE[0] -= 1
