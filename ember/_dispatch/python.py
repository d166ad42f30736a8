"""The Python dispatcher: ``OpOverload.py_impl(key)`` kernels, in force inside
``enable_python_dispatcher()``, as ``torch._dispatch.python``.

``op.py_impl(key)(fn)`` keeps ``fn`` in ``op.py_kernels``; nothing changes until the Python
dispatcher is on. ``enable_python_dispatcher()`` then registers each such kernel as the op's
kernel for its key, through the dispatcher's ordinary registration (``set_kernel``, as
``ember.library`` does), and puts the previous kernels back when the block ends
(NOTE [python dispatcher]).

>>> from ember._dispatch.python import enable_python_dispatcher
>>> from ember.dispatch.keys import DispatchKey
>>> op = ember.ops.aten.hardsigmoid.default
>>> @op.py_impl(DispatchKey.CPU)
... def loud(x):
...     return ember.zeros_like(x) + 7
>>> op(ember.zeros(1)), op.py_kernels[DispatchKey.CPU] is loud
(tensor([0.5000]), True)
>>> with enable_python_dispatcher():
...     op(ember.zeros(1))
tensor([7.])
>>> del op.py_kernels[DispatchKey.CPU]

NOTE [python dispatcher]
PyTorch's Python dispatcher resolves a call's kernel in Python, preferring an op's
``py_kernels`` for a key over its C++ kernel. ember's dispatcher is already Python, so being
"on" means the Python kernels are registered kernels: no branch in the dispatcher, and
``redispatch``, fallbacks and decompositions treat them as any other kernel (a kernel
for ``CompositeImplicitAutograd`` is used where the op has no backend kernel, as in
PyTorch). Unlike PyTorch's, the switch is process-wide rather than per thread. A kernel
takes the op's own arguments; to run the op below its key from inside, call
``op.redispatch`` with a lower key set.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from ember.dispatch import dispatcher
from ember.dispatch.dispatcher import KIND_PLAIN
from ember.dispatch.keys import DispatchKey
from ember.library import dispatch_key
from ember.ops.registry import OpOverload

__all__ = ["enable_python_dispatcher", "no_python_dispatcher", "is_python_dispatcher_enabled"]

_LOCK = threading.RLock()
_DEPTH = [0]
#: (op, key) -> the kernel the op had for the key before its Python kernel was registered
_SAVED: dict[tuple[OpOverload, DispatchKey], Any] = {}


def is_python_dispatcher_enabled() -> bool:
    """Whether ``py_impl`` kernels are in force (``torch._C._is_python_dispatcher_enabled``).

    >>> from ember._dispatch.python import is_python_dispatcher_enabled
    >>> is_python_dispatcher_enabled()
    False
    """
    return _DEPTH[0] > 0


def _install(op: OpOverload, key: DispatchKey, fn: Callable[..., Any]) -> None:
    if (op, key) not in _SAVED:
        _SAVED[(op, key)] = op.registered(key)
    dispatcher.set_kernel(op, key, fn, KIND_PLAIN)


def _uninstall_all() -> None:
    for (op, key), old in list(_SAVED.items()):
        if old is None:
            dispatcher.set_kernel(op, key, None, KIND_PLAIN)
        else:
            dispatcher.set_kernel(op, key, old[0], old[1])
    _SAVED.clear()


def _install_all() -> None:
    for op in dispatcher.all_ops:
        for key, fn in op.py_kernels.items():
            if isinstance(key, DispatchKey):
                _install(op, key, fn)


@contextmanager
def enable_python_dispatcher() -> Iterator[None]:
    """Inside the block, every ``py_impl`` kernel is its op's kernel for its key
    (NOTE [python dispatcher]); blocks nest."""
    with _LOCK:
        _DEPTH[0] += 1
        if _DEPTH[0] == 1:
            _install_all()
    try:
        yield
    finally:
        with _LOCK:
            _DEPTH[0] -= 1
            if _DEPTH[0] == 0:
                _uninstall_all()


@contextmanager
def no_python_dispatcher() -> Iterator[None]:
    """Inside the block the Python dispatcher is off, even within ``enable_python_dispatcher``.

    >>> from ember._dispatch.python import no_python_dispatcher, is_python_dispatcher_enabled
    >>> with no_python_dispatcher():
    ...     is_python_dispatcher_enabled()
    False
    """
    with _LOCK:
        saved = _DEPTH[0]
        if saved:
            _uninstall_all()
        _DEPTH[0] = 0
    try:
        yield
    finally:
        with _LOCK:
            _DEPTH[0] = saved
            if saved:
                _install_all()


def py_impl(self: OpOverload, key: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """``@op.py_impl(DispatchKey.Meta)``: ``fn`` becomes ``op``'s kernel for the key while the
    Python dispatcher is on (module docstring); the key may be a ``DispatchKey`` or its
    name. Returns ``fn``."""
    if isinstance(key, type):
        raise NotImplementedError(
            f"{self}.py_impl({key.__name__}): ember's Python dispatcher takes dispatch keys "
            "only; Python kernels per TorchDispatchMode or Tensor subclass are still to come"
        )
    dkey = dispatch_key(key)

    def register(fn: Callable[..., Any]) -> Callable[..., Any]:
        if dkey in self.py_kernels:
            raise RuntimeError(f"Trying to override a python impl for {dkey} on operator {self}")
        self.py_kernels[dkey] = fn
        with _LOCK:
            if _DEPTH[0]:
                _install(self, dkey, fn)
        return fn

    return register


# NOTE [python dispatcher]: the method PyTorch's OpOverload has (its ``py_kernels`` slot is
# in ember/ops/registry.py)
OpOverload.py_impl = py_impl  # type: ignore[attr-defined]
