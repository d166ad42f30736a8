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
helper's global rebound later (``SCALE = 3.0``) compiles again.

What a function does to its *parameters* (``def bump(state): state.n += 1``) depends on
what it is given, so it is checked at each call, when the hook sees the arguments
(NOTE [writes in bytecode] in ``ember/_code_writes.py`` finds such writes). Tensors are
never outer state here (their in-place ops are the graph's). An object given by ember's
or a library's code (the compiled function's own arguments, a module's ``self``, a hook's
module) is the user's: a write to it breaks the graph. An object one user function hands
another is the user's if it can be reached from what the trace did not make: the
globals and closure variables the called code names (functions' defaults and closures,
user classes' and modules' attributes, containers' items, objects' attributes, four
steps deep) and the objects ember's code handed over. Anything else was made during the
trace (``acc = []; collect(acc, x)``) and is the trace's own. Where that search runs out
of budget the object counts as the user's: a graph break costs speed, a missed write a
wrong answer.

The closure variables of a called function that the trace does not own are guarded as
its globals are: a helper made by a factory (``def make(): scale = 2.0; def helper(t):
return t * scale``) compiles again when another function rebinds ``scale``. A frame does
not name the function it runs, so its cells are found by looking through what the
caller names (``helper``, ``self.helper``), else through the functions that have its
code; each closure a code is called with is kept (two helpers from one factory are two).
"""

from __future__ import annotations

import gc
import sys
from collections import deque
from collections.abc import Iterable, Iterator, Mapping
from types import CodeType, FrameType, FunctionType, MethodType, ModuleType
from typing import Any

from ember._code_writes import Write, writes
from ember._graph_break import side_effect
from ember._tensor import Tensor

__all__ = ["CalledCode", "code_writes", "outer_writes"]

#: top-level packages whose code is not the user's (ember itself, what it runs on, the
#: test runner): their functions are not read for writes nor guarded
_LIBRARIES = frozenset(sys.stdlib_module_names) | frozenset(
    "ember numpy scipy numba llvmlite networkx torch hypothesis pytest _pytest pluggy "
    "typing_extensions".split()
)
#: values no write can change, and values whose changes are the graph's (tensors)
_ATOMS = (Tensor, int, float, complex, str, bytes, bool, type(None), range, slice)
#: how many objects the search for the user's objects visits, and how deep
_BUDGET, _DEPTH = 20_000, 4
_MISSING = object()


def _library(module_name: object) -> bool:
    return str(module_name).partition(".")[0] in _LIBRARIES


def _library_code(frame: FrameType) -> bool:
    """Whether ``frame`` runs code of ember's, a dependency's or the standard library's,
    or code ember or the standard library generated (``ember/dispatch/codegen.py``: its
    namespaces have no ``__name__``, its files are named ``<generated ...>``;
    ``collections.namedtuple``'s)."""
    name = str(frame.f_globals.get("__name__", ""))
    return (
        _library(name)
        or name.startswith("namedtuple_")  # a namedtuple's ``__new__``
        or frame.f_code.co_filename.startswith("<generated ")
    )


def _who(code: CodeType) -> str:
    return "the function" if code.co_name == "<lambda>" else f"the function {code.co_qualname}"


def _counts(w: Write, value: Any) -> bool:
    """Whether ``w``, a write to a global or closure variable holding ``value``, changes
    state: not a call through a library module (``np.append``, ``ember.add``), nor a call
    of a user module's function (the hook reads that function itself)."""
    if isinstance(value, ModuleType):
        return not _library(value.__name__) and not (
            w.root.steps == 0 and w.what.startswith("calls")
        )
    return True


def code_writes(
    code: CodeType,
    trace_cells: frozenset[str] = frozenset(),
    namespace: Mapping[str, Any] | None = None,
) -> str | None:
    """The first change ``code`` makes to a global or closure variable (or what they
    hold), as a reason; None if none is seen. ``trace_cells`` are closure variables that
    are not outside state (their cells belong to a call made during the trace);
    ``namespace`` maps names to values (the code's globals and closure), so calls through
    library modules (``np.append``) are not taken for writes.

    >>> from ember._outer_state import code_writes
    >>> calls = []
    >>> def helper(x):
    ...     calls.append(x)
    ...     return x
    >>> print(code_writes(helper.__code__))
    the function helper calls calls.append (state outside it)
    """
    for w in writes(code):
        kind, name = w.root.kind, w.root.name
        if kind == "param" or (kind == "cell" and name in trace_cells):
            continue
        if name == "print" and kind == "global" and w.what != "calls print":
            continue
        value = _MISSING if namespace is None else namespace.get(name, _MISSING)
        if w.what == "calls print":
            if value is _MISSING or value is print:
                return f"{_who(code)} calls print (it would print at trace time only)"
            continue
        if value is _MISSING or _counts(w, value):
            return f"{_who(code)} {w.what} (state outside it)"
    return None


def _namespace(fn: Any) -> dict[str, Any]:
    """``fn``'s globals and closure variables, by name."""
    names = dict(getattr(fn, "__globals__", {}))
    cells = getattr(fn, "__closure__", None) or ()
    for name, cell in zip(fn.__code__.co_freevars, cells, strict=False):
        try:
            names[name] = cell.cell_contents
        except ValueError:  # an empty cell
            pass
    return names


def outer_writes(fn: Any) -> str | None:
    """The first change ``fn``'s own code makes to state outside it, as a reason; None if
    its code makes none it can see. A graph cannot hold such a change: it would happen
    at trace time only (NOTE [compile side effects]).

    Seen in ``fn``'s bytecode (NOTE [writes in bytecode]): assigning or deleting a global
    or a closure variable (``global n; n += 1``, ``nonlocal``); calling a mutating method
    of one or of what it holds (``log.append(x)``, ``state.cache.update(...)``); setting
    an attribute or an item of one (``state.step += 1``, ``cache[k] = v``); calling
    ``print``. Writes to its arguments, and the functions ``fn`` calls, are read while it
    is traced (``CalledCode``).

    >>> from ember._outer_state import outer_writes
    >>> log = []
    >>> print(outer_writes(lambda x: log.append(x)))
    the function calls log.append (state outside it)
    """
    code = getattr(fn, "__code__", None)
    return None if code is None else code_writes(code, namespace=_namespace(fn))


class CalledCode:
    """The user's Python code called while a trace runs (NOTE [called code]): inside
    ``with CalledCode() as called:``, each call of a function that is not ember's, its
    dependencies' or the standard library's is noted in ``called.seen``, and a write it
    would make to outer state (``code_writes``, and writes to objects it is given that
    are the user's) raises ``GraphBreak`` under a trace."""

    def __init__(self) -> None:
        #: each code called: (its globals, the closure variables the trace owns)
        self.seen: dict[CodeType, tuple[dict[str, Any], frozenset[str]]] = {}
        #: each code called, with its writes to its parameters (None: a library's code)
        self._codes: dict[CodeType, tuple[Write, ...] | None] = {}
        #: the closure variables of each code called that the trace does not own, and
        #: the closures (cells) it was seen to run with: guarded as globals are
        self._free: dict[CodeType, tuple[str, ...]] = {}
        self.closures: dict[CodeType, list[tuple[Any, ...]]] = {}
        #: what the trace did not make: objects handed over by library code, and the
        #: values of the globals and closure variables the user's code names
        self._roots: dict[int, Any] = {}  # by id: a value handed over again adds nothing
        self._reached: tuple[int, set[int], bool] | None = None
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
        self._roots = {}
        self._reached = None

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
        if event == "call":
            code = frame.f_code
            params = self._codes[code] if code in self._codes else self._first_call(frame)
            if code in self._free:
                self._note_closure(frame)
            if params is not None:
                caller = frame.f_back
                given = caller is None or _library_code(caller)
                if params:
                    self._check_params(frame, params, given)
                if given:  # what ember's code hands over is the user's
                    self._add_roots(frame.f_locals.values())
        old = self._old
        return None if old is None else old(frame, event, arg)

    def _first_call(self, frame: FrameType) -> tuple[Write, ...] | None:
        code, g = frame.f_code, frame.f_globals
        if _library_code(frame):
            self._codes[code] = None
            return None
        cells = self._trace_cells(frame)
        self.seen[code] = (g, cells)
        local = frame.f_locals
        names = {n: local[n] for n in code.co_freevars if n in local and n not in cells}
        # ``__class__``: the cell ``super()`` reads, which nothing rebinds
        free = tuple(n for n in code.co_freevars if n not in cells and n != "__class__")
        if free:
            self._free[code] = free
        self._add_roots(names.values())
        self._add_roots(g[n] for n in code.co_names if n in g)
        params = tuple(w for w in writes(code) if w.root.kind == "param")
        self._codes[code] = params
        write = code_writes(code, cells, _Chain(names, g))
        if write is not None:  # before its body runs: the effect never happens
            side_effect(write)
        return params

    def _note_closure(self, frame: FrameType) -> None:
        """Keep the cells of the closure ``frame``'s function runs with (those the trace
        does not own), unless kept already: a helper's closure variable rebound later
        (``nonlocal scale; scale = 3.0`` run by another function) compiles again."""
        code = frame.f_code
        local = frame.f_locals
        values = [local.get(n, _MISSING) for n in code.co_freevars]
        known = self.closures.setdefault(code, [])
        if any(_holds(closure, values) for closure in known):
            return
        fn = _function_of(frame, values)
        if fn is not None:
            known.append(fn.__closure__)

    def _check_params(self, frame: FrameType, params: tuple[Write, ...], given: bool) -> None:
        """Raise ``GraphBreak`` if the function ``frame`` runs writes to an object it was
        given that is the user's (NOTE [called code]): any, if ``given`` (its caller is
        ember's or a library's code)."""
        code = frame.f_code
        local = frame.f_locals
        nvar = code.co_argcount + code.co_kwonlyargcount
        varargs = code.co_varnames[
            nvar : nvar + bool(code.co_flags & 0x04) + bool(code.co_flags & 0x08)
        ]
        for w in params:
            value = local.get(w.root.name, _MISSING)
            if value is _MISSING:
                continue
            if w.root.name in varargs:  # a fresh tuple or dict: only what it holds counts
                if w.root.steps == 0:
                    continue
                values = list(value.values() if isinstance(value, dict) else value)
            else:
                values = [value]
            for v in values:
                if isinstance(v, _ATOMS):
                    continue
                if given or self._users(v):
                    side_effect(
                        f"{_who(code)} {w.what}, an object it was given "
                        f"({type(v).__name__}; state outside it)"
                    )

    def _add_roots(self, values: Iterable[Any]) -> None:
        roots = self._roots
        for v in values:
            if not isinstance(v, _ATOMS):
                roots.setdefault(id(v), v)

    def _users(self, value: Any) -> bool:
        """Whether ``value`` is reachable from what the trace did not make (or the
        search ran out of budget before it was found)."""
        found = self._reached
        if found is None or found[0] != len(self._roots):
            found = self._reached = (len(self._roots), *_reachable(list(self._roots.values())))
        _, ids, complete = found
        return id(value) in ids or not complete

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
            (w for c, (g, cells) in self.seen.items() if (w := code_writes(c, cells, g))), None
        )

    def names(self) -> Iterator[tuple[str, Any, Any]]:
        """Each global a called code names and each closure variable of a called
        function that the trace does not own, as ``(name, holder, key)``: the dict that
        holds the global and its key, or the cell and None."""
        for code, (g, _) in self.seen.items():
            for name in code.co_names:
                if name in g:
                    yield name, g, name
        for code, closures in self.closures.items():
            outer = self._free[code]
            for closure in closures:
                for name, cell in zip(code.co_freevars, closure, strict=True):
                    if name in outer:
                        yield name, cell, None


