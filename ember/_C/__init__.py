"""Names PyTorch keeps in ``torch._C`` that subclass and mode code imports: the
``__torch_function__`` state guards and queries.

>>> with ember._C.DisableTorchFunctionSubclass():
...     ember._C._is_torch_function_enabled()
False
"""

from __future__ import annotations

from ember._C._dispatch_tls import *  # noqa: F403  (DispatchKey, _dispatch_keys, ...)
from ember._C._dispatch_tls import __all__ as _TLS_NAMES
from ember.dispatch import state as _state
from ember.dispatch.keys import AUTOGRAD_BIT as _AUTOGRAD_BIT
from ember.dispatch.keys import PYTHON_BIT as _PYTHON_BIT
from ember.dispatch.protocols import disabled_torch_dispatch_impl as _disabled_torch_dispatch_impl
from ember.dispatch.protocols import disabled_torch_function_impl as _disabled_torch_function_impl
from ember.dispatch.state import ScopedGuard as _ScopedGuard
from ember.overrides import (
    DisableTorchFunction,
    DisableTorchFunctionSubclass,
    _EnableTorchFunction,
    _get_current_function_mode_stack,
    _is_torch_function_all_disabled,
    _is_torch_function_enabled,
    _is_torch_function_mode_enabled,
    _len_torch_function_stack,
)
from ember.overrides import (
    _pop_mode as _pop_torch_function_stack,
)
from ember.overrides import (
    _push_mode as _push_on_torch_function_stack,
)

__all__ = [
    "_AutoDispatchBelowAutograd",
    "_DisableFuncTorch",
    "_DisableTorchDispatch",
    "_disabled_torch_dispatch_impl",
    "DisableTorchFunction",
    "DisableTorchFunctionSubclass",
    "_EnableTorchFunction",
    "_disabled_torch_function_impl",
    "_is_torch_function_all_disabled",
    "_is_torch_function_enabled",
    "_is_torch_function_mode_enabled",
    "_len_torch_function_stack",
    "_pop_torch_function_stack",
    "_push_on_torch_function_stack",
    "_set_grad_enabled",
    "_current_graph_task_id",
    "_will_engine_execute_node",
    *_TLS_NAMES,
]


def _current_graph_task_id() -> int:
    """The id of the backward pass running in this thread, -1 outside one.

    >>> ember._C._current_graph_task_id()
    -1
    """
    from ember.autograd import engine  # cycle: the engine imports the dispatcher, as this does

    return engine.current_graph_task_id()


def _will_engine_execute_node(node: object) -> bool:
    """Whether the running backward pass runs ``node`` (or captures a gradient there)."""
    from ember.autograd import engine  # cycle: the engine imports the dispatcher, as this does

    return engine.will_execute(node)  # type: ignore[arg-type]


def _set_grad_enabled(mode: bool) -> None:
    """Turn gradient recording on or off for this thread until changed again (what a
    pre-dispatch graph calls where the traced code entered or left ``no_grad``).

    >>> ember._C._set_grad_enabled(False); ember.is_grad_enabled()
    False
    >>> ember._C._set_grad_enabled(True)
    """
    _state.local.grad_enabled = bool(mode)


def _get_function_stack_at(i: int) -> object:
    """The mode at position ``i`` of this thread's TorchFunctionMode stack."""
    return _get_current_function_mode_stack()[i]


class _DisableTorchDispatch(_ScopedGuard):
    """No TorchDispatchMode nor ``__torch_dispatch__`` runs until this guard is deleted or its
    with-block ends (NOTE [scoped guards] in ``ember/dispatch/state.py``).

    >>> guard = ember._C._DisableTorchDispatch()
    >>> del guard
    """

    __slots__ = ()

    def __init__(self) -> None:
        super().__init__(add=_PYTHON_BIT)


class _AutoDispatchBelowAutograd(_ScopedGuard):
    """Ops skip the Autograd key until this guard is deleted or its with-block ends."""

    __slots__ = ()

    def __init__(self) -> None:
        super().__init__(add=_AUTOGRAD_BIT)


class _DisableFuncTorch(_ScopedGuard):
    """A guard that changes nothing: ember has no functorch transforms to turn off."""

    __slots__ = ()
