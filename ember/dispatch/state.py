"""The one thread-local state object: include/exclude key sets, grad mode, mode stacks.

Every change goes through a ``with`` block that restores the old value in ``finally``: one
family of guards (NOTE [dispatch state guards]).

# NOTE [fast path counter]
``ACTIVE[0]`` counts the with-blocks, in any thread, that currently change the include or
exclude set. While it is zero no thread has touched them, so the hot path may skip reading
the thread-local object altogether. It is a global (not thread-local) count, so it can only
err towards taking the slow path, never towards skipping a thread's state.
"""

from __future__ import annotations

import threading
from typing import Any

from ember.dispatch.keys import DispatchKey


class _LocalState(threading.local):
    include: int = 0
    exclude: int = 0
    grad_enabled: bool = True
    inference_mode: bool = False
    #: ``overrides.redispatch_function``: the next torch-function check is skipped, once
    skip_one_hop: bool = False
    #: forward-mode AD sees only tangents of dual levels below this one (NOTE [nested dual
    #: levels] in ember/autograd/forward_ad/_kernel.py); changed only by ``DualCeiling``
    fw_ceiling: int = 1 << 62

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
    return bool((t._ekeys | local.include) & _PYTHON_BIT)


# NOTE [dispatch state guards]
# Every change to this thread's include/exclude sets goes through one guard, ``KeyGuard``
# (and ``GradKeyGuard``, which also sets grad mode, for the backward pass): slotted classes,
# not generator context managers, because several run once per op. Generated code that
# cannot afford an object per call inlines the same steps from one template, ``guard_lines``.
# A guard bumps ``ACTIVE[0]`` for its block (NOTE [fast path counter]).


class KeyGuard:
    """A with-block that adds ``exclude`` to this thread's exclude set after taking
    ``allow`` out of it, and adds ``include`` to its include set; both restored on exit.

    >>> from ember.dispatch.state import KeyGuard, local
    >>> with KeyGuard(exclude=1 << 16):
    ...     bool(local.exclude >> 16 & 1)
    True
    """

    __slots__ = ("_old", "_old_include", "_exclude", "_allow", "_include")

    def __init__(self, exclude: int = 0, allow: int = 0, include: int = 0) -> None:
        self._exclude, self._allow, self._include = exclude, allow, include

    def __enter__(self) -> None:
        loc = local
        old = self._old = loc.exclude
        loc.exclude = (old & ~self._allow) | self._exclude
        if self._include:
            self._old_include = loc.include
            loc.include = self._old_include | self._include
        ACTIVE[0] += 1

    def __exit__(self, *exc: object) -> None:
        loc = local
        loc.exclude = self._old
        if self._include:
            loc.include = self._old_include
        ACTIVE[0] -= 1


class GradKeyGuard:
    """A with-block that sets grad mode to ``grad_enabled`` and adds ``exclude`` to this
    thread's exclude set (the backward pass: formulas run with it); both restored on exit.

    >>> from ember.dispatch.state import GradKeyGuard, local
    >>> with GradKeyGuard(False, 0):
    ...     local.grad_enabled
    False
    """

    __slots__ = ("_old", "_old_grad", "_grad", "_exclude")

    def __init__(self, grad_enabled: bool, exclude: int) -> None:
        self._grad, self._exclude = grad_enabled, exclude

    def __enter__(self) -> None:
        loc = local
        self._old_grad, self._old = loc.grad_enabled, loc.exclude
        loc.grad_enabled = self._grad
        loc.exclude = self._old | self._exclude
        ACTIVE[0] += 1

    def __exit__(self, *exc: object) -> None:
        loc = local
        loc.grad_enabled, loc.exclude = self._old_grad, self._old
        ACTIVE[0] -= 1


class DualCeiling:
    """A with-block that hides the tangents of dual level ``level`` and above from
    forward-mode AD (NOTE [nested dual levels]); restored on exit.

    >>> from ember.dispatch.state import DualCeiling, local
    >>> with DualCeiling(0):
    ...     local.fw_ceiling
    0
    """

    __slots__ = ("_old", "_level")

    def __init__(self, level: int) -> None:
        self._level = level

    def __enter__(self) -> None:
        loc = local
        self._old = loc.fw_ceiling
        loc.fw_ceiling = min(self._old, self._level)

    def __exit__(self, *exc: object) -> None:
        local.fw_ceiling = self._old


