"""Constant folding: a pure call whose inputs are all constants is computed once, when the
graph is compiled, and becomes a constant of the module (a ``get_attr`` node).

Constants are ``get_attr`` nodes (but live ones: NOTE [live constants]) and pure calls
(``effects.is_pure``: no writes, no random numbers) with no placeholder among their inputs
(a factory such as ``zeros([3])``, or ops on constants), whose storage no node of the graph
writes (a copy an op writes is not one).
Only the constants that a non-constant node or the output reads are kept; the rest go with
dead code elimination. A folded value the graph returns is copied on the way out, so a
caller never holds (and writes) the module's constant.

# NOTE [live constants]
A ``get_attr`` whose node has ``meta["live"]`` holds a tensor the user still holds and may
write between calls (what ``ember.compile`` traced from a closure or a global: its array,
read at each call), so nothing computed from it is folded; before, a compiled function of
a closure's tensor alone returned its value at compile time forever.

>>> from ember.compiler.constant_folding import fold_constants
>>> g = ember.fx.Graph(); x = g.placeholder("x")
>>> two = g.call_function(ember.ops.aten.full.default, ([2], 2.0))
>>> _ = g.output(g.call_function(ember.ops.aten.mul.Tensor, (x, two)))
>>> gm = ember.fx.GraphModule({}, g)
>>> [n.op for n in fold_constants(g).nodes]
['placeholder', 'get_attr', 'call_function', 'output']
>>> _ = gm.recompile(); gm(ember.ones(2))
tensor([2., 2.])
"""

from __future__ import annotations

from typing import Any

from ember.compiler import array_ops, metrics
from ember.compiler.effects import is_pure, mutated_args, storage_roots
from ember.compiler.interpreter_tier import ArrayInterpreter
from ember.fx.graph import Graph
from ember.fx.interpreter import Interpreter
from ember.fx.node import Node
from ember.ops.registry import ops


def fold_constants(graph: Graph) -> Graph:
    """Compute constant subgraphs now (module docstring); needs ``graph.owning_module``."""
    gm = graph.owning_module
    if gm is None:
        return graph
    arrays = bool(getattr(gm, "meta", {}).get("arrays"))
    nodes = list(graph.nodes)
    roots = storage_roots(nodes)
    written: set[Node] = set()  # a value some node writes is not a constant
    for n in nodes:
        for m in mutated_args(n):
            written |= roots[m]
    constant: set[Node] = set()
    for n in nodes:
        if roots[n] & written:
            continue
        if n.op == "get_attr":
            if not n.meta.get("live"):
                constant.add(n)
        elif n.op == "call_function" and is_pure(n):
            if all(a in constant for a in n.all_input_nodes):
                constant.add(n)
    folds = [
        n for n in graph.nodes
        if n in constant and n.op == "call_function"
        and any(u not in constant or u.op == "output" for u in n.users)
    ]  # fmt: skip
    if not folds:
        return graph
    values = _evaluate(gm, [n for n in graph.nodes if n in constant], arrays)
    for k, n in enumerate(folds):
        name = f"_folded_{k}"
        while hasattr(gm, name):
            name += "_"
        setattr(gm, name, values[n])
        with graph.inserting_before(n):
            attr = graph.get_attr(name)
        attr.meta = dict(n.meta)
        attr.meta["folded"] = True
        n.replace_all_uses_with(attr)
    metrics.count("constants_folded", len(folds))
    graph.eliminate_dead_code()
    _copy_returned_constants(graph, arrays)
    return graph


def _evaluate(gm: Any, nodes: list[Node], arrays: bool) -> dict[Node, Any]:
    interp = ArrayInterpreter(gm) if arrays else Interpreter(gm, garbage_collect_values=False)
    for n in nodes:
        interp.env[n] = interp.run_node(n)
    return interp.env


def _copy_returned_constants(graph: Graph, arrays: bool) -> None:
    """A returned value sharing a folded constant's storage is copied first."""
    nodes = list(graph.nodes)
    roots = storage_roots(nodes)
    out = next(n for n in nodes if n.op == "output")
    for a in out.all_input_nodes:
        if any(r.op == "get_attr" and r.meta.get("folded") for r in roots[a]):
            with graph.inserting_before(out):
                if arrays:
                    c = graph.call_function(array_ops.copy, (a,), name="copy")
                else:
                    c = graph.call_function(ops.aten.clone.default, (a,), name="clone")
            c.meta = dict(a.meta)
            out.replace_input_with(a, c)