class _Chain(Mapping[str, Any]):
    """Closure variables, then globals: the names a code reads (``collections.ChainMap``
    without its copying)."""

    __slots__ = ("first", "then")

    def __init__(self, first: Mapping[str, Any], then: Mapping[str, Any]) -> None:
        self.first, self.then = first, then

    def __getitem__(self, name: str) -> Any:
        return self.first[name] if name in self.first else self.then[name]

    def __iter__(self) -> Iterator[str]:
        return iter({**self.then, **self.first})

    def __len__(self) -> int:
        return len({**self.then, **self.first})


def _attr(obj: Any, name: str, default: Any) -> Any:
    """``getattr(obj, name, default)``, also when the object's ``__getattr__`` raises
    other than AttributeError (the search runs over the user's objects)."""
    try:
        return getattr(obj, name, default)
    except Exception:  # noqa: BLE001
        return default


def _holds(closure: tuple[Any, ...], values: list[Any]) -> bool:
    """Whether the cells of ``closure`` hold ``values`` (``_MISSING``: an empty cell)."""
    for cell, v in zip(closure, values, strict=True):
        try:
            if cell.cell_contents is not v:
                return False
        except ValueError:  # an empty cell
            if v is not _MISSING:
                return False
    return True


def _function_of(frame: FrameType, values: list[Any]) -> FunctionType | None:
    """The function ``frame`` runs, whose closure holds ``values``: looked for among
    what its caller names (``helper(x)``, ``self.helper(x)``), else among the functions
    that have its code (``gc.get_referrers``, a walk over every object: ~15 ms, once
    per closure and trace)."""
    code = frame.f_code

    def fits(f: Any) -> bool:
        f = _attr(f, "__func__", f)
        return (
            isinstance(f, FunctionType)
            and f.__code__ is code
            and f.__closure__ is not None
            and _holds(f.__closure__, values)
        )

    caller = frame.f_back
    if caller is not None:
        near = list(caller.f_locals.values())
        near += [caller.f_globals[n] for n in caller.f_code.co_names if n in caller.f_globals]
        for obj in list(near):
            d = _attr(obj, "__dict__", None)
            if isinstance(d, dict) and not isinstance(obj, ModuleType):
                near.extend(d.values())
        for obj in near:
            if fits(obj):
                return _attr(obj, "__func__", obj)
    return next((f for f in gc.get_referrers(code) if fits(f)), None)