def call_excluding(exclude: int, fn: Any, args: tuple[Any, ...], kwargs: Any = None) -> Any:
    """``fn(*args, **kwargs)`` with ``exclude`` added to this thread's exclude set, restored
    after: ``KeyGuard(exclude=...)`` as one call, for the protocol paths that run once per
    op (no guard object, no ``__enter__``/``__exit__`` calls).

    >>> from ember.dispatch.state import call_excluding, local
    >>> call_excluding(1 << 16, lambda: bool(local.exclude >> 16 & 1), ())
    True
    """
    loc = local
    old = loc.exclude
    loc.exclude = old | exclude
    ACTIVE[0] += 1
    try:
        return fn(*args, **kwargs) if kwargs else fn(*args)
    finally:
        loc.exclude = old
        ACTIVE[0] -= 1


def call_popped(stack: list[Any], bit: int, exclude: int, fn: Any, args: tuple[Any, ...]) -> Any:
    """``fn(*args)`` (the top mode's handler) with the top mode of ``stack`` popped, so the
    calls it makes go to the next mode; ``bit``, the stack's key, leaves the include set if
    that was the last mode, and ``exclude`` joins the exclude set. Everything is restored
    after. A pop, a guard and a push in one call, for the handler of every op a mode sees;
    ``ACTIVE[0]`` is left as it is (the pushed mode counts already: NOTE [fast path
    counter]).

    >>> from ember.dispatch.state import call_popped, local
    >>> stack = ["mode"]
    >>> call_popped(stack, 0, 1 << 16, lambda: (len(stack), local.exclude >> 16 & 1), ())
    (0, 1)
    >>> stack
    ['mode']
    """
    loc = local
    mode = stack.pop()
    if not stack:
        loc.include &= ~bit
    old = loc.exclude
    loc.exclude = old | exclude
    try:
        return fn(*args)
    finally:
        loc.exclude = old
        if not stack:
            loc.include |= bit
        stack.append(mode)


def guard_lines(statement: str, exclude: str, indent: str) -> list[str]:
    """``statement`` run with the keys named ``exclude`` added to the exclude set, restored
    after: ``KeyGuard(exclude=...)`` inlined, for generated code (``local`` and ``ACTIVE``
    must be in its scope)."""
    return [
        f"{indent}loc = local",
        f"{indent}old = loc.exclude",
        f"{indent}loc.exclude = old | {exclude}",
        f"{indent}ACTIVE[0] += 1",
        f"{indent}try:",
        f"{indent}    {statement}",
        f"{indent}finally:",
        f"{indent}    loc.exclude = old",
        f"{indent}    ACTIVE[0] -= 1",
    ]


def is_active(bit: int) -> bool:
    """Whether calls in this thread see the key of ``bit`` through the thread-local sets:
    included and not excluded (a layer's kernel excludes its own key while its op runs
    below it).

    >>> from ember.dispatch.state import is_active
    >>> is_active(1 << 18)
    False
    """
    loc = local
    return bool(loc.include & ~loc.exclude & bit)


def _switch(which: str, bit: int, on: bool) -> bool:
    """Set or clear ``bit`` in this thread's ``include`` or ``exclude`` set until changed
    again; returns whether it was set. A thread holding it counts once in ``ACTIVE[0]``."""
    loc = local
    old = getattr(loc, which)
    was = bool(old & bit)
    if on and not was:
        setattr(loc, which, old | bit)
        ACTIVE[0] += 1
    elif was and not on:
        setattr(loc, which, old & ~bit)
        ACTIVE[0] -= 1
    return was


def set_included(bit: int, on: bool) -> bool:
    """Put one key's ``bit`` into this thread's include set (``on``) or take it out, until
    changed again, not for a block: a switch of PyTorch's that persists, as
    ``set_autocast_enabled``; returns whether it was in before. A thread holding it counts
    once in ``ACTIVE[0]`` (NOTE [fast path counter]).

    >>> from ember.dispatch.state import set_included, local
    >>> set_included(1 << 18, True), bool(local.include >> 18 & 1), set_included(1 << 18, False)
    (False, True, True)
    """
    return _switch("include", bit, on)


def set_excluded(bit: int, on: bool) -> bool:
    """Put one key's ``bit`` into this thread's exclude set (``on``) or take it out, until
    changed again (PyTorch's ``_dispatch_tls_set_dispatch_key_excluded``); returns whether it
    was in before.

    >>> from ember.dispatch.state import set_excluded
    >>> set_excluded(1 << 10, True), set_excluded(1 << 10, False)
    (False, True)
    """
    return _switch("exclude", bit, on)


def include_keys(ks: int) -> KeyGuard:
    """Add ``ks`` to this thread's include set for the block (``KeyGuard(include=ks)``)."""
    return KeyGuard(include=ks)


