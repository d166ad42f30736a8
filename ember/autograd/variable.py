"""``autograd.Variable``: PyTorch's pre-0.4 wrapper, now an alias: ``Variable(t,
requires_grad=True)`` returns a tensor (sharing ``t``'s memory) and every tensor is an
instance of ``Variable``."""

from __future__ import annotations

from typing import Any

from ember._tensor import Tensor
from ember.autograd.engine import ExecutionEngine


class _VariableMeta(type):
    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, Tensor)

    def __subclasscheck__(cls, sub: type) -> bool:
        return issubclass(sub, Tensor)


class Variable(metaclass=_VariableMeta):
    """``Variable(data, requires_grad=False)``: ``data`` as a new leaf tensor over the same
    memory (PyTorch's alias of today).

    >>> v = ember.autograd.Variable(ember.ones(2), requires_grad=True)
    >>> v.requires_grad, v.is_leaf, isinstance(ember.ones(1), ember.autograd.Variable)
    (True, True, True)
    """

    def __new__(cls, data: Any = None, requires_grad: bool = False, volatile: bool = False) -> Any:
        if data is None:
            raise TypeError("Variable() needs a tensor: Variable(data, requires_grad=False)")
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        return data.detach().requires_grad_(requires_grad)

    #: ``Variable._execution_engine.queue_callback(fn)``: NOTE [final callbacks]
    _execution_engine = ExecutionEngine()
