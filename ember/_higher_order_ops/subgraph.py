"""Tracing a higher-order operator's functions into graphs of their own, for ``make_fx``.

# NOTE [higher-order ops in graphs]
Under ``make_fx`` (and so ``ember.export``), a ``cond`` whose predicate the trace computed,
or a ``while_loop`` over traced values, cannot run one branch or unroll the loop: which
branch, how many iterations, depends on the values. As PyTorch's tracer does, each function
it takes is traced into a ``GraphModule`` of its own (``true_graph_0``, ``false_graph_0``,
``while_loop_cond_graph_0``, ``while_loop_body_graph_0``), registered on the graph's root,
and the operator becomes one ``call_function`` node taking those graphs and its operands
(``ember.ops.higher_order.cond(pred, true_graph_0, false_graph_0, (x_1, ...))``); running
the graph runs the operator eagerly on the subgraphs.

Each subgraph takes the operands, then every tensor its function reads from outside them
(a closure's, a global's, another traced value: *lifted*, in the same order for all the
operator's functions, so that the node passes the same operands to each), and returns a
flat tuple of tensors (``cond``) or the predicate (a ``while_loop``'s condition). The
functions must be pure, as PyTorch's require: writing an operand in place, returning an
operand (or a view of it) unchanged, and branches whose outputs differ in number, shape or
dtype are refused with an error saying so. The values the trace goes on with are computed
as eagerly (the branch taken, the loop run) in a real trace, and the first branch's (the
body's) outputs in a fake one.

Autograd sees through a ``cond`` node (NOTE [autograd through cond] in
``cond_autograd.py``). Not yet through a ``while_loop``: when a carried value requires
grad under grad mode, the loop runs eagerly (a data-dependent condition then stops the
trace, and ``ember.compile`` breaks the graph there).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from typing import Any

from ember._tensor import Tensor
from ember.dispatch import state
from ember.fx.experimental._pre_dispatch import PreDispatchTracer, recording_tracer
from ember.fx.experimental.proxy_tensor import (
    ProxyTorchDispatchMode,
    _snapshot,
    _Tracing,
    _Tracker,
)
from ember.fx.graph_module import GraphModule
from ember.fx.node import Node
from ember.ops.writes import written_tensors
from ember.utils._python_dispatch import _get_current_dispatch_mode, _pop_mode_temporarily
from ember.utils._pytree import tree_flatten

__all__ = [
    "Subgraph",
    "Tracing",
    "active_tracing",
    "add_node",
    "needs_grad",
    "trace_functions",
]


class Tracing:
    """The trace a higher-order operator is called under: ``make_fx``'s default tracer (a
    dispatch mode) or its pre-dispatch one (``ember.export``'s), with how to trace a
    subgraph under it (``into``) and how to compute values it does not record (``off``)."""

    def __init__(self, tracker: _Tracker, pre_dispatch: bool) -> None:
        self.tracker = tracker
        self.pre_dispatch = pre_dispatch

    def into(self, sub: _Tracker) -> ExitStack:
        """A block recording into ``sub`` (and not into this trace's graph)."""
        stack = ExitStack()
        if self.pre_dispatch:
            stack.enter_context(_Tracing(sub))
            stack.enter_context(PreDispatchTracer(sub))
        else:
            stack.enter_context(_pop_mode_temporarily())
            stack.enter_context(_Tracing(sub))
            stack.enter_context(ProxyTorchDispatchMode(sub))
        return stack

    def off(self) -> Any:
        """A block whose ops this trace does not record."""
        if self.pre_dispatch:
            return PreDispatchTracer.paused()
        return _pop_mode_temporarily()


def needs_grad(values: Sequence[Any]) -> bool:
    """Whether autograd must see through an operator over ``values`` now: grad mode is on
    and one of them requires grad.

    >>> from ember._higher_order_ops.subgraph import needs_grad
    >>> needs_grad([ember.ones(1, requires_grad=True)]), needs_grad([ember.ones(1)])
    (True, False)
    """
    return state.local.grad_enabled and any(
        isinstance(v, Tensor) and v.requires_grad for v in values
    )


def active_tracing(
    triggers: Sequence[Any], values: Sequence[Any], through_autograd: bool = False
) -> Tracing | None:
    """The ``make_fx`` trace that computed one of the tensors ``triggers`` (a predicate,
    a loop's carried values) and records the ops now; None when there is none, or when one
    of ``values`` needs autograd below the trace and the operator cannot give it
    (``through_autograd``: it can, NOTE [autograd through cond]): the operator then runs
    eagerly."""
    tracer: Any = recording_tracer()
    pre_dispatch = tracer is not None
    if not pre_dispatch:
        tracer = _get_current_dispatch_mode()
        if type(tracer) is not ProxyTorchDispatchMode:
            return None
    tracker = tracer.tracker
    if not any(
        isinstance(t, Tensor) and tracker.tracks(t) and id(t) not in tracker.constants
        for t in triggers
    ):
        return None
    if (
        not pre_dispatch  # a pre-dispatch graph is above autograd: it runs below, per op
        and not through_autograd
        and needs_grad((*triggers, *values))
    ):
        return None  # NOTE [higher-order ops in graphs]: autograd through them is to come
    return Tracing(tracker, pre_dispatch)


class _SubTracker(_Tracker):
    """A subgraph's trace: a tensor it did not receive is lifted (NOTE [higher-order ops in
    graphs]) into ``lifted``, a placeholder of its own; a write into an operand is refused."""

    def __init__(self, parent: _Tracker, lifted: list[Tensor], what: str) -> None:
        super().__init__(parent.decomposition_table, parent.functionalize)
        self.lifted = lifted
        self.what = what
        self.check_inputs = True

    def constant(self, t: Tensor) -> Node:
        if not any(x is t for x in self.lifted):
            self.lifted.append(t)
        ph = self.graph.placeholder(f"lifted{len(self.lifted)}")
        ph.meta["val"] = _snapshot(t)
        self.bind(t, ph)
        return ph

    def check_write(self, func: Any, args: Any, kwargs: dict[str, Any]) -> None:
        for w in written_tensors(func, args, kwargs):
            if isinstance(w, Tensor) and id(self.base_of(w)) in self.inputs:
                raise RuntimeError(
                    f"{self.what}: {func} writes an operand of shape {tuple(w.shape)} in "
                    "place; the functions a higher-order operator takes must not change "
                    "their inputs (as PyTorch's): write into a clone instead"
                )


@dataclass
class Subgraph:
    """One function traced: its graph, the values it returned (flat) and their structure."""

    gm: GraphModule
    out: list[Any]
    spec: Any


def _trace_one(
    tracing: Tracing,
    role: str,
    fn: Callable[..., Any],
    operands: Sequence[Any],
    lifted: list[Tensor],
    what: str,
) -> Subgraph | None:
    """``fn`` traced on ``operands`` then ``lifted``; None when it lifted a new tensor. The
    graph returns a tuple, or a lone tensor as ``fn`` does when ``role`` is ``cond_fn`` (a
    loop's condition, as PyTorch's graphs)."""
    sub = _SubTracker(tracing.tracker, lifted, what)
    g = sub.graph
    for i, a in enumerate([*operands, *lifted]):
        ph = g.placeholder(f"arg{i}_1")
        ph.meta["val"] = _snapshot(a) if isinstance(a, Tensor) else a
        if isinstance(a, Tensor) and not sub.tracks(a):
            sub.bind(a, ph)
            sub.inputs.add(id(a))
    known = len(lifted)
    with tracing.into(sub):
        out = fn(*operands)
    if len(lifted) != known:
        return None
    flat, spec = tree_flatten(out)
    for k, o in enumerate(flat):
        if isinstance(o, Tensor) and (sub.tracks(o) and id(sub.base_of(o)) in sub.inputs):
            raise RuntimeError(
                f"{what}: {role} returns an operand (or a "
                f"view of one) as its output {k}; a higher-order operator's functions must "
                "not alias their inputs (as PyTorch's): return a clone"
            )
    outs = tuple(sub.node_of(o) if isinstance(o, Tensor) else o for o in flat)
    g.output(outs[0] if role == "cond_fn" and isinstance(out, Tensor) else outs)
    return Subgraph(GraphModule(sub.root, g), flat, spec)


def trace_functions(
    tracing: Tracing, fns: dict[str, Callable[..., Any]], operands: Sequence[Any], what: str
) -> tuple[list[Subgraph], list[Tensor]]:
    """Each of ``fns`` (by role: ``true_fn``...) traced on ``operands``, all taking the
    same lifted tensors after them (returned second): traced again with all of them when
    one function lifted a tensor another did not know of."""
    lifted: list[Tensor] = []
    while True:
        subs = [_trace_one(tracing, r, fn, operands, lifted, what) for r, fn in fns.items()]
        if all(s is not None for s in subs):
            return subs, lifted  # type: ignore[return-value]


def add_node(
    tracing: Tracing,
    op: Any,
    graphs: dict[str, GraphModule],
    operands: Sequence[Sequence[Any]],
    out: Any,
    lead: Sequence[Any] = (),
) -> None:
    """The operator's node in ``tracker``'s graph: ``op(*lead, *graphs, *operands)``, each
    graph registered on the root under a free name (``true_graph_0``), each operand group a
    tuple; ``out`` (a tuple of tensors) is what the node computes."""
    tracker = tracing.tracker
    g = tracker.graph
    attrs = []
    for base, gm in graphs.items():
        k = 0
        while f"{base}_{k}" in tracker.root:
            k += 1
        name = f"{base}_{k}"
        tracker.root[name] = gm
        attrs.append(g.get_attr(name))
    args = (
        *(tracker.arg(a) for a in lead),
        *attrs,
        *(tuple(tracker.arg(a) for a in group) for group in operands),
    )
    node = g.call_function(op, args, name=op.name())
    tracker.track(tuple(out), node)
