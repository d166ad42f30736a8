"""``cond(pred, true_fn, false_fn, operands)``: ``true_fn(*operands)`` if ``pred`` else
``false_fn(*operands)``, as PyTorch's ``torch.cond``.

Eagerly ``pred`` (a bool or a one-element tensor) is read and one branch runs, so autograd,
subclasses and modes see that branch's ops. Under ``make_fx`` and ``ember.export``, a
predicate the trace computed makes one ``cond`` node with both branches as subgraphs
(NOTE [higher-order ops in graphs] in ``subgraph.py``), as in PyTorch's graphs; where
autograd must see through it (``ember.compile`` over tensors that require grad) the branch
taken runs, so the trace stops at the predicate's read and the compiled function breaks the
graph there (NOTE [ember.compile]). ``cond_op`` is the operator object itself: wrapper
subclasses compare the ``func`` their handler gets with it (PyTorch's ``two_tensor.py``).

>>> from ember._higher_order_ops.cond import cond
>>> cond(ember.tensor(True), lambda x: x + 1, lambda x: x - 1, (ember.zeros(2),))
tensor([1., 1.])
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import nullcontext
from typing import Any

from ember._higher_order_ops.base import HigherOrderOperator, describe
from ember._higher_order_ops.cond_autograd import branch_values, traced_cond_with_grad
from ember._higher_order_ops.subgraph import (
    Tracing,
    active_tracing,
    add_node,
    needs_grad,
    trace_functions,
)
from ember._tensor import Tensor
from ember.autograd.grad_mode import no_grad
from ember.utils._pytree import tree_unflatten

__all__ = ["cond", "cond_op"]


class CondOp(HigherOrderOperator):
    """The ``cond`` operator (``ember.ops.higher_order.cond``)."""

    def __call__(
        self, pred: Any, true_fn: Callable[..., Any], false_fn: Callable[..., Any], operands: Any
    ) -> Any:
        if not (callable(true_fn) and callable(false_fn)):
            raise RuntimeError("cond: expected true_fn and false_fn to be callable")
        if not isinstance(operands, (tuple, list)):
            raise RuntimeError(
                f"cond: expected operands to be a tuple or list, got {type(operands).__name__}"
            )
        if isinstance(pred, Tensor):
            if pred.numel() != 1:
                raise RuntimeError(
                    f"cond: expected pred to be a bool or a tensor with a single item, got a "
                    f"tensor of shape {tuple(pred.shape)}"
                )
            tracing = active_tracing([pred], operands, through_autograd=True)
            if tracing is not None:  # a traced predicate: NOTE [higher-order ops in graphs]
                return self._trace(tracing, pred, true_fn, false_fn, operands)
            take = bool(pred.item())
        elif isinstance(pred, (bool, int)):
            take = bool(pred)
        else:
            raise RuntimeError(
                f"cond: expected pred to be a bool or a tensor with a single item, got "
                f"{type(pred).__name__}"
            )
        return (true_fn if take else false_fn)(*operands)

    def _trace(
        self,
        tracing: Tracing,
        pred: Tensor,
        true_fn: Callable[..., Any],
        false_fn: Callable[..., Any],
        operands: Any,
    ) -> Any:
        """Both branches traced into subgraphs, and one ``cond`` node (NOTE [higher-order
        ops in graphs])."""
        grads = not tracing.pre_dispatch and needs_grad([pred, *operands])
        with no_grad() if grads else nullcontext():  # (autograd sees the node, not its ops)
            (t, f), lifted = trace_functions(
                tracing, {"true_fn": true_fn, "false_fn": false_fn}, operands, "cond"
            )
        if len(t.out) != len(f.out) or t.spec != f.spec:
            raise RuntimeError(
                f"cond: true_fn returns {len(t.out)} values ({t.spec}) but false_fn "
                f"returns {len(f.out)} ({f.spec}); both branches must return the same "
                "structure of tensors"
            )
        for k, (a, b) in enumerate(zip(t.out, f.out, strict=True)):
            if not (isinstance(a, Tensor) and isinstance(b, Tensor)):
                other = b if isinstance(a, Tensor) else a
                raise RuntimeError(
                    f"cond: output {k} of a branch is a {type(other).__name__}; under "
                    "tracing both branches must return tensors"
                )
            if a.shape != b.shape or a.dtype != b.dtype or a.device != b.device:
                raise RuntimeError(
                    f"cond: output {k} is {describe(a)} from true_fn but {describe(b)} "
                    "from false_fn; both branches must give each output the same shape, "
                    "dtype and device"
                )
        inputs = [*operands, *lifted]
        if grads or needs_grad(lifted):  # NOTE [autograd through cond]
            out = traced_cond_with_grad(self, tracing, (t, f), pred, inputs)
            return tree_unflatten(out, t.spec)
        out = branch_values(pred, t, f)
        graphs = {"true_graph": t.gm, "false_graph": f.gm}
        add_node(tracing, self, graphs, [inputs], out, lead=[pred])
        return tree_unflatten(list(out), t.spec)


cond_op = CondOp("cond")


def cond(
    pred: Any,
    true_fn: Callable[..., Any],
    false_fn: Callable[..., Any],
    operands: tuple[Any, ...] | list[Any] = (),
) -> Any:
    """``true_fn(*operands)`` if ``pred`` else ``false_fn(*operands)`` (see the module)."""
    return cond_op(pred, true_fn, false_fn, operands)
