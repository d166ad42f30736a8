"""``__torch_function__``: PyTorch's public-API override protocol (NumPy's NEP 18, with modes).

Every public function, Tensor method, property and operator can be taken over by the
arguments' classes (``__torch_function__`` on a Tensor subclass or on any tensor-like) and by
``TorchFunctionMode`` s, as in ``torch.overrides``.

# NOTE [two routes]
PyTorch reaches this protocol by two routes. Ops bound in C++ (``torch.add``, ``Tensor.add``,
``a + b``) collect only arguments whose type is not exactly ``Tensor`` or ``Parameter``, so
with a mode on and plain tensors the mode sees ``types == ()``. Functions written in Python
call ``has_torch_function`` / ``handle_torch_function`` themselves, which count plain tensors
too (``types == (Tensor,)``). ember's registry ops take the first route
(``dispatch_torch_function``, reached through NOTE [torch function keys] in
``ember/dispatch/protocols.py``); functions written in Python, in ember or by users, take the
second (``handle_torch_function``).

# NOTE [handler order]
Overloaded arguments are unique by type, a subclass before its superclasses, otherwise left
to right. The top mode runs first, with itself popped off the stack for the duration (so the
API calls it makes go to the next mode, or to the arguments); if it returns NotImplemented,
each overloaded argument's handler runs in order, and the first result that is not
NotImplemented is returned as it is. When all decline, ``TypeError`` names the function and
the types.
"""

from __future__ import annotations

import functools
import inspect
from _thread import get_ident
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from ember._tensor import Tensor
from ember.dispatch import dispatcher, state
from ember.dispatch.keys import TORCH_FUNCTION_BIT, TORCH_FUNCTION_MODE_BIT, DispatchKey
from ember.dispatch.protocols import (
    DECLINED,
    GENERATED_MEMBERS,
    PENDING,
    PLAIN_TYPES,
    PROPERTY_HOOK,
    REQUEST,
    TORCH_FUNCTION,
    TORCH_FUNCTION_HANDLER,
    check_mode_handler,
    classify,
    disabled_torch_function_impl,
    request,
)
from ember.ops.registry import OpOverload, OpOverloadPacket

__all__ = [
    "BaseTorchFunctionMode",
    "TorchFunctionMode",
    "get_ignored_functions",
    "get_overridable_functions",
    "get_testing_overrides",
    "handle_torch_function",
    "has_torch_function",
    "has_torch_function_unary",
    "has_torch_function_variadic",
    "is_tensor_like",
    "is_tensor_method_or_property",
    "resolve_name",
    "wrap_torch_function",
]

_local = state.local
_MODES = state.FUNCTION_MODES  # NOTE [torch function state]
_BOTH = TORCH_FUNCTION_BIT | TORCH_FUNCTION_MODE_BIT
#: ``redispatch_function`` calls running, in any thread: while 0 no thread's
#: ``skip_one_hop`` is set, so the protocol need not read it (a global count: it errs
#: towards reading)
_SKIPS = [0]

# an object that is not a Tensor takes part in __torch_function__ only (NOTE [python key])
dispatcher.ARGUMENT_KEYS.classify = lambda t: classify(t) & TORCH_FUNCTION_BIT  # type: ignore[method-assign]
dispatcher.set_fallback(DispatchKey.TorchFunction, request)
dispatcher.set_fallback(DispatchKey.TorchFunctionMode, request)


# ------------------------------------------------------------------------------ state


def _is_torch_function_enabled() -> bool:
    """Whether subclass and tensor-like handlers run (``torch._C._is_torch_function_enabled``)."""
    return not _local.exclude & TORCH_FUNCTION_BIT


def _is_torch_function_all_disabled() -> bool:
    """Whether modes are off too (``DisableTorchFunction``)."""
    return bool(_local.exclude & TORCH_FUNCTION_MODE_BIT)


def _is_torch_function_mode_enabled() -> bool:
    """Whether a TorchFunctionMode would run now."""
    return bool(_local.function_modes) and not _local.exclude & TORCH_FUNCTION_MODE_BIT


class DisableTorchFunctionSubclass(state.TorchFunctionGuard):
    """Subclass and tensor-like handlers are off in the block; modes still run.

    >>> with ember._C.DisableTorchFunctionSubclass():
    ...     ember._C._is_torch_function_enabled()
    False
    """

    __slots__ = ()

    def __init__(self) -> None:
        super().__init__(_BOTH, TORCH_FUNCTION_BIT)


