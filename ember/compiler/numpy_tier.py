"""The NumPy-source tier: one generated Python function per graph.

Each node is one line: a direct NumPy call where one computes exactly what the op's kernel
does (NOTE [direct numpy] in ``numpy_ops.py``), writing into a dead buffer when buffer
reuse gave it one; otherwise a call of the op's cpu kernel on tensors wrapping the arrays.
Views are NumPy views (``x.T``, ``x.reshape(...)``) where the geometry is one, fused groups
call their kernel, and values are dropped after their last use. The whole function runs
with NumPy's floating-point warnings off, as every kernel does. Calling it is one Python
call plus the kernels.

>>> x = ember.ones(2, 3).to("lazy")
>>> print(ember.lazy.debug.dump_ir([(x @ x.t()).relu()], fmt="code"))
def graph(x0):
    _token = _errstate.set(_IGNORE)
    try:
        view = x0.T
        mm = _mm2(x0, view);  x0 = view = None
        relu = np.maximum(mm, 0, out=mm);  mm = None
        return (relu,)
    finally:
        _errstate.reset(_token)
<BLANKLINE>
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import numpy as np

from ember._tensor import wrap
from ember.backends.cpu._util import ERRSTATE, IGNORE
from ember.compiler import array_ops, numpy_ops
from ember.compiler.effects import mutated_args
from ember.compiler.graph_meta import single_output
from ember.compiler.interpreter_tier import flatten
from ember.dispatch.keys import CPU_BIT
from ember.fx.codegen import Globals, last_uses
from ember.fx.graph import RESERVED
from ember.fx.graph_module import GraphModule, compile_source
from ember.fx.node import Node
from ember.ops.registry import OpOverload


def _wrap_or_none(a: Any) -> Any:
    return None if a is None else wrap(a)


def generate(gm: GraphModule, name: str = "graph") -> tuple[str, dict[str, Any]]:
    """The source of the graph's function and the globals it reads."""
    graph = gm.graph
    nodes = list(graph.nodes)
    taken = {n.name for n in nodes} | RESERVED | set(numpy_ops.GLOBALS)
    g = Globals(taken)
    g.values.update(numpy_ops.GLOBALS)
    g.values.update({"_w": wrap, "_wn": _wrap_or_none, "_flat": flatten, "_CPU": CPU_BIT,
                     "_errstate": ERRSTATE, "_IGNORE": IGNORE})  # fmt: skip
    frees = last_uses(graph)
    dies_at = {v: n for n, dead in frees.items() for v in dead}
    for n in nodes:  # a buffer another node writes into stays until that node
        out = n.meta.get("out")
        if out is not None:
            if out in dies_at:
                frees[dies_at[out]].remove(out)
            frees.setdefault(n, []).append(out)
            dies_at[out] = n
    params = [n.name for n in nodes if n.op == "placeholder"]
    body: list[str] = []
    for node in nodes:
        if node.op == "placeholder":
            continue
        if node.op == "output":
            body.append(f"return {g.value(node.args[0])}")
            continue
        lines = _emit(g, gm, node)
        dead = list(frees.get(node, []))
        if not node.users:
            dead.append(node)
        if dead:
            lines[-1] += ";  " + " = ".join(n.name for n in dead) + " = None"
        body.extend(lines)
    src = (
        f"def {name}({', '.join(params)}):\n"
        "    _token = _errstate.set(_IGNORE)\n"
        "    try:\n" + "".join(f"        {line}\n" for line in body) + "    finally:\n"
        "        _errstate.reset(_token)\n"
    )
    return src, g.values


def compile_numpy(gm: GraphModule, name: str = "graph") -> tuple[Callable[..., Any], str]:
    """The graph's generated function, and its source."""
    src, globals_ = generate(gm, name)
    return compile_source(src, globals_, name, "numpy"), src


def _emit(g: Globals, gm: GraphModule, node: Node) -> list[str]:
    """The lines computing ``node`` (the last one assigns its name)."""
    name = node.name
    if node.op == "get_attr":
        value = gm
        for part in str(node.target).split("."):
            value = getattr(value, part)
        return [f"{name} = {g.add(value, 'constant')}"]
    if node.op != "call_function":
        raise NotImplementedError(f"the NumPy tier runs lowered graphs only, not {node.op} nodes")
    target = node.target
    if target is operator.getitem:
        return [f"{name} = {g.value(node.args[0])}[{g.value(node.args[1])}]"]
    if isinstance(target, OpOverload):
        emitter = numpy_ops.EMITTERS.get(target)
        if emitter is not None:
            out = node.meta.get("out")
            expr = emitter(numpy_ops.Source(node, g.value), out.name if out is not None else None)
            if expr is not None:
                return [f"{name} = {expr}"]
        return _kernel_call(g, node)
    if target is array_ops.view:
        expr = _view(g, node)
        if expr is not None:
            return [f"{name} = {expr}"]
    elif target is array_ops.copy:
        return [f"{name} = {g.value(node.args[0])}.copy(order='K')"]
    return [f"{name} = {g.target(target)}({g.call(node.args, node.kwargs)})"]