def exclude_keys(ks: int) -> KeyGuard:
    """Remove ``ks`` from every call's key set in this thread for the block."""
    return KeyGuard(exclude=ks)


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


_TF_MODE_BIT = 1 << DispatchKey.TorchFunctionMode


def push_function_mode(mode: Any) -> None:
    """Push ``mode`` on this thread's TorchFunctionMode stack; the first one puts the
    TorchFunctionMode key in the include set (written out: a mode's handler call pops and
    pushes it once per call)."""
    FUNCTION_MODES[0] += 1
    loc = local
    stack = loc.function_modes
    if not stack:
        loc.include |= _TF_MODE_BIT
        ACTIVE[0] += 1
    stack.append(mode)


def pop_function_mode() -> Any:
    """Pop this thread's top TorchFunctionMode; the last one takes its key out of the
    include set."""
    loc = local
    stack = loc.function_modes
    if not stack:
        raise RuntimeError("Trying to pop from an empty TorchFunctionMode stack")
    mode = stack.pop()
    if not stack:
        loc.include &= ~_TF_MODE_BIT
        ACTIVE[0] -= 1
    FUNCTION_MODES[0] -= 1
    return mode


class TorchFunctionGuard(KeyGuard):
    """A ``KeyGuard`` setting which torch-function keys this thread excludes: ``add`` joins
    the ones already excluded, ``keep`` masks them first (``keep=0, add=0``: all enabled)
    (NOTE [torch function state])."""

    __slots__ = ()

    def __init__(self, keep: int, add: int) -> None:  # (no super() call: one per call)
        self._exclude, self._allow, self._include = add, TF_BITS & ~keep, 0


class UserCodeGuard(KeyGuard):
    """A ``KeyGuard`` for user code run inside a backward pass (a custom ``Function``'s
    ``backward``, a checkpoint's recomputation): the Autograd and torch-function keys the
    engine leaves out while formulas run come back, so ``enable_grad()`` records and
    ``__torch_function__`` applies, as in PyTorch."""

    __slots__ = ()

    def __init__(self) -> None:  # (no super() call: one per call)
        self._exclude, self._allow, self._include = 0, _USER_KEYS, 0


_USER_KEYS = TF_BITS | (1 << DispatchKey.Autograd)


# ------------------------------------------------------------ __torch_dispatch__ state


def push_dispatch_mode(mode: Any) -> None:
    """Push ``mode`` on this thread's TorchDispatchMode stack; a non-empty stack puts the
    Python key in the include set (NOTE [python key] in ``ember/_python_key.py``)."""
    loc = local
    stack = loc.dispatch_modes
    if not stack:
        loc.include |= _PYTHON_BIT
        ACTIVE[0] += 1
    stack.append(mode)


def pop_dispatch_mode() -> Any:
    """Pop this thread's top TorchDispatchMode; the last one takes the Python key out of
    the include set."""
    loc = local
    stack = loc.dispatch_modes
    if not stack:
        raise RuntimeError("Trying to pop from an empty TorchDispatchMode stack")
    mode = stack.pop()
    if not stack:
        loc.include &= ~_PYTHON_BIT
        ACTIVE[0] -= 1
    return mode


class ScopedGuard:
    """PyTorch's RAII guards (``torch._C._DisableTorchDispatch()``, ``_EnableTorchFunction``,
    ``_AutoDispatchBelowAutograd``): the exclude set changes when the object is made and is
    restored when it is deleted or when a with-block over it ends, whichever comes first.

    # NOTE [scoped guards]
    C++ guards act in their constructor and undo in their destructor, and PyTorch binds some
    of them to Python as such, so code writes ``guard = _DisableTorchDispatch(); ...;
    del guard`` (``torch.utils._mode_utils.no_dispatch`` does) as well as ``with
    _DisableTorchDispatch(): ...``. A subclass says what it changes with ``keep`` (a mask
    applied to the exclude set first), ``add`` and ``allow``. CPython deletes the guard the
    moment its last name goes, so nesting undoes in reverse order as in C++.
    """

    __slots__ = ("_old", "_live")

    def __init__(self, keep: int = -1, add: int = 0, allow: int = 0) -> None:
        old = self._old = local.exclude
        local.exclude = ((old & keep) | add) & ~allow
        ACTIVE[0] += 1
        self._live = True

    def __enter__(self) -> ScopedGuard:
        return self

    def __exit__(self, *exc: object) -> None:
        self._restore()

    def __del__(self) -> None:
        self._restore()

    def _restore(self) -> None:
        if getattr(self, "_live", False):
            self._live = False
            local.exclude = self._old
            ACTIVE[0] -= 1