class DisableTorchFunction(state.TorchFunctionGuard):
    """Every ``__torch_function__`` handler and mode is off in the block."""

    __slots__ = ()

    def __init__(self) -> None:
        super().__init__(0, _BOTH)


class _EnableTorchFunction(state.ScopedGuard):
    """Handlers and modes are on again until this guard is deleted or its with-block ends
    (NOTE [scoped guards] in ``ember/dispatch/state.py``)."""

    __slots__ = ()

    def __init__(self) -> None:
        super().__init__(keep=~state.TF_BITS)


def _enable_torch_function() -> Any:
    """``torch.overrides._enable_torch_function``: a with-block with the protocol enabled."""
    return _EnableTorchFunction()


# ------------------------------------------------------------------------------- modes


class TorchFunctionMode:
    """Overrides every overridable call in a dynamic scope: ``with MyMode(): ...``.

    Modes form a stack; only the top one is asked, with itself off inside its own handler
    (``with self:`` turns it back on). Returning NotImplemented passes the call on to the
    arguments' handlers.

    >>> from ember.overrides import TorchFunctionMode
    >>> class Log(TorchFunctionMode):
    ...     def __torch_function__(self, func, types, args=(), kwargs=None):
    ...         print(func.__name__)
    ...         return func(*args, **(kwargs or {}))
    >>> with Log():
    ...     _ = ember.ones(2) + 1
    ones
    add
    """

    inner: TorchFunctionMode

    def __init__(self) -> None:
        pass

    def __torch_function__(
        self, func: Any, types: Any, args: Any = (), kwargs: dict[str, Any] | None = None
    ) -> Any:
        raise NotImplementedError

    def __enter__(self) -> Any:
        check_mode_handler(type(self), "__torch_function__")  # (_push_mode, one call less)
        _push(self)
        return self

    def __exit__(self, *exc: Any) -> None:
        _pop()

    @classmethod
    def push(cls, *args: Any, **kwargs: Any) -> TorchFunctionMode:
        return cls(*args, **kwargs)


class BaseTorchFunctionMode(TorchFunctionMode):
    """A mode that runs every call unchanged (a base for modes that override a few)."""

    def __torch_function__(
        self, func: Any, types: Any, args: Any = (), kwargs: dict[str, Any] | None = None
    ) -> Any:
        return func(*args, **(kwargs or {}))


_push, _pop = state.push_function_mode, state.pop_function_mode


def _push_mode(mode: Any) -> None:
    check_mode_handler(type(mode), "__torch_function__")
    state.push_function_mode(mode)


def _pop_mode() -> Any:
    return state.pop_function_mode()


def _get_current_function_mode() -> Any:
    stack = _local.function_modes
    return stack[-1] if stack else None


def _get_current_function_mode_stack() -> list[Any]:
    return list(_local.function_modes)


def _len_torch_function_stack() -> int:
    return len(_local.function_modes)


@contextmanager
def _pop_mode_temporarily() -> Iterator[Any]:
    mode = state.pop_function_mode()
    try:
        yield mode
    finally:
        state.push_function_mode(mode)


# ------------------------------------------------------------------- the protocol


_KEYS_OF_TYPE = dispatcher.ARGUMENT_KEYS  # type -> TorchFunction's bit or 0, computed once


def _add_overloaded(found: list[Any], x: Any, plain_counts: bool) -> None:
    t = type(x)
    if not _KEYS_OF_TYPE[t] & TORCH_FUNCTION_BIT:
        if not (plain_counts and t in PLAIN_TYPES):
            return
        if t.__torch_function__ is disabled_torch_function_impl:  # Parameter, as PyTorch's
            return
    for f in found:
        if type(f) is t:
            return
    for i, f in enumerate(found):
        if issubclass(t, type(f)):
            found.insert(i, x)  # NOTE [handler order]: subclasses first
            return
    found.append(x)


def _overloaded_args(
    values: Iterable[Any], plain_counts: bool = False, lists: bool = True
) -> list[Any]:
    """The arguments whose handlers run, in order (NOTE [handler order]); elements of lists
    and tuples count, one level down."""
    if _local.exclude & TORCH_FUNCTION_BIT:
        return []
    found: list[Any] = []
    for a in values:
        if lists and type(a) in (list, tuple):
            for e in a:
                _add_overloaded(found, e, plain_counts)
        else:
            _add_overloaded(found, a, plain_counts)
    return found


