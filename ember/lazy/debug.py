"""Looking at lazy graphs: ``dump_ir(tensors, fmt)``, ``render(tensors, path)``,
``EMBER_LAZY_DEBUG=1``.

>>> from ember.lazy.debug import dump_ir
>>> x = ember.ones(2, device="lazy")
>>> print(dump_ir([(x + 1).exp()]))
%0 = aten.ones.default((2,), device=device(type='cpu'))
%1 = aten.add.Tensor(%0, $0) params=[1]
%2 = aten.exp.default(%1)
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ember._tensor import Tensor
from ember.compiler.constant_folding import fold_constants
from ember.compiler.cse import eliminate_common_subexpressions
from ember.compiler.dce import eliminate_dead_code
from ember.compiler.pass_manager import run_pass
from ember.fx.graph_module import GraphModule
from ember.fx.node import Node as FxNode
from ember.lazy import executor
from ember.lazy._array import LazyArray
from ember.lazy.executor import _topo, current
from ember.lazy.ir import Node, Param, Slot
from ember.lazy.lowering import lower


def _graph(tensors: Iterable[Tensor]) -> list[Node]:
    roots = [current(t._edata) for t in tensors]
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


def _describe(node: Node, ref: Any) -> str:
    """One line of text for a node, its tensor arguments named by the nodes they read."""
    if node.kind == "data":
        shape, _, dt = node.meta[0]
        return f"data {list(shape)} {dt}"
    if node.kind in ("view", "write"):
        return f"{node.kind} {node.args} of {', '.join(ref(n, i) for n, i in node.inputs)}"

    def fmt(a: Any) -> str:
        if type(a) is Slot:
            n, i = node.inputs[a.i]
            return ref(n, i)
        if type(a) is Param:
            return f"${a.j}"
        if isinstance(a, list):
            return "[" + ", ".join(fmt(e) for e in a) + "]"
        if isinstance(a, tuple):
            return "(" + ", ".join(fmt(e) for e in a) + ("," if len(a) == 1 else "") + ")"
        return repr(a)

    parts = [fmt(a) for a in node.args] + [f"{k}={fmt(v)}" for k, v in node.kwargs.items()]
    params = f" params={list(node.params)}" if node.params else ""
    return f"{node.op}({', '.join(parts)}){params}"


def dump_ir(tensors: Iterable[Tensor], fmt: str = "text") -> str:
    """The graph behind ``tensors``: ``fmt="text"`` (one line per node), ``"dot"``
    (Graphviz), or ``"code"`` (the source the compiler generates for the graph a sync of
    them would run; compiled now if it was not, and cached for that sync)."""
    tensors = list(tensors)
    if fmt == "code":
        return _code(tensors)
    order = _graph(tensors)
    names = {id(n): f"%{i}" for i, n in enumerate(order)}

    def ref(node: Node, i: int) -> str:
        return names[id(node)] + (f".{i}" if node.n_out > 1 else "")

    if fmt == "text":
        return "\n".join(f"{names[id(n)]} = {_describe(n, ref)}" for n in order)
    if fmt == "dot":
        out = ["digraph lazy {"]
        for node in order:
            label = _describe(node, ref).split("(")[0].replace('"', "'")
            out.append(f'  n{id(node)} [label="{names[id(node)]} {label}"];')
            for n, _ in node.inputs:
                out.append(f"  n{id(n)} -> n{id(node)};")
        out.append("}")
        return "\n".join(out)
    raise ValueError(f"dump_ir: fmt must be 'text', 'dot' or 'code', got {fmt!r}")


def _cut(tensors: list[Tensor]) -> executor.Cut | None:
    """The cut graph a sync of ``tensors`` runs (as ``sync_arrays`` cuts it: their bases,
    in creation order, keeping what live tensors hold); None when all is computed."""
    bases: dict[int, LazyArray] = {}
    for t in tensors:
        a = t._edata
        while a.base is not None:
            a = a.base
        if a.value is None and a.node is not None:
            bases[id(a)] = a
    ordered = sorted(bases.values(), key=lambda a: a.seq)
    roots = [a.node for a in ordered]
    needed = {id(n) for n, _ in roots}  # type: ignore[misc]
    needed.update(id(a.node[0]) for a in executor.LIVE.alive() if a.node is not None)
    return executor.prepare(roots, needed)  # type: ignore[arg-type]


def _code(tensors: list[Tensor]) -> str:
    """The generated source of the graph a sync of ``tensors`` runs."""
    with executor._LOCK:
        cut = _cut(tensors)
        if cut is None:
            return "# nothing to compute: every value asked for is computed"
        entry = executor._CACHE.get(cut.key)
        if entry is None:
            entry = executor._CACHE[cut.key] = executor.Compiled(cut)
        _, mask = entry.function(cut)
        return entry.sources[mask]


def lowered(tensors: Iterable[Tensor]) -> tuple[GraphModule, dict[FxNode, int]] | None:
    """The ``ember.fx`` graph a sync of ``tensors`` would compile, after the passes that come
    before fusion (dead code, common subexpressions, constants), and the ``id`` of the
    recorded node each of its values comes from; None when every value is computed. Nothing
    runs.

    >>> from ember.lazy.debug import lowered
    >>> x = ember.ones(3).to("lazy")
    >>> gm, recorded = lowered([(x * 2).exp()])
    >>> [n.name for n in gm.graph.nodes if n.op == "call_function"]
    ['mul', 'exp']
    """
    with executor._LOCK:
        cut = _cut(list(tensors))
        if cut is None:
            return None
        gm = lower(cut.order, cut.sources, cut.inputs, cut.kept)
    for step in (eliminate_dead_code, eliminate_common_subexpressions, fold_constants):
        run_pass(gm.graph, step)
    return gm, gm.meta["recorded"]


def render(tensors: Iterable[Tensor], path: str) -> Any:
    """Draw the graph behind ``tensors`` into ``path`` (its suffix picks the format, e.g.
    ``.svg``, ``.png``) with Graphviz; returns what ``graphviz`` returns (the file's path).
    Needs the ``graphviz`` Python package and Graphviz's ``dot`` program."""
    try:  # optional dependency, loaded when a graph is drawn
        import graphviz
    except ImportError:
        raise ModuleNotFoundError(
            "ember.lazy.debug.render needs the graphviz Python package: pip install graphviz "
            "(and Graphviz's dot program); dump_ir(tensors, fmt='dot') gives the same graph "
            "as text"
        ) from None
    return graphviz.Source(dump_ir(tensors, fmt="dot")).render(outfile=path)


__all__ = ["dump_ir", "render", "lowered", "Param"]
