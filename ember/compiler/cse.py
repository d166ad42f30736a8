"""Common subexpression elimination: a pure call repeated with the same arguments is
computed once.

Only calls with no effect beside their value (``effects.is_pure``: no writes, no random
numbers) are merged, never a value some node writes, and only when no node wrote the
storage their arguments share (NOTE [storage roots]) between the two calls: a read before
and a read after a write are two values.

>>> from ember.compiler.cse import eliminate_common_subexpressions
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
    writes: dict[Node, int] = {}  # root -> writes to it so far: a read's "version"
    seen: dict[Any, Node] = {}
    for n in nodes:
        for m in mutated_args(n):
            for r in roots[m]:
                writes[r] = writes.get(r, 0) + 1
        if not is_pure(n) or roots[n] & written:  # a value that is written is not shared
            continue
        versions = tuple(
            writes.get(r, 0) for a in n.all_input_nodes for r in sorted(roots[a], key=id)
        )
        try:
            target = n.target if n.op == "get_attr" else id(n.target)
            key = (n.op, target, _key(n.args), _key(n.kwargs), versions)
        except TypeError:
            continue
        first = seen.get(key)
        if first is None:
            seen[key] = n
            continue
        n.replace_all_uses_with(first)
        graph.erase_node(n)
    return graph
