"""``ember.jit``: what scripts written for TorchScript need in order to run, eagerly.

ember has no TorchScript compiler (``ember.compile`` is its ahead-of-time path, docs/aot.md).
Code that decorates helpers with ``@torch.jit.script``, scripts or traces a model before
running it, or asks ``torch.jit.is_scripting()`` runs unchanged: ``script`` and ``trace``
return what they are given, which then runs eagerly with the same values, and the
annotations (``ignore``, ``unused``, ``export``, ``annotate``, ``Final``) do what they do
outside a scripted region. What needs a TorchScript program itself (``save``, ``load``,
``freeze``, a ``.graph``) raises with the way to do it in ember.

>>> @ember.jit.script
... def gelu_tanh(x):
...     return 0.5 * x * (1 + ember.tanh(0.7978845608 * (x + 0.044715 * x * x * x)))
>>> gelu_tanh(ember.zeros(2))
tensor([0., 0.])
>>> ember.jit.is_scripting()
False
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final, TypeVar  # Final: PyTorch's jit.Final is typing's

__all__ = [
    "Final",
    "ScriptFunction",
    "ScriptModule",
    "annotate",
    "export",
    "fork",
    "freeze",
    "ignore",
    "interface",
    "is_scripting",
    "is_tracing",
    "load",
    "save",
    "script",
    "trace",
    "trace_module",
    "unused",
    "wait",
]

T = TypeVar("T")


class ScriptModule:
    """PyTorch's class of scripted modules; ember makes none (``script`` returns the module
    itself), so ``isinstance(m, ember.jit.ScriptModule)`` is False."""


class ScriptFunction:
    """PyTorch's class of scripted functions; ember makes none (see ``ScriptModule``)."""


def script(
    obj: T, optimize: Any = None, _frames_up: int = 0, _rcb: Any = None, example_inputs: Any = None
) -> T:
    """``obj`` itself (a function, a module or a class): it runs eagerly, with the values
    TorchScript would compute."""
    return obj


def trace(func: T, example_inputs: Any = None, *args: Any, **kwargs: Any) -> T:
    """``func`` itself: ember does not record a TorchScript trace; calls run eagerly (for a
    graph of the ops, see ``ember.fx.experimental.proxy_tensor.make_fx``)."""
    return func


def trace_module(mod: T, inputs: Any = None, *args: Any, **kwargs: Any) -> T:
    """``mod`` itself, as ``trace``."""
    return mod


def ignore(drop: Any = False, **kwargs: Any) -> Any:
    """``@ignore`` / ``@ignore(drop=True)``: the function, unchanged."""
    if callable(drop):
        return drop
    return lambda fn: fn


def unused(fn: T) -> T:
    """The function, unchanged (TorchScript would not compile it)."""
    return fn


def export(fn: T) -> T:
    """The method, unchanged (TorchScript would compile it as an entry point)."""
    return fn


def interface(obj: T) -> T:
    """The class, unchanged."""
    return obj


def annotate(the_type: Any, the_value: T) -> T:
    """``the_value`` (the type is TorchScript's hint only)."""
    return the_value


def is_scripting() -> bool:
    """False: ember never runs code as TorchScript."""
    return False


def is_tracing() -> bool:
    """False: ember never records a TorchScript trace."""
    return False


class Future:
    """What ``fork`` returns: the call's result, computed at the fork."""

    def __init__(self, value: Any) -> None:
        self._value = value

    def wait(self) -> Any:
        return self._value


def fork(func: Callable[..., Any], *args: Any, **kwargs: Any) -> Future:
    """Run ``func(*args, **kwargs)`` now (TorchScript may run it in parallel) and return a
    ``Future`` of its result."""
    return Future(func(*args, **kwargs))


def wait(future: Future) -> Any:
    """The result of a ``fork``."""
    return future.wait()


def _no_program(name: str) -> RuntimeError:
    return RuntimeError(
        f"ember.jit.{name}: ember has no TorchScript programs (jit.script and jit.trace return "
        "their argument, which runs eagerly); save weights with ember.save(model.state_dict(), "
        "path) and rebuild the module to load them"
    )


def save(m: Any, f: Any, _extra_files: Any = None) -> None:
    """Refused: there is no TorchScript program to save."""
    raise _no_program("save")


def load(f: Any, map_location: Any = None, _extra_files: Any = None) -> Any:
    """Refused: ember cannot read TorchScript archives."""
    raise _no_program("load")


def freeze(mod: Any, preserved_attrs: Any = None, optimize_numerics: bool = True) -> Any:
    """Refused: freezing rewrites a TorchScript program."""
    raise _no_program("freeze")