def _children(obj: Any) -> Iterator[Any]:
    """What ``obj`` holds that a write could reach: items, attributes, a function's
    defaults and closure, a user module's or class's names."""
    if isinstance(obj, (list, tuple, set, frozenset, deque)):
        yield from obj
    elif isinstance(obj, dict):
        yield from obj.values()
    elif isinstance(obj, ModuleType):
        if not _library(obj.__name__):
            yield from vars(obj).values()
    elif isinstance(obj, type):
        if not _library(obj.__module__):
            yield from vars(obj).values()
    elif isinstance(obj, FunctionType):
        if not _library(obj.__module__):
            yield from obj.__defaults__ or ()
            yield from (obj.__kwdefaults__ or {}).values()
            for cell in obj.__closure__ or ():
                try:
                    yield cell.cell_contents
                except ValueError:
                    pass
    elif isinstance(obj, MethodType):
        yield obj.__self__
        yield obj.__func__
    else:
        d = _attr(obj, "__dict__", None)
        if isinstance(d, dict):
            yield from d.values()
        for slot in _attr(type(obj), "__slots__", ()):
            v = _attr(obj, slot, _MISSING) if isinstance(slot, str) else _MISSING
            if v is not _MISSING:
                yield v


def _reachable(roots: list[Any]) -> tuple[set[int], bool]:
    """The ids of the objects reachable from ``roots`` within ``_DEPTH`` steps, and
    whether the search finished within its budget."""
    seen: set[int] = set()
    level = [r for r in roots if not isinstance(r, _ATOMS)]
    for _ in range(_DEPTH + 1):
        nxt: list[Any] = []
        for obj in level:
            if id(obj) in seen:
                continue
            seen.add(id(obj))
            if len(seen) > _BUDGET:
                return seen, False
            nxt.extend(c for c in _children(obj) if not isinstance(c, _ATOMS))
        level = nxt
    return seen, True
