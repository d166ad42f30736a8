"""Splitting a joint forward+backward graph into a forward and a backward graph, as
``torch._functorch.partitioners``.

# NOTE [partitioners]
The joint graph's placeholders are the primals (``primals_<i>``) and the tangents
(``tangents_<i>``); its output is the forward's outputs (the first ``num_fwd_outputs``)
followed by the gradients. Both partitioners return ``(forward, backward)`` modules: the
forward computes its outputs and then the *saved values*; the backward takes the saved values
and the tangents and returns the gradients.

- ``default_partition``: the forward is every node its outputs need; a forward node that the
  backward also reads is saved. Nothing is recomputed.
- ``min_cut_rematerialization_partition``: what to save is a minimum cut (networkx max-flow)
  of the graph of nodes the backward needs, each node split into an in and an out half joined
  by an edge weighing its output's bytes. The source feeds the primals and every node that
  must not be recomputed (not pointwise, not a view: ``mm``, reductions, random ops); the
  sink takes every node that depends on a tangent. A cut edge is a saved value; forward nodes
  on the sink side of the cut are recomputed in the backward from saved ones, so a chain of
  cheap pointwise ops saves its input instead of each intermediate.

>>> from ember.aot import aot_function, min_cut_rematerialization_partition
>>> seen = []
>>> def fw(gm, inputs):
...     seen.append(len(gm.graph.find_nodes(op="output")[0].args[0]))
...     return gm
>>> f = aot_function(lambda x: x.sin().cos().sum(), fw, fw,
...                  partition_fn=min_cut_rematerialization_partition)
>>> f(ember.ones(4, requires_grad=True)).backward()
>>> seen  # forward: the output and one saved value (x; sin(x) is recomputed); backward: 1
[2, 1]
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from ember.fx.graph import Graph
from ember.fx.graph_module import GraphModule
from ember.fx.node import Node, is_random
from ember.ops.registry import OpOverload

__all__ = ["default_partition", "min_cut_rematerialization_partition", "saved_bytes"]


def _outputs(gm: GraphModule) -> list[Any]:
    out = next(n for n in gm.graph.nodes if n.op == "output")
    res = out.args[0]
    return list(res) if isinstance(res, (tuple, list)) else [res]


def _is_tangent(n: Node) -> bool:
    return n.op == "placeholder" and str(n.target).startswith("tangents")


def _ancestors(roots: Iterable[Any], stop: Iterable[Node] = ()) -> set[Node]:
    seen: set[Node] = set(stop)
    stack = [r for r in roots if isinstance(r, Node)]
    while stack:
        n = stack.pop()
        if n in seen:
            continue
        seen.add(n)
        stack.extend(n.all_input_nodes)
    return seen - set(stop) if stop else seen


def _extract(joint: GraphModule, inputs: list[Node], outputs: list[Any], name: str) -> GraphModule:
    """A module computing ``outputs`` from ``inputs`` with the joint graph's nodes."""
    g = Graph()
    env: dict[Node, Node] = {}
    for n in inputs:
        ph = g.placeholder(n.name)
        ph.meta = dict(n.meta)
        env[n] = ph
    needed = _ancestors(outputs, inputs)
    for n in joint.graph.nodes:
        if n in env or n not in needed or n.op == "output":
            continue
        if n.op == "placeholder":
            raise RuntimeError(
                f"partition: the {name} graph needs {n.name}, which is not among its inputs"
            )
        env[n] = g.node_copy(n, lambda x: env[x])
    g.output(tuple(env[o] if isinstance(o, Node) else o for o in outputs))
    root = {str(n.target): _attr(joint, str(n.target)) for n in g.nodes if n.op == "get_attr"}
    return GraphModule(root, g)


def _attr(gm: GraphModule, path: str) -> Any:
    value: Any = gm
    for part in path.split("."):
        value = getattr(value, part)
    return value


def _split(
    joint: GraphModule, saved: list[Node], num_fwd_outputs: int
) -> tuple[GraphModule, GraphModule]:
    outs = _outputs(joint)
    fwd_outs, bwd_outs = outs[:num_fwd_outputs], outs[num_fwd_outputs:]
    primals = [n for n in joint.graph.nodes if n.op == "placeholder" and not _is_tangent(n)]
    tangents = [n for n in joint.graph.nodes if _is_tangent(n)]
    fw = _extract(joint, primals, fwd_outs + saved, "forward")
    bw = _extract(joint, saved + tangents, bwd_outs, "backward")
    fw.meta["num_saved"] = bw.meta["num_saved"] = len(saved)
    return fw, bw


