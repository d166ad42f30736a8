"""The lowest layer of the ``__torch_function__`` protocol: which objects take part, and
the sentinel a dispatch function returns when they do. ``ember.overrides`` builds the
protocol on top; this module imports nothing of ember's but the key numbers, so the Tensor
class and the dispatcher can use it.

# NOTE [torch function keys]
PyTorch's Python argument parser asks, before any dispatch key runs, whether an argument's
type overrides ``__torch_function__`` or a ``TorchFunctionMode`` is on. ember asks the same
question with the key-set arithmetic every generated dispatch function already does, so a
call on plain tensors pays nothing for it:

- an instance of a Tensor subclass that overrides ``__torch_function__`` carries the
  ``TorchFunction`` key in its ``_ekeys`` (set when the instance is made, from its class);
- a tensor-like that is not a Tensor at all adds the key through ``ARGUMENT_KEYS`` (one
  dict lookup per type, only for non-Tensor objects in Tensor slots);
- a non-empty mode stack puts ``TorchFunctionMode`` in the thread's include set, and
  ``DisableTorchFunctionSubclass`` / ``DisableTorchFunction`` put one or both keys in the
  exclude set (NOTE [torch function state] in ``ember/dispatch/state.py``).

The two keys sit above every real key, so when either survives the include/exclude step
the op's table entry is ``request``, which returns ``TORCH_FUNCTION`` at once. The public
function, method or operator that called the dispatch function sees the sentinel and hands
the call to ``ember.overrides`` with *itself* as ``func`` (only it knows whether the user
wrote ``ember.add``, ``x.add`` or ``x + y``). A kernel below never sees the keys: every
redispatch masks them away with the keys above it.
"""

from __future__ import annotations

from _thread import get_ident
from typing import Any

from ember.dispatch import state
from ember.dispatch.keys import PYTHON_BIT, TORCH_FUNCTION_BIT, DispatchKey


class _Request:
    """The value a dispatch function returns when ``__torch_function__`` must run."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<ember torch function request>"


TORCH_FUNCTION: Any = _Request()


#: the call ``request`` last answered, ``(op, args, kwargs, thread)`` as the dispatch
#: function got them: the public entry that sees the sentinel hands it to the protocol at
#: once, which takes it if it is its own thread's (NOTE [one argument pass])
REQUEST: list[Any] = [None]


def request(op: Any, ks: int, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """The boxed fallback of the two torch-function keys (NOTE [torch function keys]): it
    notes which overload the binding chose and with what arguments, and returns the
    sentinel."""
    REQUEST[0] = (op, args, kwargs, get_ident())
    return TORCH_FUNCTION


#: the call whose handlers are running: ``(func, args, op, op_args)`` while the handlers
#: of ``func(*args)`` (no keywords, no list arguments) run, else None. A handler's call
#: back into ``func`` with these very arguments runs ``op`` on ``op_args`` without
#: binding them again (NOTE [one argument pass])
PENDING: list[Any] = [None]


class _DisabledTorchFunctionImpl:
    """``ember._C._disabled_torch_function_impl``: as a class's ``__torch_function__`` it
    opts the class out of the protocol; called directly, it runs ``func`` with subclass
    handling off and converts nothing. An instance, not a function, so that as a class
    attribute it is never bound as a method (PyTorch's is a builtin, for the same reason)."""

    __slots__ = ()
    __name__ = __qualname__ = "_disabled_torch_function_impl"

    def __call__(
        self, func: Any, types: Any, args: Any = (), kwargs: dict[str, Any] | None = None
    ) -> Any:
        return state.call_excluding(TORCH_FUNCTION_BIT, func, args, kwargs)

    def __repr__(self) -> str:
        return "<built-in function _disabled_torch_function_impl>"


disabled_torch_function_impl: Any = _DisabledTorchFunctionImpl()

_BELOW_PYTHON = (1 << DispatchKey.Python) - 1


class _DisabledTorchDispatchImpl:
    """``Tensor.__torch_dispatch__`` (``ember._C._disabled_torch_dispatch_impl``): as a
    class's handler it opts the class out of the Python key; called (also as
    ``super().__torch_dispatch__``) it runs the op below the Python key: the real kernel, on
    the tensors' own storage."""

    __slots__ = ()
    __name__ = __qualname__ = "_disabled_torch_dispatch_impl"

    def __call__(
        self, func: Any, types: Any, args: Any = (), kwargs: dict[str, Any] | None = None
    ) -> Any:
        kwargs = kwargs or {}
        ks = func._keyset(args, kwargs)
        if state.ACTIVE[0]:
            ks = state.effective_keys(ks, func)
        return func.redispatch(ks & _BELOW_PYTHON, *args, **kwargs)

    def __repr__(self) -> str:
        return "<built-in function _disabled_torch_dispatch_impl>"


disabled_torch_dispatch_impl: Any = _DisabledTorchDispatchImpl()

#: classes whose instances never take part although they have ``__torch_function__``
#: (exactly ``Tensor`` and ``nn.Parameter``, as in PyTorch; each adds itself)
PLAIN_TYPES: set[type] = set()

#: ``handler(func, args, kwargs)`` for callers below ``ember.overrides`` (the op registry);
#: set by ``ember.overrides``
TORCH_FUNCTION_HANDLER: list[Any] = [None]

#: ``hook(name, self, value, setter) -> result or DECLINED``: the protocol for a property
#: that ``ember._tensor`` checks inline (``grad``); set by ``ember.overrides``
PROPERTY_HOOK: list[Any] = [None]
DECLINED: Any = _Request()

#: names of the Tensor members ``ember._bind`` generates (they check the protocol inline)
GENERATED_MEMBERS: set[str] = set()

_HEAP_TYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: set for classes made by a class statement


def classify(cls: type) -> int:
    """The keys instances of ``cls`` carry for the two Python protocols: ``TorchFunction``
    if the class is not exactly Tensor or Parameter, not a builtin, and has a
    ``__torch_function__`` that is not the disabled one; ``Python`` if it also has a
    ``__torch_dispatch__`` that is not (NOTE [python key] in ``ember/_python_key.py``)."""
    if cls in PLAIN_TYPES or not cls.__flags__ & _HEAP_TYPE:  # a builtin type (int, list)
        return 0
    keys = 0
    tf = getattr(cls, "__torch_function__", None)
    if tf is not None and tf is not disabled_torch_function_impl:
        keys |= TORCH_FUNCTION_BIT
    td = getattr(cls, "__torch_dispatch__", None)
    if td is not None and td is not disabled_torch_dispatch_impl:
        keys |= PYTHON_BIT
    return keys


_CHECKED_MODE_TYPES: set[tuple[type, str]] = set()


def check_mode_handler(cls: type, handler: str) -> None:
    """Refuse a mode class whose ``handler`` (``__torch_function__`` or
    ``__torch_dispatch__``) is a classmethod: a mode's handler gets the mode as ``self``.
    Checked once per class, when an instance is first pushed."""
    if (cls, handler) in _CHECKED_MODE_TYPES:
        return
    for klass in cls.__mro__:
        if handler in klass.__dict__:
            if isinstance(klass.__dict__[handler], classmethod):
                raise RuntimeError(
                    f"{cls.__name__}.{handler} is a classmethod; a mode's handler must be a "
                    "plain method (it gets the mode instance as self)"
                )
            break
    _CHECKED_MODE_TYPES.add((cls, handler))
