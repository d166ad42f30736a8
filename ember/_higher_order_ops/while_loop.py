"""``while_loop(cond_fn, body_fn, carried_inputs)``: ``carried = body_fn(*carried)`` while
``cond_fn(*carried)``, as PyTorch's ``torch.while_loop``.

Eagerly the loop runs in Python (NOTE in ``base.py``): autograd records every iteration's
ops. Under ``make_fx`` and ``ember.export``, a loop over traced tensors is one
``while_loop`` node with the condition and the body as subgraphs (NOTE [higher-order ops in
graphs] in ``subgraph.py``), as in PyTorch's graphs; where autograd must see through it
(``ember.compile`` of a loop over tensors that require grad) the loop runs eagerly, so the
trace stops at the condition's read and the compiled function breaks the graph there. A
loop over Python ints is unrolled. As PyTorch's, the carried values are a tuple or list of
tensors and Python ints; ``cond_fn`` returns a bool or a one-element boolean tensor;
``body_fn`` returns as many values, each tensor with the shape, dtype and device of the one
it replaces (ints stay ints); a body that returns one of its inputs unchanged is refused,
as PyTorch refuses aliasing. A body returning one tensor bare makes ``while_loop`` return
it bare too, as PyTorch's (a body that never ran runs once on fake tensors to tell).

>>> i, x = ember.while_loop(
...     lambda i, x: i < 3, lambda i, x: (i + 1, x * 2), (ember.tensor(0), ember.ones(2))
... )
>>> i, x
(tensor(3), tensor([8., 8.]))
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ember._higher_order_ops.base import HigherOrderOperator, describe
from ember._higher_order_ops.subgraph import (
    Tracing,
    active_tracing,
    add_node,
    trace_functions,
)
from ember._subclasses.fake_tensor import FakeTensor, FakeTensorMode
from ember._tensor import Tensor
from ember.dtypes import bool_
from ember.utils._pytree import tree_unflatten

__all__ = ["while_loop", "while_loop_op"]


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
            )
            if not same:
                raise RuntimeError(
                    f"while_loop: body_fn's output {k} is {describe(new)}, but the carried "
                    f"input it replaces is {describe(old)}; each output must keep its "
                    "input's shape, dtype and device"
                )
            if new is old or (new._base is not None and new._base is old):
                raise RuntimeError(
                    f"while_loop: body_fn's output {k} is its input (or a view of it); "
                    "return a new tensor (clone it), as PyTorch refuses aliasing"
                )
        elif not isinstance(new, int) or isinstance(new, bool):
            raise RuntimeError(
                f"while_loop: body_fn's output {k} is {describe(new)}, but the carried "
                "input it replaces is an int"
            )
    return tuple(out)


def _truth(pred: Any) -> bool:
    if isinstance(pred, Tensor):
        if pred.numel() != 1 or pred.dtype.is_floating_point or pred.dtype.is_complex:
            raise RuntimeError(
                "while_loop: cond_fn must return a bool or a boolean tensor with one "
                f"element, got {describe(pred)}"
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
        return self.run(cond_fn, body_fn, carried_inputs, additional_inputs)[0]

    def run(
        self,
        cond_fn: Callable[..., Any],
        body_fn: Callable[..., Any],
        carried_inputs: Sequence[Any],
        additional_inputs: Sequence[Any] = (),
    ) -> tuple[tuple[Any, ...], bool]:
        """The carried values after the loop, and whether ``body_fn`` returns one value
        bare rather than in a tuple (the user's ``while_loop`` then does too, as PyTorch's;
        when the body never ran, it runs once on fake tensors to tell)."""
        if not (callable(cond_fn) and callable(body_fn)):
            raise RuntimeError("while_loop: expected cond_fn and body_fn to be callable")
        _check_carried(carried_inputs)
        carried = tuple(carried_inputs)
        extra = tuple(additional_inputs)
        if not any(isinstance(v, int) for v in carried):  # ints: unrolled (no symbolic ints)
            tracing = active_tracing(carried, extra)
            if tracing is not None:  # NOTE [higher-order ops in graphs]
                return self._trace(tracing, cond_fn, body_fn, carried, extra)
        bare = None
        while _truth(cond_fn(*carried, *extra)):
            out = body_fn(*carried, *extra)
            bare = not isinstance(out, (tuple, list))
            carried = _check_body(out, carried)
        if bare is None:  # the body never ran: its structure from a run on fake tensors,
            # and new tensors (as PyTorch's: the outputs never alias the inputs)
            with FakeTensorMode(allow_non_fake_inputs=True) as mode:
                fake = [mode.from_tensor(v) if isinstance(v, Tensor) else v for v in carried]
                bare = not isinstance(body_fn(*fake, *extra), (tuple, list))
            carried = tuple(v.clone() if isinstance(v, Tensor) else v for v in carried)
        return carried, bare

    def _trace(
        self,
        tracing: Tracing,
        cond_fn: Callable[..., Any],
        body_fn: Callable[..., Any],
        carried: tuple[Any, ...],
        extra: tuple[Any, ...],
    ) -> tuple[tuple[Any, ...], bool]:
        """Both functions traced into subgraphs, and one ``while_loop`` node (NOTE
        [higher-order ops in graphs]); what ``run`` returns."""
        fns = {"cond_fn": cond_fn, "body_fn": body_fn}
        (c, b), lifted = trace_functions(tracing, fns, (*carried, *extra), "while_loop")
        pred = tree_unflatten(c.out, c.spec)
        if not (isinstance(pred, Tensor) and pred.numel() == 1 and pred.dtype is bool_):
            raise RuntimeError(
                "while_loop: under tracing cond_fn must return a boolean tensor with one "
                f"element, got {describe(pred)}"
            )
        out = _check_body(tree_unflatten(b.out, b.spec), carried)
        additional = (*extra, *lifted)
        if not isinstance(pred, FakeTensor):  # a real trace goes on with the loop's values
            with tracing.off():
                out = self(c.gm, b.gm, carried, additional)
        graphs = {"while_loop_cond_graph": c.gm, "while_loop_body_graph": b.gm}
        add_node(tracing, self, graphs, [carried, additional], out)
        return tuple(out), isinstance(tree_unflatten(b.out, b.spec), Tensor)


while_loop_op = WhileLoopOp("while_loop")


def while_loop(
    cond_fn: Callable[..., Any], body_fn: Callable[..., Any], carried_inputs: Sequence[Any]
) -> Any:
    """The carried values after looping ``body_fn`` while ``cond_fn`` holds (see the
    module)."""
    carried, bare = while_loop_op.run(cond_fn, body_fn, carried_inputs)
    return carried[0] if bare else carried
