"""Fusion grouping: chains of elementwise ops, with the full reduction that consumes them,
become one node calling one kernel.

NOTE [fusion groups]
A group is a set of nodes one kernel computes in a single pass over the elements:
elementwise ops of one floating dtype (every tensor operand of that dtype; Python numbers
are parameter placeholders), ending at the group's *root*, an elementwise op or a full
``sum``/``mean``. Only the root's value leaves the kernel, so a member other than the root
must not be returned by the graph and every node reading it must be in the group (a view of
it is a reader outside). Matmul, convolution, sort, gather and every other op are
boundaries: they are not in the table. Whether the operands have the root's shape (or one
element) is known only when the graph runs, as a compiled graph serves every size; a group
that does not fit then, or is too small to pay for a kernel launch, runs its ops as NumPy
(NOTE [kernel caches] in ``numba_tier.py``).

The group becomes one ``call_function`` node whose target is a ``numba_tier.FusedKernel``
and whose arguments are the tensors it reads from outside, then its parameters.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ember.compiler import metrics
from ember.compiler.effects import mutated_args
from ember.fx.graph import Graph
from ember.fx.node import Node
from ember.ops.registry import ops

aten = ops.aten

Emit = Callable[[list[str], dict[str, str]], str]


def _binary(symbol: str) -> Emit:
    def emit(x: list[str], kw: dict[str, str]) -> str:
        alpha = kw.get("alpha")
        other = f"{alpha} * {x[1]}" if alpha is not None else x[1]
        return f"{x[0]} {symbol} {other}"

    return emit


#: elementwise ops a kernel can compute: op -> its expression from operand names
ELEMENTWISE: dict[Any, Emit] = {
    aten.add.Tensor: _binary("+"),
    aten.sub.Tensor: _binary("-"),
    aten.mul.Tensor: lambda x, kw: f"{x[0]} * {x[1]}",
    aten.div.Tensor: lambda x, kw: f"{x[0]} / {x[1]}",
    aten.neg.default: lambda x, kw: f"-{x[0]}",
    aten.exp.default: lambda x, kw: f"np.exp({x[0]})",
    aten.log.default: lambda x, kw: f"np.log({x[0]})",
    aten.sqrt.default: lambda x, kw: f"np.sqrt({x[0]})",
    aten.tanh.default: lambda x, kw: f"np.tanh({x[0]})",
    aten.sin.default: lambda x, kw: f"np.sin({x[0]})",
    aten.cos.default: lambda x, kw: f"np.cos({x[0]})",
    aten.abs.default: lambda x, kw: f"np.abs({x[0]})",
    aten.sigmoid.default: lambda x, kw: f"T(1) / (T(1) + np.exp(-{x[0]}))",
    # relu keeps NaN (a NaN is not <= 0), as PyTorch's
    aten.relu.default: lambda x, kw: f"T(0) if {x[0]} <= T(0) else {x[0]}",
    aten.pow.Tensor_Scalar: lambda x, kw: f"{x[0]} ** {x[1]}",
}
#: full reductions a kernel can end with
REDUCTIONS: dict[Any, str] = {aten.sum.default: "sum", aten.mean.default: "mean"}
_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
_KWARGS: dict[Any, set[str]] = {aten.add.Tensor: {"alpha"}, aten.sub.Tensor: {"alpha"}}


def _dtype(n: Node) -> Any:
    tm = n.meta.get("tensor_meta")
    return tm.dtype.np if tm is not None and hasattr(tm, "dtype") else None


def is_param(n: Any) -> bool:
    return isinstance(n, Node) and n.meta.get("param") in (int, float, bool)


def _operands_fit(node: Node, dt: Any) -> bool:
    """Every tensor operand has dtype ``dt``; every other argument is a parameter
    placeholder (keywords only those the table knows)."""
    if set(node.kwargs) - _KWARGS.get(node.target, set()):
        return False
    for a in (*node.args, *node.kwargs.values()):
        if not isinstance(a, Node):
            return False
        if not is_param(a) and _dtype(a) != dt:
            return False
    return all(is_param(v) for v in node.kwargs.values())


def _written(node: Node) -> bool:
    return any(node in mutated_args(u) for u in node.users)


def elementwise(node: Node) -> bool:
    if node.op != "call_function" or node.target not in ELEMENTWISE or _written(node):
        return False
    dt = _dtype(node)
    return dt in _FLOATS and _operands_fit(node, dt)


def reduction(node: Node) -> bool:
    if node.op != "call_function" or node.target not in REDUCTIONS or node.kwargs:
        return False
    dt = _dtype(node)
    return len(node.args) == 1 and dt in _FLOATS and _operands_fit(node, dt) and not _written(node)


def find_groups(nodes: list[Node]) -> list[list[Node]]:
    """Fusion groups of a graph's nodes (in order), each in order, its root last."""
    position = {n: k for k, n in enumerate(nodes)}
    returned = {a for n in nodes if n.op == "output" for a in n.all_input_nodes}
    groups: list[list[Node]] = []
    taken: set[Node] = set()
    for root in reversed(nodes):
        if root in taken or not (elementwise(root) or reduction(root)):
            continue
        members = {root}
        frontier = [root]
        while frontier:
            m = frontier.pop()
            for a in m.all_input_nodes:
                if a in members or a in taken or not elementwise(a) or a in returned:
                    continue
                if not set(a.users) <= members:
                    continue
                members.add(a)
                frontier.append(a)
        if len(members) >= 2:
            groups.append(sorted(members, key=position.__getitem__))
            taken |= members
    return sorted(groups, key=lambda g: position[g[-1]])


def group_fusions(graph: Graph) -> Graph:
    """Replace each fusion group by one call of its kernel (NOTE [fusion groups])."""
    from ember.compiler.numba_tier import FusedKernel  # cycle: numba_tier imports this module

    groups = find_groups(list(graph.nodes))
    for k, group in enumerate(groups):
        inside = set(group)
        externals: list[Node] = []
        params: list[Node] = []
        for n in group:
            for a in (*n.args, *n.kwargs.values()):
                if a in inside:
                    continue
                bucket = params if is_param(a) else externals
                if a not in bucket:
                    bucket.append(a)
        kernel = FusedKernel(group, externals, params, f"fused_{k}")
        root = group[-1]
        with graph.inserting_before(root):
            fused = graph.call_function(kernel, (*externals, *params), name="fused")
        fused.meta["tensor_meta"] = root.meta.get("tensor_meta")
        root.replace_all_uses_with(fused)
        for n in reversed(group):
            graph.erase_node(n)
    if groups:
        metrics.count("fused_groups", len(groups))
    return graph
