"""``ember.autograd.profiler``: ``record_function`` ranges, and the profiler they feed.

A range opens and closes through two ops of the ``profiler`` namespace, as in PyTorch
(``profiler._record_function_enter_new`` returns a handle, ``_record_function_exit`` takes
it back), so a dispatch mode sees them where PyTorch's does — ``Optimizer.step`` and
``zero_grad`` open one each. With no profiler running a range costs those two calls;
inside ``ember.profiler.profile`` it becomes an event of the profile.

>>> with ember.autograd.profiler.record_function("my block"):
...     y = ember.ones(2) * 2
>>> y
tensor([2., 2.])
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from typing import Any

from ember.library import Library
from ember.ops.registry import ops

__all__ = ["record_function", "RecordFunctionHandle"]


class RecordFunctionHandle:
    """An open range (PyTorch's ``torch.classes.profiler._RecordFunction``): its name, its
    argument string, its start, and the profile it belongs to (None: no profiler ran)."""

    __slots__ = ("name", "args", "start_ns", "profile")

    def __init__(self, name: str, args: str | None, profile: Any) -> None:
        self.name, self.args, self.profile = name, args, profile
        self.start_ns = time.perf_counter_ns()


#: the running profile (ember.profiler.profile sets it): what a range reports to
ACTIVE: list[Any] = [None]


def _enter(name: str, args: str | None = None) -> RecordFunctionHandle:
    profile = ACTIVE[0]
    handle = RecordFunctionHandle(name, args, profile)
    if profile is not None:
        profile._open_range(handle)
    return handle


def _exit(record: RecordFunctionHandle) -> None:
    if not isinstance(record, RecordFunctionHandle):
        raise TypeError(
            "profiler._record_function_exit: expected the handle that "
            f"_record_function_enter_new returned, got {type(record).__name__}"
        )
    if record.profile is not None:
        record.profile._close_range(record, time.perf_counter_ns())


_lib = Library("profiler", "DEF")
_lib.define("_record_function_enter_new(str name, str? args=None) -> Any")
_lib.define("_record_function_exit._RecordFunction(Any record) -> ()")
for _key in ("CPU", "Meta"):
    _lib.impl("_record_function_enter_new", _enter, _key)
    _lib.impl("_record_function_exit._RecordFunction", _exit, _key)


class record_function:  # noqa: N801  (PyTorch's name)
    """A named range of a profile: a context manager, or a decorator that opens it around
    every call of the function (PyTorch's ``torch.autograd.profiler.record_function``).

    >>> @ember.autograd.profiler.record_function("double")
    ... def double(x):
    ...     return x * 2
    >>> double(ember.ones(1))
    tensor([2.])
    """

    def __init__(self, name: str, args: str | None = None) -> None:
        self.name, self.args = name, args
        self.record: RecordFunctionHandle | None = None

    def __enter__(self) -> record_function:
        self.record = ops.profiler._record_function_enter_new(self.name, self.args)
        return self

    def __exit__(self, *exc: object) -> None:
        record, self.record = self.record, None
        if record is not None:
            ops.profiler._record_function_exit._RecordFunction(record)

    def __call__(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        name, args = self.name, self.args

        @functools.wraps(fn)
        def wrapped(*a: Any, **k: Any) -> Any:
            with record_function(name, args):
                return fn(*a, **k)

        return wrapped
