"""Changes a compiled function's code makes to Python state outside it, found in its
bytecode and in the bytecode of the Python functions it calls while traced (NOTE [compile
side effects] in ``ember/_graph_break.py``).

# NOTE [called code]
``ember.compile`` traces a function once per signature, so a Python effect in any code the
trace runs (``global n; n += 1``, ``log.append(x)``, ``print``) would happen at trace time
only. The function's own code is read when it is compiled (``outer_writes``). The code it
calls is watched while it is traced: ``CalledCode`` installs a trace hook
(``sys.settrace``, chained to one already there, such as a debugger's or coverage's)
that notes each Python code object called, except those of ember, its dependencies and
the standard library, and reads it as the function's own code is read, before its body
runs: a write raises ``GraphBreak`` there, so it never happens at trace time. A closure
variable whose cell belongs to a function running inside the trace (a nested
helper's ``nonlocal``) is the trace's own state, not outer state. The globals the called
code names are also added to the compiled function's guards (NOTE [lifted tensors]), so a
helper's global rebound later (``SCALE = 3.0``) compiles again. Not seen: a called
function changing an object it was *given* (``def bump(state): state.n += 1`` called
with a global ``state``), and the closure variables of called functions are not guarded.
"""

from __future__ import annotations

import dis
import sys
from collections.abc import Iterator
from functools import lru_cache
from types import CodeType, FrameType
from typing import Any

from ember._graph_break import side_effect

__all__ = ["CalledCode", "code_writes", "outer_writes"]

#: methods that change the object they are called on (lists, dicts, sets, deques, files)
_MUTATORS = frozenset(
    "append extend insert pop popitem remove clear update setdefault add discard "
    "appendleft popleft extendleft write writelines put".split()
)
_LOADS = frozenset("LOAD_CONST LOAD_FAST LOAD_GLOBAL LOAD_DEREF LOAD_NAME LOAD_SMALL_INT".split())
#: top-level packages whose code is not the user's (ember itself, what it runs on, the
#: test runner): their functions are not read for writes nor guarded
_LIBRARIES = frozenset(sys.stdlib_module_names) | frozenset(
    "ember numpy scipy numba llvmlite networkx torch hypothesis pytest _pytest pluggy "
    "typing_extensions".split()
)


@lru_cache(maxsize=4096)
def code_writes(code: CodeType, trace_cells: frozenset[str] = frozenset()) -> str | None:
    """The first change ``code`` makes to state outside it, as a reason (None if none is
    seen); ``trace_cells`` are closure variables that are not outside state (their cells
    belong to a call made during the trace).

    >>> from ember._outer_state import code_writes
    >>> calls = []
    >>> def helper(x):
    ...     calls.append(x)
    ...     return x
    >>> print(code_writes(helper.__code__))
    the function helper calls calls.append (state outside it)
    """
    who = "the function" if code.co_name == "<lambda>" else f"the function {code.co_qualname}"
    outer = set(code.co_freevars) - trace_cells
    ins = [i for i in dis.get_instructions(code) if i.opname not in ("CACHE", "PRECALL")]
    for k, i in enumerate(ins):
        op, name = i.opname, i.argval
        if op in ("STORE_GLOBAL", "DELETE_GLOBAL"):
            return f"{who} assigns the global {name!r}"
        if op in ("STORE_DEREF", "DELETE_DEREF") and name in outer:
            return f"{who} assigns the closure variable {name!r}"
        if not (op == "LOAD_GLOBAL" or (op == "LOAD_DEREF" and name in outer)):
            continue
        if name == "print" and op == "LOAD_GLOBAL":
            return f"{who} calls print (it would print at trace time only)"
        nxt = ins[k + 1] if k + 1 < len(ins) else None
        if nxt is None:
            continue
        if nxt.opname in ("LOAD_METHOD", "LOAD_ATTR") and nxt.argval in _MUTATORS:
            return f"{who} calls {name}.{nxt.argval} (state outside it)"
        if nxt.opname in ("STORE_ATTR", "DELETE_ATTR"):
            return f"{who} sets {name}.{nxt.argval} (state outside it)"
        after = ins[k + 2] if k + 2 < len(ins) else None
        if (
            nxt.opname in _LOADS
            and after is not None
            and after.opname in ("STORE_SUBSCR", "DELETE_SUBSCR")
        ):
            return f"{who} writes an item of {name} (state outside it)"
    return None