def default_partition(
    joint_module: GraphModule, _joint_inputs: Any, *, num_fwd_outputs: int, **_: Any
) -> tuple[GraphModule, GraphModule]:
    """The forward is what its outputs need; the forward's values the backward reads are
    saved (NOTE [partitioners])."""
    outs = _outputs(joint_module)
    forward = _ancestors(outs[:num_fwd_outputs])
    forward |= {n for n in joint_module.graph.nodes if n.op == "placeholder" and not _is_tangent(n)}
    saved = [
        n
        for n in joint_module.graph.nodes
        if n in forward
        and n.op != "output"
        and any(u not in forward and u.op != "output" for u in n.users)
    ]
    bw_needs = _ancestors(outs[num_fwd_outputs:])
    saved += [
        n
        for n in joint_module.graph.nodes
        if n in forward and n not in saved and n in outs[num_fwd_outputs:] and n in bw_needs
    ]
    return _split(joint_module, saved, num_fwd_outputs)


def _recomputable(n: Node) -> bool:
    target = n.target
    if n.op != "call_function" or not isinstance(target, OpOverload):
        return n.op == "get_attr" or getattr(target, "__name__", "") == "getitem"
    if is_random(target) or target._schema.is_mutable:
        return False
    return "pointwise" in target.tags or target._schema.view_of is not None


def _nbytes(n: Node) -> float:
    val = n.meta.get("val")
    if val is None or not hasattr(val, "shape"):
        return 1.0
    return float(max(math.prod(val.shape), 1) * val.element_size())


def min_cut_rematerialization_partition(
    joint_module: GraphModule,
    _joint_inputs: Any,
    compiler: str = "ember",
    *,
    num_fwd_outputs: int,
    recomputable_ops: Any = None,
    **_: Any,
) -> tuple[GraphModule, GraphModule]:
    """Save a minimum cut of what the backward needs, recomputing cheap pointwise ops and
    views in the backward (NOTE [partitioners])."""
    import networkx as nx  # (optional dependency: only this partitioner needs it)

    outs = _outputs(joint_module)
    nodes = list(joint_module.graph.nodes)
    tangent_users: set[Node] = set()
    for n in nodes:  # nodes that depend on a tangent: the backward's own
        if _is_tangent(n) or any(a in tangent_users for a in n.all_input_nodes):
            tangent_users.add(n)
    forward = _ancestors(outs[:num_fwd_outputs])
    bw_needed = _ancestors(outs[num_fwd_outputs:])

    def recomputable(n: Node) -> bool:
        if recomputable_ops is not None and isinstance(n.target, OpOverload):
            return n.target in recomputable_ops or n.target.overloadpacket in recomputable_ops
        return _recomputable(n)

    g = nx.DiGraph()
    for n in nodes:
        if n.op == "output" or n not in bw_needed:
            continue
        if n in tangent_users:
            g.add_edge(n.name + "_in", "sink", capacity=math.inf)
            continue
        if n.op == "placeholder" or not recomputable(n) or n in forward and not recomputable(n):
            g.add_edge("source", n.name + "_in", capacity=math.inf)
        g.add_edge(n.name + "_in", n.name + "_out", capacity=_nbytes(n))
        for u in n.users:
            if u.op != "output" and u in bw_needed:
                g.add_edge(n.name + "_out", u.name + "_in", capacity=math.inf)
    for n in outs[num_fwd_outputs:]:  # a gradient that is a forward value: saved
        if isinstance(n, Node) and n not in tangent_users and n.op != "placeholder":
            g.add_edge(n.name + "_out", "sink", capacity=math.inf)
    if "source" not in g or "sink" not in g:
        return default_partition(joint_module, _joint_inputs, num_fwd_outputs=num_fwd_outputs)
    _, (reachable, _unreachable) = nx.minimum_cut(g, "source", "sink")
    by_name = {n.name: n for n in nodes}
    saved = [
        by_name[name[:-3]]
        for name in reachable
        if name.endswith("_in") and name[:-3] + "_out" not in reachable and name[:-3] in by_name
    ]
    saved.sort(key=nodes.index)
    return _split(joint_module, saved, num_fwd_outputs)


def saved_bytes(fw: GraphModule) -> float:
    """The bytes of the values a forward graph saves for the backward."""
    outs = _outputs(fw)
    k = fw.meta.get("num_saved", 0)
    return sum(_nbytes(n) for n in outs[len(outs) - k :] if isinstance(n, Node))
