"""Buffer reuse: a dead intermediate's array becomes the ``out=`` buffer of a later op with
the same shape, strides and dtype, so a chain of elementwise ops allocates one array.

NOTE [buffer reuse]
A donor is a value this graph computes into an array of its own with a direct NumPy call
(NOTE [direct numpy]) or a fused kernel, that the graph does not return; it is free after
the last node that reads it or any view of it (NOTE [storage roots]). A node the NumPy tier
writes with ``out=`` takes a free donor of its shape, strides and dtype; an elementwise
node may also take one of its own operands when that operand dies at it (NumPy computes an
elementwise op in place when the output is exactly an input). The node that took a buffer
is a donor in turn. So is an input the executor donated (nobody else holds its array: NOTE
[donated inputs] in ``ember/lazy/executor.py``): an elementwise update of a value whose old
value is dead, an optimizer's ``p.add_(g)`` recorded as ``add`` by the Functionalize key,
writes its input in place (counted in ``inplace_updates``); an input that could be taken so
is marked ``wants_donation``, for the executor to offer. Shapes are compared as recorded: a
graph key includes which values have equal shapes (NOTE [shape classes] in
``ember/lazy/executor.py``), so the choice holds for every run of the compiled graph.
``buffers_reused`` counts the buffers given.

>>> from ember.compiler import graph_meta
>>> from ember.compiler.buffers import reuse_buffers
>>> g = ember.fx.Graph(); x = g.placeholder("x")
>>> x.meta["tensor_meta"] = graph_meta.tensor_meta((4,), (1,), np.dtype("float32"))
>>> a = g.call_function(ember.ops.aten.exp.default, (x,))
>>> b = g.call_function(ember.ops.aten.neg.default, (a,))
>>> a.meta["tensor_meta"] = b.meta["tensor_meta"] = x.meta["tensor_meta"]
>>> _ = g.output(b)
>>> reuse_buffers(g).find_nodes(op="call_function")[1].meta["out"]
exp_default
"""

from __future__ import annotations

from typing import Any

import numpy as np  # noqa: F401  (the docstring's example)

from ember.compiler import (
    metrics,
    numpy_ops,  # noqa: F401
)
from ember.compiler.effects import output_roots, storage_roots
from ember.fx.graph import Graph
from ember.fx.node import Node


def _meta_key(n: Node) -> Any:
    tm = n.meta.get("tensor_meta")
    if tm is None or not hasattr(tm, "shape"):
        return None
    return (tuple(tm.shape), tuple(tm.stride), tm.dtype)


def _direct(n: Node, with_out: bool) -> bool:
    """The NumPy tier writes ``n`` as a direct call (taking ``out=``, if asked)."""
    emitter = numpy_ops.EMITTERS.get(n.target)
    if emitter is None or (with_out and n.target not in numpy_ops.TAKES_OUT):
        return False
    return emitter(numpy_ops.Source(n, lambda a: "_"), "_" if with_out else None) is not None


def direct_with_out(n: Node) -> bool:
    """The NumPy tier writes ``n`` as an elementwise direct call that can take ``out=`` (so
    buffer reuse can write it into a dead operand)."""
    return n.op == "call_function" and n.target in numpy_ops.ELEMENTWISE_OUT and _direct(n, True)


def _fresh(n: Node) -> bool:
    """``n``'s value is an array of its own made by a direct call or a fused kernel."""
    if n.op != "call_function":
        return False
    if getattr(n.target, "fused", False):
        return True
    return n.target in numpy_ops.FRESH and _direct(n, False)


def reuse_buffers(graph: Graph) -> Graph:
    """Give ops dead buffers to write into (NOTE [buffer reuse])."""
    nodes = list(graph.nodes)
    roots = storage_roots(nodes)
    kept = output_roots(nodes, roots)
    last: dict[Node, int] = {}
    for k, n in enumerate(nodes):
        for a in n.all_input_nodes:
            for r in roots[a]:
                last[r] = k
    donors = {
        n
        for n in nodes
        if n not in kept
        and roots[n] == {n}
        and _meta_key(n) is not None
        and (_fresh(n) or n.meta.get("donated"))
    }
    position = {n: k for k, n in enumerate(nodes)}
    release: dict[int, list[Node]] = {}
    for d in donors:
        release.setdefault(last.get(d, position[d]), []).append(d)
    free: dict[Any, list[Node]] = {}
    given = updates = 0
    for k, n in enumerate(nodes):
        key = _meta_key(n)
        if key is not None and n.op == "call_function" and _direct(n, True):
            take = None
            if n.target in numpy_ops.ELEMENTWISE_OUT:
                for a in n.all_input_nodes:
                    if (
                        a in donors
                        and last.get(a) == k
                        and _meta_key(a) == key
                        and a in release.get(k, ())
                    ):
                        take = a
                        release[k].remove(a)
                        if a.op == "placeholder":  # an update of a dead input: in place
                            updates += 1
                        break
                    if (
                        a.op == "placeholder"
                        and a not in kept
                        and roots[a] == {a}
                        and last.get(a) == k
                        and _meta_key(a) == key
                    ):
                        a.meta["wants_donation"] = True  # the executor may offer it
            if take is None and free.get(key):
                take = free[key].pop()
            if take is not None:
                n.meta["out"] = take
                given += 1
        for d in release.get(k, ()):
            free.setdefault(_meta_key(d), []).append(d)
    if given:
        metrics.count("buffers_reused", given)
    if updates:
        metrics.count("inplace_updates", updates)
    return graph
