"""The traces ``ember.export`` makes: ``export``'s, and ``run_decompositions``'s pure one
(NOTE [export])."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ember._tensor import Tensor
from ember.fx.experimental.proxy_tensor import _trace, _Tracker
from ember.fx.graph_module import GraphModule

__all__ = ["trace", "trace_functional"]


def trace(
    fn: Callable[..., Any],
    inputs: Sequence[Any],
    names: list[str],
    pre_dispatch: bool,
    table: dict[Any, Callable[..., Any]] | None = None,
) -> tuple[GraphModule, Any]:
    """``fn(*inputs)`` traced on fake tensors (writes kept), placeholders named ``names``;
    at the pre-dispatch level, or below autograd with the decomposition ``table``."""
    tracker = _Tracker(dict(table or {}), False)
    gm, out, _ = _trace(fn, tuple(inputs), tracker, "fake", True, names, pre_dispatch)
    return gm, out


def trace_functional(
    fn: Callable[..., Any],
    inputs: Sequence[Tensor],
    names: list[str],
    table: dict[Any, Callable[..., Any]],
) -> tuple[GraphModule, list[int]]:
    """``fn(*inputs)`` (which returns a tuple) traced below autograd as pure ops (NOTE
    [functional tracing]) with the decomposition ``table``: a graph returning the new value
    of each input ``fn`` writes, in input order, then ``fn``'s outputs; and the positions
    of the written inputs. Dead ops are removed."""
    tracker = _Tracker(dict(table), True)
    gm, _, fakes = _trace(fn, tuple(inputs), tracker, "fake", True, names, False)
    g = gm.graph
    placeholders = [n for n in g.nodes if n.op == "placeholder"]
    written: list[int] = []
    for k, (real, fake, ph) in enumerate(zip(inputs, fakes, placeholders, strict=True)):
        if tracker.node_of(fake) is ph:
            continue
        if tuple(fake.shape) != tuple(real.shape) or fake.stride() != real.stride():
            raise NotImplementedError(
                f"run_decompositions: the program changes the shape or strides of input "
                f"'{names[k]}' in place (from {list(real.shape)} to {list(fake.shape)}); "
                "ember replays no metadata writes: write the new view to a new name"
            )
        written.append(k)
    output = next(n for n in g.nodes if n.op == "output")
    news = [tracker.node_of(fakes[k]) for k in written]
    output.args = ((*news, *output.args[0]),)
    g.eliminate_dead_code()
    gm.recompile()
    return gm, written
