"""``TorchDispatchMode`` and the helpers of ``torch.utils._python_dispatch``.

A mode sees every op that reaches the Python key while it is on: forward, backward and
factories, each as an ``OpOverload`` with its default arguments stripped (NOTE [python key]
in ``ember/_python_key.py``).

>>> from ember.utils._python_dispatch import TorchDispatchMode
>>> class Log(TorchDispatchMode):
...     def __torch_dispatch__(self, func, types, args=(), kwargs=None):
...         print(func)
...         return func(*args, **(kwargs or {}))
>>> with Log():
...     _ = ember.ones(2) * 2
aten.ones.default
aten.mul.Tensor
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ember._tensor import Tensor
from ember.dispatch import state
from ember.dispatch.protocols import check_mode_handler

__all__ = [
    "TorchDispatchMode",
    "is_in_torch_dispatch_mode",
    "is_traceable_wrapper_subclass",
    "return_and_correct_aliasing",
    "transform_subclass",
]

_local = state.local


class TorchDispatchMode:
    """Overrides every op below autograd in a dynamic scope: ``with MyMode(): ...``.

    Modes form a stack; only the top one is asked, with itself off inside its own handler
    (``with self:`` turns it back on); modes run before subclasses' ``__torch_dispatch__``,
    and NotImplemented passes the op on to them.
    """

    def __init__(self, _dispatch_key: Any = None) -> None:
        pass

    def __torch_dispatch__(
        self, func: Any, types: Any, args: Any = (), kwargs: dict[str, Any] | None = None
    ) -> Any:
        raise NotImplementedError

    def __enter__(self) -> Any:
        check_mode_handler(type(self), "__torch_dispatch__")  # (_push_mode, one call less)
        _push(self)
        return self

    def __exit__(self, *exc: Any) -> None:
        _pop()

    @classmethod
    def push(cls, *args: Any, **kwargs: Any) -> TorchDispatchMode:
        return cls(*args, **kwargs)

    @classmethod
    def is_infra_mode(cls) -> bool:
        return False


_push, _pop = state.push_dispatch_mode, state.pop_dispatch_mode


def _push_mode(mode: Any) -> None:
    check_mode_handler(type(mode), "__torch_dispatch__")
    state.push_dispatch_mode(mode)


def _pop_mode(k: Any = None) -> Any:
    return state.pop_dispatch_mode()


def _get_current_dispatch_mode() -> Any:
    """The top TorchDispatchMode, or None."""
    stack = _local.dispatch_modes
    return stack[-1] if stack else None


def _get_current_dispatch_mode_stack() -> list[Any]:
    """This thread's TorchDispatchMode stack, bottom first."""
    return list(_local.dispatch_modes)


def is_in_torch_dispatch_mode(include_infra_modes: bool = True) -> bool:
    """Whether a TorchDispatchMode is on."""
    return bool(_local.dispatch_modes)


@contextmanager
def _disable_current_modes() -> Iterator[list[Any]]:
    """Every TorchDispatchMode off for the block (yields them as popped: top first, as
    PyTorch's does)."""
    popped = []
    while _local.dispatch_modes:
        popped.append(state.pop_dispatch_mode())
    try:
        yield list(popped)
    finally:
        for mode in reversed(popped):
            state.push_dispatch_mode(mode)


@contextmanager
def _pop_mode_temporarily(k: Any = None) -> Iterator[Any]:
    """The top TorchDispatchMode off for the block (yielded), back on after it.

    >>> from ember.utils._python_dispatch import TorchDispatchMode, _pop_mode_temporarily
    >>> from ember.utils._python_dispatch import is_in_torch_dispatch_mode
    >>> with TorchDispatchMode() as m, _pop_mode_temporarily() as top:
    ...     top is m, is_in_torch_dispatch_mode()
    (True, False)
    """
    mode = state.pop_dispatch_mode()
    try:
        yield mode
    finally:
        state.push_dispatch_mode(mode)


def is_traceable_wrapper_subclass(t: Any) -> bool:
    """Whether ``t`` is a Tensor subclass with ``__tensor_flatten__`` and
    ``__tensor_unflatten__`` (the ahead-of-time tracer can see through it)."""
    return (
        isinstance(t, Tensor)
        and type(t) is not Tensor
        and hasattr(t, "__tensor_flatten__")
        and hasattr(t, "__tensor_unflatten__")
    )


def transform_subclass(
    t: Any, callback: Any, outer_size: Any = None, outer_stride: Any = None
) -> Any:
    """A new instance of ``t``'s traceable subclass whose inner tensors are
    ``callback(name, inner)``."""
    attrs, ctx = t.__tensor_flatten__()
    inner = {name: callback(name, getattr(t, name)) for name in attrs}
    outer_size = t.size() if outer_size is None else outer_size
    outer_stride = t.stride() if outer_stride is None else outer_stride
    return type(t).__tensor_unflatten__(inner, ctx, outer_size, outer_stride)


def return_and_correct_aliasing(func: Any, args: Any, kwargs: Any, out: Any) -> Any:
    """``out`` corrected to the aliasing the schema promises: an in-place or ``out=`` op
    returns the input object it wrote, and a view shares the input wrapper's version
    counter and records it as ``_base``."""
    schema = func._schema
    kwargs = kwargs or {}
    if schema.is_mutable or schema.is_out:
        first = _mutated_argument(func, args, kwargs)
        if first is not None and len(schema.returns) == 1:
            return first
    if schema.view_of is not None and isinstance(out, Tensor) and len(args) > schema.view_of:
        base = args[schema.view_of]
        if isinstance(base, Tensor):
            if base._vc is None:
                base._vc = [0]
            out._vc = base._vc
            out._base = base if base._base is None else base._base
    return out


def _mutated_argument(func: Any, args: Any, kwargs: dict[str, Any]) -> Any:
    pos = 0
    for a in func._schema.arguments:
        x = kwargs.get(a.name) if a.kwarg_only else (args[pos] if pos < len(args) else None)
        if not a.kwarg_only:
            pos += 1
        if a.is_write:
            return x
    return None