def _kernel_call(g: Globals, node: Node) -> list[str]:
    """``op.redispatch(CPU, ...)`` on wrapped arrays; written arguments take the wrapper's
    array afterwards."""
    op = node.target
    assert isinstance(op, OpOverload)
    hint = op.overloadpacket.__name__ + (
        "" if op._overloadname == "default" else f"_{op._overloadname}"
    )
    fn = g.add(op, hint)
    mutated = mutated_args(node)
    lines: list[str] = []
    held: dict[Node, str] = {}
    for k, m in enumerate(dict.fromkeys(mutated)):
        held[m] = f"_t{k}"
        lines.append(f"_t{k} = _w({m.name})")

    def arg(a: Any) -> str:
        if isinstance(a, Node):
            if a.meta.get("param") is not None:
                return a.name
            if a in held:
                return held[a]
            wrapper = "_w" if a.meta.get("tensor_meta") is not None else "_wn"
            return f"{wrapper}({a.name})"
        if isinstance(a, list):
            return "[" + ", ".join(arg(e) for e in a) + "]"
        if isinstance(a, tuple):
            inner = ", ".join(arg(e) for e in a)
            return f"({inner},)" if len(a) == 1 else f"({inner})"
        return g.value(a)

    parts = (
        ["_CPU"] + [arg(a) for a in node.args] + [f"{k}={arg(v)}" for k, v in node.kwargs.items()]
    )
    call = f"{fn}.redispatch({', '.join(parts)})"
    lines.append(
        f"{node.name} = {call}._edata" if single_output(op) else f"{node.name} = _flat({call})"
    )
    lines.extend(f"{m.name} = {t}._edata" for m, t in held.items())
    if held:  # drop the wrappers (they hold the arrays)
        lines[-1] += ";  " + " = ".join(held.values()) + " = None"
    return lines


def _contiguous(shape: tuple[int, ...]) -> tuple[int, ...]:
    out, acc = [], 1
    for n in reversed(shape):
        out.append(acc)
        acc *= max(n, 1)
    return tuple(reversed(out))


def _same_layout(shape: tuple[int, ...], a: tuple[int, ...], b: tuple[int, ...]) -> bool:
    """Strides ``a`` and ``b`` address the same elements for ``shape`` (size-1 dims'
    strides do not matter)."""
    return all(n == 1 or x == y for n, x, y in zip(shape, a, b, strict=True))


def _view(g: Globals, node: Node) -> str | None:
    """A view whose geometry is a NumPy view op of its base's logical values: the base
    itself, a transpose, a reshape of a contiguous base, a broadcast. None for others."""
    src, base_strides, shape, dt, strides_b, offset = node.args
    base = node.meta.get("base")
    if base is None or offset != 0:
        return None
    base_shape, base_dtype = base
    item = np.dtype(dt).itemsize
    if np.dtype(dt) != base_dtype or any(s % item for s in strides_b):
        return None
    strides = tuple(s // item for s in strides_b)
    shape, base_shape = tuple(shape), tuple(base_shape)
    x = g.value(src)
    if shape == base_shape and _same_layout(shape, strides, base_strides):
        return x
    if len(shape) == len(base_shape) and len(shape) > 1:
        perm = _permutation(shape, strides, base_shape, base_strides)
        if perm is not None:
            return f"{x}.T" if perm == (1, 0) else f"{x}.transpose({perm})"
    n = int(np.prod(shape))
    if (
        n == int(np.prod(base_shape))
        and _same_layout(base_shape, base_strides, _contiguous(base_shape))
        and _same_layout(shape, strides, _contiguous(shape))
    ):
        return f"{x}.reshape({shape})"
    kept = [(d, s) for d, s in zip(shape, strides, strict=True) if s != 0 and d != 1]
    from_base = [(d, s) for d, s in zip(base_shape, base_strides, strict=True) if d != 1]
    if kept == from_base and any(s == 0 and d != 1 for d, s in zip(shape, strides, strict=True)):
        squeezed = tuple(d if s != 0 else 1 for d, s in zip(shape, strides, strict=True))
        return f"np.broadcast_to({x}.reshape({squeezed}), {shape})"
    return None


def _permutation(
    shape: tuple[int, ...],
    strides: tuple[int, ...],
    base_shape: tuple[int, ...],
    base_strides: tuple[int, ...],
) -> tuple[int, ...] | None:
    """``perm`` with ``shape[i] == base_shape[perm[i]]`` and the same strides (for dims
    longer than 1), or None."""
    used: set[int] = set()
    perm = []
    for d, s in zip(shape, strides, strict=True):
        found = None
        for j, (bd, bs) in enumerate(zip(base_shape, base_strides, strict=True)):
            if j not in used and bd == d and (d == 1 or bs == s):
                found = j
                break
        if found is None:
            return None
        used.add(found)
        perm.append(found)
    return tuple(perm)
