"""``while_loop(cond_fn, body_fn, carried_inputs)``: ``carried = body_fn(*carried)`` while
``cond_fn(*carried)``, as PyTorch's ``torch.while_loop``.

ember runs the loop eagerly (NOTE in ``base.py``): autograd records every iteration's ops,
and ``ember.compile`` traces the loop unrolled for the number of iterations it took (the
condition is a data-dependent read: NOTE [ember.compile]). As PyTorch's, the carried
values are a tuple or list of tensors and Python ints; ``cond_fn`` returns a bool or a
one-element boolean tensor; ``body_fn`` returns as many values, each tensor with the shape,
dtype, device and requires_grad of the one it replaces (ints stay ints); a body that
returns one of its inputs unchanged is refused, as PyTorch refuses aliasing.

>>> i, x = ember.while_loop(
...     lambda i, x: i < 3, lambda i, x: (i + 1, x * 2), (ember.tensor(0), ember.ones(2))
... )
>>> i, x
(tensor(3), tensor([8., 8.]))
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ember._higher_order_ops.base import HigherOrderOperator
from ember._tensor import Tensor

__all__ = ["while_loop", "while_loop_op"]


def _describe(v: Any) -> str:
    if isinstance(v, Tensor):
        return f"{str(v.dtype).replace('ember.', '')}{list(v.shape)} on {v.device}"
    return type(v).__name__


def _check_carried(carried: Any) -> None:
    if not isinstance(carried, (tuple, list)):
        raise RuntimeError(
            "while_loop: expected carried_inputs to be a tuple or list of tensors and ints, "
            f"got {type(carried).__name__}"
        )
    for k, v in enumerate(carried):
        if not isinstance(v, (Tensor, int)) or isinstance(v, bool):
            raise RuntimeError(
                f"while_loop: carried_inputs[{k}] is a {type(v).__name__}; each carried value "
                "must be a tensor or an int"
            )


def _check_body(out: Any, carried: Sequence[Any]) -> tuple[Any, ...]:
    if not isinstance(out, (tuple, list)):
        out = (out,)
    if len(out) != len(carried):
        raise RuntimeError(
            f"while_loop: body_fn returned {len(out)} values for {len(carried)} carried "
            "inputs; it must return one value per carried input"
        )
    for k, (new, old) in enumerate(zip(out, carried, strict=True)):
        if isinstance(old, Tensor):
            same = (
                isinstance(new, Tensor)
                and new.shape == old.shape
                and new.dtype == old.dtype
                and new.device == old.device
                and new.requires_grad == old.requires_grad
            )
            if not same:
                raise RuntimeError(
                    f"while_loop: body_fn's output {k} is {_describe(new)}, but the carried "
                    f"input it replaces is {_describe(old)}; each output must keep its "
                    "input's shape, dtype, device and requires_grad"
                )
            if new is old or (new._base is not None and new._base is old):
                raise RuntimeError(
                    f"while_loop: body_fn's output {k} is its input (or a view of it); "
                    "return a new tensor (clone it), as PyTorch refuses aliasing"
                )
        elif not isinstance(new, int) or isinstance(new, bool):
            raise RuntimeError(
                f"while_loop: body_fn's output {k} is {_describe(new)}, but the carried "
                "input it replaces is an int"
            )
    return tuple(out)


def _truth(pred: Any) -> bool:
    if isinstance(pred, Tensor):
        if pred.numel() != 1 or pred.dtype.is_floating_point or pred.dtype.is_complex:
            raise RuntimeError(
                "while_loop: cond_fn must return a bool or a boolean tensor with one "
                f"element, got {_describe(pred)}"
            )
        return bool(pred.item())
    if isinstance(pred, bool):
        return pred
    raise RuntimeError(
        f"while_loop: cond_fn must return a bool or a boolean tensor, got {type(pred).__name__}"
    )


class WhileLoopOp(HigherOrderOperator):
    """The ``while_loop`` operator (``ember.ops.higher_order.while_loop``)."""

    def __call__(
        self,
        cond_fn: Callable[..., Any],
        body_fn: Callable[..., Any],
        carried_inputs: Sequence[Any],
        additional_inputs: Sequence[Any] = (),
    ) -> tuple[Any, ...]:
        if not (callable(cond_fn) and callable(body_fn)):
            raise RuntimeError("while_loop: expected cond_fn and body_fn to be callable")
        _check_carried(carried_inputs)
        carried = tuple(carried_inputs)
        extra = tuple(additional_inputs)
        while _truth(cond_fn(*carried, *extra)):
            carried = _check_body(body_fn(*carried, *extra), carried)
        return carried


while_loop_op = WhileLoopOp("while_loop")


def while_loop(
    cond_fn: Callable[..., Any], body_fn: Callable[..., Any], carried_inputs: Sequence[Any]
) -> tuple[Any, ...]:
    """The carried values after looping ``body_fn`` while ``cond_fn`` holds (see the
    module)."""
    return while_loop_op(cond_fn, body_fn, carried_inputs)
