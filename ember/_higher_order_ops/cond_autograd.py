"""Autograd through a traced ``cond`` node (NOTE [autograd through cond]).

# NOTE [autograd through cond]
Under ``make_fx`` a ``cond`` on a traced predicate is one node with both branches as
subgraphs (NOTE [higher-order ops in graphs] in ``subgraph.py``). When its operands need
gradients (the joint graph of ``aot_function``, ``ember.compile`` over tensors that
require grad), the node becomes the forward of an ``autograd.Function``, as PyTorch's
``CondAutogradOp``:

- forward: the branches traced into ``true_graph``/``false_graph`` (the tensors they read
  from outside lifted as operands, so gradients reach a closure's weight), and the
  ``cond`` node, recorded with grad mode off;
- backward: another ``cond`` on the same predicate, whose branches are each branch's
  vector-Jacobian product (``true_graph`` run again with grad on, then
  ``autograd.grad``), taking the operands, the lifted tensors and the output gradients,
  and returning one gradient per operand (zeros where a branch does not use one, so both
  branches return the same structure). The backward graph thus holds a ``cond`` too, and
  the partitioner saves the predicate and the operands for it.

So the graph keeps one branch per value of the predicate and a compiled function need not
break at it: whichever branch the predicate picks at run time, forward and backward agree.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ember._higher_order_ops.subgraph import Subgraph, Tracing, add_node
from ember._subclasses.fake_tensor import FakeTensor
from ember._tensor import Tensor
from ember.autograd.api import grad
from ember.autograd.function import Function
from ember.autograd.grad_mode import enable_grad

__all__ = ["branch_values", "traced_cond_with_grad"]


def _vjp(gm: Any, n_in: int, wanted: tuple[bool, ...]) -> Callable[..., tuple[Tensor, ...]]:
    """A branch's vector-Jacobian product: ``(*inputs, *grads) ->`` a gradient per tensor
    input (zeros for one not ``wanted`` or not used; non-tensor inputs get none, since a
    branch returns tensors only)."""

    def vjp(*args: Any) -> tuple[Tensor, ...]:
        inputs, grads = args[:n_in], args[n_in:]
        with enable_grad():
            xs = [
                x.detach().requires_grad_(True) if w else x
                for x, w in zip(inputs, wanted, strict=True)
            ]
            outs = gm(*xs)
            outs = outs if isinstance(outs, (tuple, list)) else (outs,)
            pairs = [(o, g) for o, g in zip(outs, grads, strict=True) if o.requires_grad]
            diff = [x for x, w in zip(xs, wanted, strict=True) if w]
            found = (
                grad([o for o, _ in pairs], diff, [g for _, g in pairs], allow_unused=True)
                if pairs and diff
                else [None] * len(diff)
            )
        it = iter(found)
        result = []
        for x, w in zip(inputs, wanted, strict=True):
            g = next(it) if w else None
            if isinstance(x, Tensor):
                # a clone: a branch's output must not alias its inputs (NOTE
                # [higher-order ops in graphs]); a gradient may be an output's passed on
                result.append(x.new_zeros(x.shape) if g is None else g.clone())
        return tuple(result)

    return vjp


def branch_values(pred: Tensor, t: Subgraph, f: Subgraph) -> list[Any]:
    """The values a trace goes on with after a ``cond`` node: in a fake trace the
    metadata both branches share (the true branch's), in a real one the values of the
    branch taken."""
    taken = isinstance(pred, FakeTensor) or bool(np.asarray(pred._edata).item())
    return t.out if taken else f.out


#: in ``ctx.inputs``, where a tensor input was (it is in ``ctx.saved_tensors``)
_SAVED = object()


class _CondAutograd(Function):
    """A traced ``cond`` node as an autograd ``Function`` (NOTE [autograd through
    cond])."""

    @staticmethod
    def forward(  # type: ignore[override]
        ctx: Any,
        op: Any,
        tracing: Tracing,
        subs: tuple[Subgraph, Subgraph],
        pred: Tensor,
        *inputs: Any,
    ) -> tuple[Tensor, ...]:
        t, f = subs
        out = branch_values(pred, t, f)
        graphs = {"true_graph": t.gm, "false_graph": f.gm}
        add_node(tracing, op, graphs, [list(inputs)], out, lead=[pred])
        ctx.save_for_backward(pred, *(x for x in inputs if isinstance(x, Tensor)))
        ctx.inputs = [_SAVED if isinstance(x, Tensor) else x for x in inputs]
        ctx.op, ctx.graphs = op, (t.gm, f.gm)
        return tuple(out)

    @staticmethod
    def backward(ctx: Any, *grads: Any) -> tuple[Any, ...]:
        pred, *tensors = ctx.saved_tensors
        it = iter(tensors)
        inputs = [next(it) if x is _SAVED else x for x in ctx.inputs]
        wanted = tuple(
            bool(n) and isinstance(x, Tensor) and x.is_floating_point()
            for n, x in zip(ctx.needs_input_grad[4:], inputs, strict=True)
        )
        t, f = ctx.graphs
        n = len(inputs)
        found = ctx.op(pred, _vjp(t, n, wanted), _vjp(f, n, wanted), (*inputs, *grads))
        found = iter(found if isinstance(found, (tuple, list)) else (found,))
        picked: list[Any] = []
        for x, w in zip(inputs, wanted, strict=True):
            g = next(found) if isinstance(x, Tensor) else None  # (one per tensor input)
            picked.append(g if w else None)
        return (None, None, None, None, *picked)


def traced_cond_with_grad(
    op: Any,
    tracing: Tracing,
    subs: tuple[Subgraph, Subgraph],
    pred: Tensor,
    inputs: Sequence[Any],
) -> list[Tensor]:
    """The ``cond`` node (``op``) of ``subs`` (traced on ``inputs``: the operands, then
    the lifted tensors), recorded so that autograd sees through it (NOTE [autograd through
    cond])."""
    return list(_CondAutograd.apply(op, tracing, subs, pred, *inputs))
