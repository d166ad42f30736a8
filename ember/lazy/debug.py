"""Looking at lazy graphs: ``dump_ir(tensors, fmt)``, ``EMBER_LAZY_DEBUG=1``.

>>> x = ember.ones(2, device="lazy")
>>> print(dump_ir([(x + 1).exp()]))
%0 = data [2] float32
%1 = aten.add.Tensor(%0, $0) params=[1]
%2 = aten.exp.default(%1)
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ember._tensor import Tensor
from ember.lazy.executor import _topo, current
from ember.lazy.ir import Node, Param, Slot, describe


def _graph(tensors: Iterable[Tensor]) -> list[Node]:
    roots = [current(t._data) for t in tensors]
    order: list[Node] = []
    seen: set[int] = set()
    for node in _topo_all(roots):
        if id(node) not in seen:
            seen.add(id(node))
            order.append(node)
    return order


def _topo_all(roots: list[Any]) -> list[Node]:
    """Every node the roots reach (computed ones too, as inputs), inputs first."""
    pending = _topo(roots)
    inputs: list[Node] = []
    seen = {id(n) for n in pending}
    for node in pending:
        for n, _ in node.inputs:
            if id(n) not in seen:
                seen.add(id(n))
                inputs.append(n)
    for n, _ in roots:
        if id(n) not in seen:
            seen.add(id(n))
            inputs.append(n)
    return inputs + pending


def dump_ir(tensors: Iterable[Tensor], fmt: str = "text") -> str:
    """The graph behind ``tensors``: ``fmt="text"`` (one line per node) or ``"dot"``."""
    order = _graph(tensors)
    names = {id(n): f"%{i}" for i, n in enumerate(order)}

    def ref(node: Node, i: int) -> str:
        return names[id(node)] + (f".{i}" if node.n_out > 1 else "")

    lines = []
    for node in order:
        text = describe(node)
        for slot, (n, i) in enumerate(node.inputs):
            text = text.replace(repr(Slot(slot)), "\0" + ref(n, i), 1)
        text = text.replace("\0", "")
        lines.append(f"{names[id(node)]} = {text}")
    if fmt == "text":
        return "\n".join(lines)
    if fmt == "dot":
        out = ["digraph lazy {"]
        for node in order:
            label = describe(node).split("(")[0].replace('"', "'")
            out.append(f'  n{id(node)} [label="{names[id(node)]} {label}"];')
            for n, _ in node.inputs:
                out.append(f"  n{id(n)} -> n{id(node)};")
        out.append("}")
        return "\n".join(out)
    raise ValueError(f"dump_ir: fmt must be 'text' or 'dot', got {fmt!r}")


__all__ = ["dump_ir", "Param"]