def outer_writes(fn: Any) -> str | None:
    """The first change ``fn``'s own code makes to state outside it, as a reason; None if
    its code makes none it can see. A graph cannot hold such a change: it would happen
    at trace time only (NOTE [compile side effects]).

    Seen in ``fn``'s bytecode: assigning or deleting a global or a closure variable
    (``global n; n += 1``, ``nonlocal``); calling a mutating method of one
    (``log.append(x)``, ``cache.update(...)``); setting an attribute or an item of one
    (``state.step = 1``, ``cache[k] = v``); calling ``print``. The functions ``fn`` calls
    are read while it is traced (``CalledCode``).

    >>> from ember._outer_state import outer_writes
    >>> log = []
    >>> print(outer_writes(lambda x: log.append(x)))
    the function calls log.append (state outside it)
    """
    code = getattr(fn, "__code__", None)
    return None if code is None else code_writes(code)


class CalledCode:
    """The user's Python code called while a trace runs (NOTE [called code]): inside
    ``with CalledCode() as called:``, each call of a function that is not ember's, its
    dependencies' or the standard library's is noted in ``called.seen``, and a write it
    would make to outer state (``code_writes``) raises ``GraphBreak`` under a trace."""

    def __init__(self) -> None:
        #: each code called: (its globals, the closure variables the trace owns)
        self.seen: dict[CodeType, tuple[dict[str, Any], frozenset[str]]] = {}
        self._old: Any = None
        self._root: FrameType | None = None
        self._hook = self._call

    def __enter__(self) -> CalledCode:
        self._old = sys.gettrace()
        self._root = sys._getframe(1)
        sys.settrace(self._hook)
        return self

    def __exit__(self, *exc: object) -> None:
        sys.settrace(self._old)
        self._root = None

    def unwatched(self, func: Any, args: Any, kwargs: dict[str, Any]) -> Any:
        """``func(*args, **kwargs)`` with the watch paused: a public ember function the
        user's code calls runs ember's code below it (a hook slows every Python call
        down; the one already there before the watch, a debugger's, stays)."""
        sys.settrace(self._old)
        try:
            return func(*args, **kwargs)
        finally:
            sys.settrace(self._hook)

    def _call(self, frame: FrameType, event: str, arg: Any) -> Any:
        code = frame.f_code
        if event == "call" and code not in self.seen:
            g = frame.f_globals
            if str(g.get("__name__", "")).partition(".")[0] not in _LIBRARIES:
                cells = self._trace_cells(frame)
                self.seen[code] = (g, cells)
                write = code_writes(code, cells)
                if write is not None:  # before its body runs: the effect never happens
                    side_effect(write)
        old = self._old
        return None if old is None else old(frame, event, arg)

    def _trace_cells(self, frame: FrameType) -> frozenset[str]:
        """Those of ``frame``'s closure variables whose cells a function running inside
        the trace owns."""
        free = frame.f_code.co_freevars
        if not free:
            return frozenset()
        owned: set[str] = set()
        f = frame.f_back
        while f is not None and f is not self._root:
            owned.update(f.f_code.co_cellvars)
            f = f.f_back
        return frozenset(n for n in free if n in owned) if f is not None else frozenset()

    def first_write(self) -> str | None:
        """The first change to outer state a called code makes (``code_writes``)."""
        return next(
            (w for c, (_, cells) in self.seen.items() if (w := code_writes(c, cells))), None
        )

    def globals_named(self) -> Iterator[tuple[str, dict[str, Any]]]:
        """Each global a called code names, with the dict that holds it."""
        for code, (g, _) in self.seen.items():
            for name in code.co_names:
                if name in g:
                    yield name, g
