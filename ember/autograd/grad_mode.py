"""Grad mode: thread-local switches, usable as ``with`` blocks and as decorators.

>>> x = ember.ones(2, requires_grad=True)
>>> with ember.no_grad():
...     y = x * 2
>>> y.requires_grad
False
>>> @ember.no_grad()
... def double(t):
...     return t * 2
>>> double(x).requires_grad
False
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

from ember.dispatch import state

F = TypeVar("F", bound=Callable[..., Any])


def is_grad_enabled() -> bool:
    """Whether ops record the graph for backward in this thread.

    >>> ember.is_grad_enabled()
    True
    """
    return state.local.grad_enabled


def is_inference_mode_enabled() -> bool:
    """Whether an ``inference_mode`` block is active in this thread.

    >>> ember.is_inference_mode_enabled()
    False
    """
    return state.local.inference_mode


class _GradModeSwitch:
    """Base of the grad-mode context managers: set a mode on enter, restore it on exit."""

    enabled: bool = True

    def __init__(self) -> None:
        self._prev: list[bool] = []

    def __enter__(self) -> None:
        self._prev.append(state.local.grad_enabled)
        state.local.grad_enabled = self.enabled

    def __exit__(self, *exc: Any) -> None:
        state.local.grad_enabled = self._prev.pop()

    def _clone(self) -> _GradModeSwitch:
        return type(self)()

    def __call__(self, fn: F) -> F:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with self._clone():
                return fn(*args, **kwargs)

        return wrapper  # type: ignore[return-value]


class no_grad(_GradModeSwitch):
    """Ops in the block record no graph (their results don't require grad).

    >>> x = ember.ones(2, requires_grad=True)
    >>> with ember.no_grad(): (x * 2).requires_grad
    False
    """

    enabled = False


class enable_grad(_GradModeSwitch):
    """Turn graph recording back on inside a ``no_grad`` block.

    >>> x = ember.ones(2, requires_grad=True)
    >>> with ember.no_grad(), ember.enable_grad(): (x * 2).requires_grad
    True
    """

    enabled = True


class set_grad_enabled(_GradModeSwitch):
    """Set grad mode to ``mode``: for the block if used with ``with``, else from now on.

    >>> with ember.set_grad_enabled(False): pass
    """

    def __init__(self, mode: bool) -> None:
        super().__init__()
        self.enabled = bool(mode)
        self._applied = state.local.grad_enabled
        state.local.grad_enabled = self.enabled  # takes effect even without ``with``

    def __enter__(self) -> None:
        self._prev.append(self._applied)
        state.local.grad_enabled = self.enabled

    def __exit__(self, *exc: Any) -> None:
        state.local.grad_enabled = self._prev.pop()

    def _clone(self) -> _GradModeSwitch:
        return set_grad_enabled(self.enabled)

    def __call__(self, fn: F) -> F:
        state.local.grad_enabled = self._applied  # as a decorator, it must not apply now
        return super().__call__(fn)


class inference_mode(_GradModeSwitch):
    """Like ``no_grad``, for code that will never need gradients (``mode=False`` disables it).

    >>> x = ember.ones(2, requires_grad=True)
    >>> with ember.inference_mode(): (x * 2).requires_grad
    False
    """

    def __init__(self, mode: bool = True) -> None:
        super().__init__()
        self.mode = mode
        self.enabled = not mode
        self._prev_inf: list[bool] = []

    def __enter__(self) -> None:
        super().__enter__()
        self._prev_inf.append(state.local.inference_mode)
        state.local.inference_mode = self.mode

    def __exit__(self, *exc: Any) -> None:
        state.local.inference_mode = self._prev_inf.pop()
        super().__exit__(*exc)

    def _clone(self) -> _GradModeSwitch:
        return inference_mode(self.mode)
