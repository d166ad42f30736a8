"""``cond(pred, true_fn, false_fn, operands)``: ``true_fn(*operands)`` if ``pred`` else
``false_fn(*operands)``, as PyTorch's ``torch.cond``.

ember runs it eagerly: ``pred`` (a bool or a one-element tensor) is read and one branch
runs, so autograd, subclasses and modes see that branch's ops. PyTorch traces both branches
into its graph under ``torch.compile``/export; ember's compiler sees the branch taken (the
tensor read is a data-dependent value, NOTE [ember.compile]). ``cond_op`` is the operator
object itself: wrapper subclasses compare the ``func`` their handler gets with it (PyTorch's
``two_tensor.py``); ember never hands it to a handler, as it is run eagerly.

>>> from ember._higher_order_ops.cond import cond
>>> cond(ember.tensor(True), lambda x: x + 1, lambda x: x - 1, (ember.zeros(2),))
tensor([1., 1.])
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ember._higher_order_ops.base import HigherOrderOperator
from ember._tensor import Tensor

__all__ = ["cond", "cond_op"]


class CondOp(HigherOrderOperator):
    """The ``cond`` operator (``ember.ops.higher_order.cond``)."""

    def __call__(
        self, pred: Any, true_fn: Callable[..., Any], false_fn: Callable[..., Any], operands: Any
    ) -> Any:
        if isinstance(pred, Tensor):
            if pred.numel() != 1:
                raise RuntimeError(
                    f"cond: expected pred to be a bool or a tensor with a single item, got a "
                    f"tensor of shape {tuple(pred.shape)}"
                )
            take = bool(pred.item())
        elif isinstance(pred, (bool, int)):
            take = bool(pred)
        else:
            raise RuntimeError(
                f"cond: expected pred to be a bool or a tensor with a single item, got "
                f"{type(pred).__name__}"
            )
        if not (callable(true_fn) and callable(false_fn)):
            raise RuntimeError("cond: expected true_fn and false_fn to be callable")
        if not isinstance(operands, (tuple, list)):
            raise RuntimeError(
                f"cond: expected operands to be a tuple or list, got {type(operands).__name__}"
            )
        return (true_fn if take else false_fn)(*operands)


cond_op = CondOp("cond")


def cond(
    pred: Any,
    true_fn: Callable[..., Any],
    false_fn: Callable[..., Any],
    operands: tuple[Any, ...] | list[Any] = (),
) -> Any:
    """``true_fn(*operands)`` if ``pred`` else ``false_fn(*operands)`` (see the module)."""
    return cond_op(pred, true_fn, false_fn, operands)