# NOTE [one argument pass]
# A handler's call costs what PyTorch's C++ parser costs only if the arguments are looked at
# once. The binding resolves the overload and the dispatch function finds the keys; when the
# key set asks for the protocol, ``request`` (the keys' fallback) notes the overload and its
# arguments, and the public entry that sees the sentinel passes them on (``answer``):
# - the handlers are found from the argument *types* alone (NEP 18), in one inline pass
#   (``_find``: plain tensors are skipped at once, the first overloaded type needs no
#   ordering);
# - while the handlers run, ``PENDING`` names the call: the default handler
#   (``Tensor.__torch_function__``, what ``super()`` reaches) running ``func(*args)`` again
#   with the same ``func`` and the same argument tuple calls the noted overload's dispatch
#   function directly, with no second binding (``call_again``). Only calls without
#   keywords or list arguments are noted: those a handler cannot have changed in place.
# Both slots are process-wide, not thread-local (a thread-local costs more than it saves):
# a request carries its thread's id and is dropped by another thread's ``answer``, and a
# pending call matches only the very ``func`` and argument tuple it was noted for, which
# bind to the noted overload whichever thread asks.

_NONE: tuple[Any, ...] = ((), ())


def _find(values: tuple[Any, ...]) -> tuple[Any, tuple[type, ...]] | None:
    """``_overloaded_args(values)`` and their types, walked inline (one call, no helper per
    argument); None when an argument is a list or tuple (``_overloaded_args`` walks it)."""
    found = None
    for v in values:
        t = type(v)
        if t is Tensor:
            continue
        if t is list or t is tuple:
            return None
        if _KEYS_OF_TYPE[t] & TORCH_FUNCTION_BIT:
            if found is None:
                found = [v]
            else:
                _add_overloaded(found, v, False)
    if found is None:
        return _NONE
    if len(found) == 1:
        return found, (type(found[0]),)
    return found, tuple(map(type, found))


def _run_handlers(
    func: Any,
    overloaded: list[Any] | tuple[Any, ...],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    types: tuple[type, ...] | None = None,
    moded: bool | None = None,
) -> Any:
    """The top mode's result (when ``moded``: a mode is on; None: find out), else the first
    overloaded argument's that is not NotImplemented (NOTE [handler order])."""
    if types is None:
        types = tuple([type(a) for a in overloaded])
    stack = _local.function_modes
    if moded is None:
        moded = bool(stack) and not _local.exclude & TORCH_FUNCTION_MODE_BIT
    if moded:
        handler = stack[-1].__torch_function__  # the mode is off inside its own handler
        result = state.call_popped(
            stack, TORCH_FUNCTION_MODE_BIT, 0, handler, (func, types, args, kwargs)
        )
        if result is not NotImplemented:
            return result
    for a in overloaded:
        result = a.__torch_function__(func, types, args, kwargs)
        if result is not NotImplemented:
            return result
    if isinstance(func, (OpOverload, OpOverloadPacket)):
        name = f"{func.__module__}.{func.__name__}"  # ember.ops.aten.add.Tensor
    else:
        name = resolve_name(func) or getattr(func, "__qualname__", repr(func))
    raise TypeError(
        f"no implementation found for '{name}' on types that implement __torch_function__: "
        f"{list(types)}"
    )


