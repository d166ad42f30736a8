"""The dispatch trace of one training step: which aten ops each layer, the loss, the backward
pass and the optimizer dispatched, counted, and which backend key ran each.

It uses only ember's public extension API, as a user would: a boxed fallback registered with
``ember.library.Library("aten", "IMPL").fallback(fn, "Python")`` sees every op while the
Python key is in this thread's include set. It records the op and redispatches to the keys
below Python, so the step computes exactly what it would untraced. Autograd sits above Python,
so the trace shows the ops autograd hands down: forward ops, then the ops of the backward
formulas.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from ember import nn
from ember._tensor import Tensor
from ember.demo.modes import MODES
from ember.demo.text import join_wrapped
from ember.demo.train import train_step
from ember.dispatch.keys import DispatchKey, below, highest
from ember.dispatch.state import include_keys
from ember.library import Library
from ember.ops.registry import OpOverload
from ember.optim.optimizer import Optimizer

_BELOW = below(DispatchKey.Python)
PHASES = ("forward", "backward", "optimizer")


@dataclass
class Trace:
    """The op calls of one step in one mode: ``calls[(phase, where, op, kernel)] = count``,
    where ``where`` is the layer (``"1 Linear"``), ``"loss"``, ``"backward"`` or
    ``"optimizer"``, in first-call order."""

    mode: str
    calls: Counter[tuple[str, str, str, str]] = field(default_factory=Counter)
    phase: str = "forward"
    where: str = "forward"

    def record(self, op: OpOverload, ks: int, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """The boxed fallback: count ``op`` under the current phase, then run it below Python."""
        rest = ks & _BELOW
        self.calls[(self.phase, self.where, str(op), highest(rest).name)] += 1
        return op.redispatch(rest, *args, **kwargs)

    def totals(self) -> dict[str, int]:
        """Op calls per phase, e.g. ``{"forward": 11, "backward": 44, "optimizer": 18}``."""
        out = dict.fromkeys(PHASES, 0)
        for (phase, *_), n in self.calls.items():
            out[phase] += n
        return out


@contextmanager
def _at(trace: Trace, phase: str, where: str) -> Iterator[None]:
    old = trace.phase, trace.where
    trace.phase, trace.where = phase, where
    try:
        yield
    finally:
        trace.phase, trace.where = old


class _PhasedLoss:
    """The step's loss, wrapped so the trace files its ops under ``loss``."""

    def __init__(self, trace: Trace, loss_fn: nn.Module) -> None:
        self.trace, self.loss_fn = trace, loss_fn

    def __call__(self, logits: Tensor, y: Tensor) -> Tensor:
        with _at(self.trace, "forward", "loss"):
            return self.loss_fn(logits, y)


class _PhasedOptimizer:
    """The step's optimizer, wrapped so the trace knows the backward pass and the update."""

    def __init__(self, trace: Trace, opt: Optimizer) -> None:
        self.trace, self.opt = trace, opt

    def zero_grad(self) -> None:
        self.trace.phase = self.trace.where = "backward"  # from here on: the backward pass
        self.opt.zero_grad()

    def step(self) -> None:
        with _at(self.trace, "optimizer", f"optimizer ({type(self.opt).__name__})"):
            self.opt.step()


def trace_step(
    model: nn.Module, opt: Optimizer, x: Tensor, y: Tensor, mode: str = "eager"
) -> Trace:
    """Run one training step on ``(x, y)`` and return the aten ops it dispatched.

    >>> from ember.demo.trace import trace_step
    >>> m = ember.nn.Linear(4, 2); o = ember.optim.SGD(m.parameters(), lr=0.1)
    >>> t = trace_step(m, o, ember.ones(3, 4), ember.tensor([0, 1, 1]))
    >>> sorted({op for _, where, op, _ in t.calls if where == "0 Linear"})
    ['aten.addmm.default', 'aten.t.default']
    """
    trace = Trace(mode)
    children = list(model.named_children()) or [("0", model)]
    hooks = []
    for child, layer in children:
        label = f"{child} {type(layer).__name__}"
        hooks.append(layer.register_forward_pre_hook(_enter(trace, label)))
        hooks.append(layer.register_forward_hook(_leave(trace)))
    how = MODES[mode]
    run = how(model)
    if mode == "compiled":  # trace ahead of time now: the logging fallback below replaces
        run(how.move(x))  # the Python key's, which tracing needs; the step then runs compiled
    try:
        with Library("aten", "IMPL") as lib:
            lib.fallback(trace.record, "Python")
            with include_keys(1 << DispatchKey.Python):
                loss_fn = _PhasedLoss(trace, nn.CrossEntropyLoss())
                train_step(run, loss_fn, _PhasedOptimizer(trace, opt), x, how.move(y))
        how.end_step()
    finally:
        for h in hooks:
            h.remove()
    return trace


def _enter(trace: Trace, label: str) -> Any:
    def hook(module: nn.Module, args: Any) -> None:
        trace.where = label

    return hook


def _leave(trace: Trace) -> Any:
    def hook(module: nn.Module, args: Any, out: Any) -> None:
        trace.where = "forward"

    return hook


def short(op: str) -> str:
    """``aten.addmm.default`` -> ``addmm`` (overload kept when it is not ``default``).

    >>> from ember.demo.trace import short
    >>> short("aten.addmm.default"), short("aten.sum.dim_IntList")
    ('addmm', 'sum.dim_IntList')
    """
    name = op.removeprefix("aten.")
    return name.removesuffix(".default")


def layer_table(trace: Trace) -> list[str]:
    """One line per layer (then loss, backward, optimizer): the ops it dispatched, with
    counts above one, wrapped to fit 80 columns (with the caller's 2-space indent)."""
    per: dict[str, Counter[str]] = {}
    for (_, where, op, _), n in trace.calls.items():
        per.setdefault(where, Counter())[short(op)] += n
    width = max(len(w) for w in per)
    lines = []
    for where, ops in per.items():
        parts = [op if n == 1 else f"{op} x{n}" for op, n in ops.items()]
        wrapped = join_wrapped(parts, ", ", 76 - width)
        lines.append(f"{where:<{width}}  {wrapped[0]}")
        lines.extend(f"{'':<{width}}  {rest}" for rest in wrapped[1:])
    return lines


def op_table(traces: list[Trace]) -> list[str]:
    """One row per (mode, op): calls in the forward pass, the backward pass and the optimizer
    step, and the key whose kernel ran it."""
    rows: dict[tuple[str, str, str], Counter[str]] = {}
    for t in traces:
        for (phase, _, op, kernel), n in t.calls.items():
            rows.setdefault((t.mode, op, kernel), Counter())[phase] += n
    width = max(len(op) for _, op, _ in rows)
    mw = max(len("mode"), *(len(t.mode) for t in traces))
    head = f"{'mode':<{mw}} {'op':<{width}} {'fwd':>4} {'bwd':>4} {'opt':>4}  kernel"
    lines = [head, "-" * len(head)]
    # by mode, then by the first phase an op ran in, then in the order ops first ran
    first = {r: min(PHASES.index(p) for p in c) for r, c in rows.items()}
    for mode, op, kernel in sorted(rows, key=lambda r: (r[0], first[r])):
        c = rows[(mode, op, kernel)]
        counts = " ".join(f"{c[p] or '.':>4}" for p in PHASES)
        lines.append(f"{mode:<{mw}} {op:<{width}} {counts}  {kernel}")
    for t in traces:
        tot = t.totals()
        counts = " ".join(f"{tot[p]:>4}" for p in PHASES)
        lines.append(f"{t.mode:<{mw}} {'total':<{width}} {counts}")
    return lines
