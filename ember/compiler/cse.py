"""Common subexpression elimination: a pure call repeated with the same arguments is
computed once.

Only calls with no effect beside their value (``effects.is_pure``: no writes, no random
numbers) are merged, and only when no node of the graph writes their value or any storage
their arguments share (NOTE [storage roots]): a value read before and after a write is two
values.

>>> g = ember.fx.Graph(); x = g.placeholder("x")
>>> a = g.call_function(ember.ops.aten.exp.default, (x,))
>>> b = g.call_function(ember.ops.aten.exp.default, (x,))
>>> _ = g.output((a, b))
>>> print(eliminate_common_subexpressions(g).find_nodes(op="output")[0].args)
((exp_default, exp_default),)
"""

from __future__ import annotations

from typing import Any

from ember.compiler.effects import is_pure, mutated_args, storage_roots
from ember.fx.graph import Graph
from ember.fx.node import Node


def _key(a: Any) -> Any:
    """A hashable key equal only for equal arguments (1, 1.0, True and -0.0 differ)."""
    if isinstance(a, Node):
        return ("node", id(a))
    if isinstance(a, (list, tuple)):
        return (type(a).__name__, tuple(_key(e) for e in a))
    if isinstance(a, dict):
        return ("dict", tuple((k, _key(v)) for k, v in a.items()))
    if type(a) is float:
        return ("float", repr(a))
    hash(a)  # unhashable: TypeError, the node is skipped
    return (type(a).__name__, a)


def eliminate_common_subexpressions(graph: Graph) -> Graph:
    """Merge each pure call into the first identical one (module docstring)."""
    nodes = list(graph.nodes)
    roots = storage_roots(nodes)
    written: set[Node] = set()
    for n in nodes:
        for m in mutated_args(n):
            written |= roots[m]
    seen: dict[Any, Node] = {}
    for n in nodes:
        if not is_pure(n) or roots[n] & written:
            continue
        if any(roots[a] & written for a in n.all_input_nodes):
            continue
        try:
            key = (
                n.op,
                n.target if n.op == "get_attr" else id(n.target),
                _key(n.args),
                _key(n.kwargs),
            )
        except TypeError:
            continue
        first = seen.get(key)
        if first is None:
            seen[key] = n
            continue
        n.replace_all_uses_with(first)
        graph.erase_node(n)
    return graph