def dispatch_torch_function(func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """The C++ route (NOTE [two routes]) for a public function, method or operator that
    decided by itself that the protocol applies (no dispatch function's request)."""
    REQUEST[0] = None
    return answer(func, args, kwargs)


def answer(func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """The C++ route (NOTE [two routes]): a registry op's public function, method or
    operator, whose dispatch function returned TORCH_FUNCTION just now (its ``request`` is
    in ``REQUEST``: NOTE [one argument pass])."""
    noted = REQUEST[0]
    REQUEST[0] = None
    if noted is not None and noted[3] != get_ident():  # another thread's request
        noted = None
    loc = _local
    if _SKIPS[0] and loc.skip_one_hop:  # redispatch_function's skipped hop (the C++ route)
        loc.skip_one_hop = False
        with state.TorchFunctionGuard(state.TF_BITS, state.TF_BITS):
            return func(*args, **kwargs)
    values = (*args, *kwargs.values()) if kwargs else args
    exclude = loc.exclude
    order = _NONE if exclude & TORCH_FUNCTION_BIT else _find(values)
    if order is None:
        overloaded: Any = _overloaded_args(values)
        types = None
    else:
        overloaded, types = order
    moded = bool(loc.function_modes) and not exclude & TORCH_FUNCTION_MODE_BIT
    if not overloaded and not moded:
        # the keys asked for a handler but none applies here (a tensor-like reached a
        # kernel's inner call): run the function with subclass handling off
        return state.call_excluding(TORCH_FUNCTION_BIT, func, args, kwargs)
    if noted is None or kwargs or order is None:
        return _run_handlers(func, overloaded, args, kwargs, types, moded)
    previous = PENDING[0]
    PENDING[0] = (func, args, noted[0], noted[1])
    try:
        return _run_handlers(func, overloaded, args, kwargs, types, moded)
    finally:
        PENDING[0] = previous


def call_again(func: Any, args: tuple[Any, ...], kwargs: dict[str, Any] | None) -> Any:
    """``func(*args, **kwargs)`` with subclass handlers off, from a default handler: when
    it is the call whose handlers are running, its overload runs without a second binding
    (NOTE [one argument pass])."""
    pending = PENDING[0]
    if pending is not None and pending[0] is func and pending[1] is args and not kwargs:
        op = pending[2]
        r = state.call_excluding(TORCH_FUNCTION_BIT, op._public, pending[3])
        if r is TORCH_FUNCTION:  # a mode is still on: it runs, as func(*args) would
            r = state.call_excluding(TORCH_FUNCTION_BIT, answer, (func, args, {}))
        return r
    return state.call_excluding(TORCH_FUNCTION_BIT, func, args, kwargs)


TORCH_FUNCTION_HANDLER[0] = answer


def redispatch_function(
    func: Any, types: Any, args: tuple[Any, ...] = (), kwargs: dict[str, Any] | None = None
) -> Any:
    """Call ``func`` skipping one level of ``__torch_function__``: the handlers (or mode)
    that would see this very call are passed over, the calls ``func`` makes inside are
    dispatched as usual, as PyTorch's ``redispatch_function`` (``_skip_one_hop_torch_function``).
    A subclass's handler gets a plain result back (so later ops on it are not its own).

    >>> class Sub(ember.Tensor):
    ...     @classmethod
    ...     def __torch_function__(cls, func, types, args=(), kwargs=None):
    ...         return ember.overrides.redispatch_function(func, types, args, kwargs)
    >>> type(ember.ones(2).as_subclass(Sub) + 1).__name__
    'Tensor'
    """
    _local.skip_one_hop = True
    _SKIPS[0] += 1
    try:
        return func(*args, **(kwargs or {}))
    finally:
        _local.skip_one_hop = False
        _SKIPS[0] -= 1


def has_tensor_likes(args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    """Whether an argument (or an element of a list or tuple argument) is a tensor-like whose
    handler would run now."""
    if _local.exclude & TORCH_FUNCTION_BIT:
        return False
    for a in (*args, *kwargs.values()):
        if type(a) in (list, tuple):
            if any(_KEYS_OF_TYPE[type(e)] & TORCH_FUNCTION_BIT for e in a):
                return True
        elif _KEYS_OF_TYPE[type(a)] & TORCH_FUNCTION_BIT:
            return True
    return False


def has_torch_function(relevant_args: Any) -> bool:
    """Whether ``handle_torch_function`` must run for these arguments: a mode is on (and the
    sequence is not empty), or an argument's class overrides ``__torch_function__``.

    >>> from ember.overrides import has_torch_function
    >>> has_torch_function((ember.ones(1),))
    False
    """
    if type(relevant_args) not in (tuple, list):
        if not isinstance(relevant_args, (tuple, list)):
            raise TypeError(
                f"has_torch_function(): expected a tuple or list of arguments, got "
                f"{type(relevant_args).__name__}"
            )
    if _SKIPS[0] and _local.skip_one_hop:  # redispatch_function's skipped hop (Python route)
        _local.skip_one_hop = False
        return False
    excluded = _local.exclude
    if excluded & TORCH_FUNCTION_MODE_BIT:
        return False
    if _local.function_modes and relevant_args:
        return True
    if excluded & TORCH_FUNCTION_BIT:
        return False
    for a in relevant_args:
        if _KEYS_OF_TYPE[type(a)] & TORCH_FUNCTION_BIT:
            return True
    return False


def has_torch_function_unary(arg: Any) -> bool:
    """``has_torch_function((arg,))``, for one argument."""
    return has_torch_function((arg,))


def has_torch_function_variadic(*args: Any) -> bool:
    """``has_torch_function(args)``, with the arguments spread."""
    return has_torch_function(args)


def handle_torch_function(
    public_api: Callable[..., Any], relevant_args: Iterable[Any], *args: Any, **kwargs: Any
) -> Any:
    """Run the handlers for a function written in Python (NOTE [two routes]): plain tensors
    among ``relevant_args`` count, so a mode sees ``types == (Tensor,)``.

    >>> def double(a):
    ...     if has_torch_function_unary(a):
    ...         return handle_torch_function(double, (a,), a)
    ...     return a * 2
    """
    overloaded = _overloaded_args(relevant_args, plain_counts=True, lists=False)
    return _run_handlers(public_api, overloaded, args, kwargs)


def wrap_torch_function(dispatcher: Callable[..., Iterable[Any]]) -> Callable[..., Any]:
    """Make a Python function overridable: ``dispatcher(*args, **kwargs)`` names the
    arguments that count.

    >>> from ember.overrides import wrap_torch_function
    >>> @wrap_torch_function(lambda a, b: (a, b))
    ... def plus(a, b):
    ...     return a + b
    """

    def inner(func: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(func)
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            relevant = tuple(dispatcher(*args, **kwargs))
            if has_torch_function(relevant):
                return handle_torch_function(wrapped, relevant, *args, **kwargs)
            return func(*args, **kwargs)

        return wrapped

    return inner


def guard_function(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` (a public function written in Python where PyTorch's is bound in C++, such as
    ``ember.nonzero``) behind the protocol, by the C++ route (NOTE [two routes])."""

    @functools.wraps(fn)
    def function(*args: Any, **kwargs: Any) -> Any:
        if _may_override(args, kwargs) and _wants_any(args, kwargs):
            return dispatch_torch_function(function, args, kwargs)
        return fn(*args, **kwargs)

    return function


def python_route(*names: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Make a public function written in Python overridable by the Python route (NOTE [two
    routes]), as PyTorch's Python functions are: the parameters ``names`` (by default those
    annotated ``Tensor``) count, plain tensors too, and a handler sees the decorated function
    as ``func``.

    >>> from ember.overrides import python_route
    >>> @python_route("input")
    ... def double(input):
    ...     return input * 2
    """

    def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
        params = list(inspect.signature(fn).parameters.values())
        where = []
        counted = names or [p.name for p in params if str(p.annotation).startswith("Tensor")]
        for n in counted:
            p = next(p for p in params if p.name == n)
            star = p.kind is inspect.Parameter.VAR_POSITIONAL
            pos = -1 if p.kind is inspect.Parameter.KEYWORD_ONLY else params.index(p)
            where.append((pos, n, star))

        def relevant(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, ...]:
            out: list[Any] = []
            for pos, n, star in where:
                if star:
                    out.extend(args[pos:])
                elif 0 <= pos < len(args):
                    out.append(args[pos])
                elif n in kwargs:
                    out.append(kwargs[n])
            return tuple(out)

        @functools.wraps(fn)
        def function(*args: Any, **kwargs: Any) -> Any:
            if _may_override(args, kwargs):
                rel = relevant(args, kwargs)
                if has_torch_function(rel):
                    return handle_torch_function(function, rel, *args, **kwargs)
            return fn(*args, **kwargs)

        return function

    return decorate


def _may_override(args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    """A cheap first test for Python-written functions: a mode was pushed somewhere, or an
    argument (or an element of a list or tuple argument) is of a class that takes part.
    False means the protocol has nothing to do; True means ``has_torch_function`` decides."""
    if _MODES[0]:
        return True
    for a in (*args, *kwargs.values()) if kwargs else args:
        t = type(a)
        if t is Tensor:
            continue
        if t is list or t is tuple:
            for e in a:
                if type(e) is not Tensor and _KEYS_OF_TYPE[type(e)] & TORCH_FUNCTION_BIT:
                    return True
        elif _KEYS_OF_TYPE[t] & TORCH_FUNCTION_BIT:
            return True
    return False


def _wants_any(args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    return _is_torch_function_mode_enabled() or has_tensor_likes(args, kwargs)


def enable_reentrant_dispatch() -> Any:
    """A with-block in which ops a ``__torch_dispatch__`` handler runs are recorded by
    autograd (by default the Autograd key is off below it)."""
    return state.KeyGuard(allow=1 << DispatchKey.Autograd)


def is_tensor_like(inp: Any) -> bool:
    """Whether ``inp`` is a Tensor or has ``__torch_function__``.

    >>> from ember.overrides import is_tensor_like
    >>> is_tensor_like(ember.ones(1)), is_tensor_like(6)
    (True, False)
    """
    return type(inp) is Tensor or hasattr(inp, "__torch_function__")


# ------------------------------------------------- hand-written Tensor members


#: Tensor members PyTorch writes in Python (torch/_tensor.py): they take the Python route
#: (NOTE [two routes]), so a mode sees ``types == (Tensor,)`` for a plain tensor
PYTHON_MEMBERS = frozenset(
    "__repr__ __format__ __len__ __iter__ __reversed__ __contains__ __array__ __deepcopy__ "
    "__reduce_ex__ backward register_hook split unique unique_consecutive norm".split()
)


def _guarded_method(fn: Callable[..., Any], report: list[Any], python: bool) -> Callable[..., Any]:
    """``fn`` (a Tensor method written in Python) behind the protocol's check: a plain
    tensor with no with-block active pays one key test (NOTE [torch function keys]).
    With ``python``, the handlers run by the Python route (``self`` counts even if plain)."""

    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        if (self._ekeys >= TORCH_FUNCTION_BIT or _MODES[0]) and _wants(self, args, kwargs):
            if python:
                return handle_torch_function(report[0], (self,), self, *args, **kwargs)
            return dispatch_torch_function(report[0], (self, *args), kwargs)
        return fn(self, *args, **kwargs)

    functools.update_wrapper(method, fn)
    return method


def _wants(self: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    if _is_torch_function_mode_enabled():
        return True
    return has_tensor_likes((self, *args), kwargs)


def _guarded_property(prop: property, name: str) -> property:
    """A property whose get and set go through the protocol (``func`` is
    ``Tensor.<name>.__get__`` / ``__set__``, as in PyTorch)."""
    fget, fset = prop.fget, prop.fset

    def get(self: Any) -> Any:
        if (self._ekeys >= TORCH_FUNCTION_BIT or _MODES[0]) and _wants(self, (), {}):
            return dispatch_torch_function(getattr(Tensor, name).__get__, (self,), {})
        return fget(self)  # type: ignore[misc]

    def set_(self: Any, value: Any) -> None:
        if (self._ekeys >= TORCH_FUNCTION_BIT or _MODES[0]) and _wants(self, (value,), {}):
            dispatch_torch_function(getattr(Tensor, name).__set__, (self, value), {})
            return
        fset(self, value)  # type: ignore[misc]

    return property(get, set_ if fset is not None else None, prop.fdel, prop.__doc__)


#: modules whose Tensor members check the protocol themselves (None: made by codegen)
_CHECKS_ITSELF = frozenset({None, "ember._bind", "ember._indexing"})


def _property_hook(name: str, self: Any, value: Any, setter: bool) -> Any:
    """The protocol for a property ``ember._tensor`` checks inline (``grad``)."""
    if not _wants(self, (value,) if setter else (), {}):
        return DECLINED
    prop = getattr(Tensor, name)
    if setter:
        dispatch_torch_function(prop.__set__, (self, value), {})
        return None
    return dispatch_torch_function(prop.__get__, (self,), {})


PROPERTY_HOOK[0] = _property_hook


def guard_tensor_members() -> None:
    """Put every Tensor method and property written in Python behind the protocol; the
    generated ones (``GENERATED_MEMBERS``) check it themselves, unless a Python function
    has replaced them since (``Tensor.to``). Called once, by ``ember``, after every module
    has attached its members."""
    for name, member in list(Tensor.__dict__.items()):
        if not is_overridable_member(name):
            continue
        if name in GENERATED_MEMBERS and getattr(member, "__module__", None) in _CHECKS_ITSELF:
            continue
        if getattr(member, "checks_torch_function", False):  # hand-written, with its own check
            continue
        if isinstance(member, property):
            setattr(Tensor, name, _guarded_property(member, name))
        elif callable(member) and not isinstance(member, (type, staticmethod, classmethod)):
            report: list[Any] = [None]
            wrapped = _guarded_method(member, report, name in PYTHON_MEMBERS)
            setattr(Tensor, name, wrapped)
            report[0] = wrapped


# The generated lists (get_overridable_functions, get_testing_overrides, ...) live in
# ember/overrides/_lists.py and are re-exported here.
from ember.overrides._lists import (  # noqa: E402
    get_default_nowrap_functions,
    get_ignored_functions,
    get_overridable_functions,
    get_testing_overrides,
    is_overridable_member,
    is_tensor_method_or_property,
    resolve_name,
)

__all__ += ["get_default_nowrap_functions", "redispatch_function"]
