"""Fusion grouping: chains of elementwise ops, with the full reduction that consumes them.

NOTE [fusion groups]
A group is a set of nodes of one graph that one kernel computes in a single pass over the
elements: elementwise ops of one floating dtype (every operand of that dtype, or a Python
number), ending at the group's *root*, an elementwise op or a full ``sum``/``mean``. Only
the root's value leaves the kernel, so a member other than the root must not be needed
outside: no live tensor holds it, the sync did not ask for it, and every op that reads it
is in the group. Whether the operands have the root's shape (or one element) is known only
when the graph runs, as a compiled graph serves every size; a group that does not fit then,
or is too small to pay for a kernel launch, runs op by op.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ember.lazy.ir import Node, Param, Slot
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
REDUCTIONS = {aten.sum.default: "sum", aten.mean.default: "mean"}
_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
_KWARGS = {aten.add.Tensor: {"alpha"}, aten.sub.Tensor: {"alpha"}}


def _dtype_of(node: Node, index: int) -> Any:
    return node.meta[index][2] if index < len(node.meta) else None


def _operands_fit(node: Node, dt: Any) -> bool:
    """Every tensor operand of ``node`` has dtype ``dt``; every other argument is a
    parameter or (for alpha) a keyword the table knows."""
    for a in node.args:
        if type(a) not in (Slot, Param):
            return False
    if set(node.kwargs) - _KWARGS.get(node.op, set()):
        return False
    if any(type(v) is not Param for v in node.kwargs.values()):
        return False
    return all(_dtype_of(n, i) == dt for n, i in node.inputs)


def elementwise(node: Node) -> bool:
    if node.kind != "call" or node.op not in ELEMENTWISE or node.written or node.n_out != 1:
        return False
    dt = _dtype_of(node, 0)
    return dt in _FLOATS and _operands_fit(node, dt)


def reduction(node: Node) -> bool:
    if node.kind != "call" or node.op not in REDUCTIONS or node.kwargs or len(node.args) != 1:
        return False
    dt = _dtype_of(node, 0)
    return dt in _FLOATS and _operands_fit(node, dt)


def find_groups(order: list[Node], needed: set[int]) -> list[list[int]]:
    """Fusion groups of ``order`` (a graph's nodes, inputs first), as sorted lists of
    indices whose last one is the root (NOTE [fusion groups]). ``needed``: ids of nodes
    whose values must be kept (held by live tensors, or asked for)."""
    index = {id(n): k for k, n in enumerate(order)}
    consumers: dict[int, set[int]] = {k: set() for k in range(len(order))}
    for k, node in enumerate(order):
        for n, _ in node.inputs:
            j = index.get(id(n))
            if j is not None:
                consumers[j].add(k)
    groups: list[list[int]] = []
    taken: set[int] = set()
    for k in reversed(range(len(order))):
        root = order[k]
        if k in taken or not (elementwise(root) or reduction(root)):
            continue
        members = {k}
        frontier = [k]
        while frontier:
            m = frontier.pop()
            for n, _ in order[m].inputs:
                j = index.get(id(n))
                if j is None or j in members or j in taken:
                    continue
                if not elementwise(order[j]) or id(order[j]) in needed:
                    continue
                if not consumers[j] <= members:
                    continue
                members.add(j)
                frontier.append(j)
        if len(members) >= 2:
            groups.append(sorted(members))
            taken |= members
    return sorted(groups)
