"""``HigherOrderOperator``: the class of PyTorch's operators that take functions
(``torch._ops.HigherOrderOperator``): ``cond``, ``while_loop``.

ember runs its higher-order operators eagerly, in Python: the functions they take run as
ordinary code, so autograd, tensor subclasses and modes see the ops inside them, and
``ember.compile`` traces the path taken (a loop is unrolled, a branch is the one taken).
The operator objects exist so that code comparing a handler's ``func`` with them (as
PyTorch's ``two_tensor.py`` does with ``cond``) and code naming them
(``ember.ops.higher_order.while_loop``) runs.

>>> from ember._higher_order_ops.base import HigherOrderOperator
>>> class Twice(HigherOrderOperator):
...     def __call__(self, fn, x):
...         return fn(fn(x))
>>> twice = Twice("twice")
>>> twice(lambda v: v * 3, ember.ones(2))
tensor([9., 9.])
>>> twice.name(), ember.ops.higher_order.twice is twice
('twice', True)
"""

from __future__ import annotations

from typing import Any

from ember._tensor import Tensor
from ember.ops.registry import ops

__all__ = ["HigherOrderOperator", "describe"]


def describe(v: Any) -> str:
    """A value as an operator's errors name it: ``float32[3] on cpu``, or its type."""
    if isinstance(v, Tensor):
        return f"{str(v.dtype).replace('ember.', '')}{list(v.shape)} on {v.device}"
    return type(v).__name__


class HigherOrderOperator:
    """An operator taking functions; subclasses define ``__call__``."""

    def __init__(self, name: str) -> None:
        self._name = name
        self.__name__ = name
        ops.higher_order.__dict__[name] = self  # ember.ops.higher_order.<name>

    def name(self) -> str:
        return self._name

    @property
    def namespace(self) -> str:
        return "higher_order"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f"{self._name}: a HigherOrderOperator defines __call__")

    def __repr__(self) -> str:
        return self._name
