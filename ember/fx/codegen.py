"""Python source from a ``Graph``: one line per node, values freed after their last use.

>>> g = ember.fx.Graph()
>>> x, y = g.placeholder("x"), g.placeholder("y")
>>> _ = g.output(g.call_function(ember.ops.aten.add.Tensor, (x, y), name="add"))
>>> print(g.python_code().src.strip())
def forward(self, x, y):
    add = ember.ops.aten.add.Tensor(x, y);  x = y = None
    return add
"""

from __future__ import annotations

import builtins
import keyword
import math
import operator
from typing import Any, NamedTuple

import ember
from ember.fx.graph import RESERVED, Graph
from ember.fx.node import Node, public_name, qualified_name
from ember.fx.proxy import MAGIC
from ember.ops.registry import OpOverload, OpOverloadPacket, ops

__all__ = ["PythonCode", "python_code", "Globals"]


class PythonCode(NamedTuple):
    """Source of a ``forward`` function and the globals it reads."""

    src: str
    globals: dict[str, Any]


class Globals:
    """Names generated code gives to objects that are not literals (functions, dtypes,
    arrays...): each object once, by a readable name no node uses."""

    def __init__(self, taken: set[str]) -> None:
        self.values: dict[str, Any] = {"ember": ember, "operator": operator, "inf": math.inf,
                                       "nan": math.nan}  # fmt: skip
        self._by_id: dict[int, str] = {}
        self._taken = taken | set(self.values)

    def add(self, obj: Any, hint: str) -> str:
        found = self._by_id.get(id(obj))
        if found is not None:
            return found
        base = "_" + "".join(c if c.isalnum() or c == "_" else "_" for c in hint).strip("_")
        name, k = base, 0
        while name in self._taken:
            k += 1
            name = f"{base}_{k}"
        self._taken.add(name)
        self.values[name] = obj
        self._by_id[id(obj)] = name
        return name

    def target(self, target: Any) -> str:
        """How code names a call's target."""
        if isinstance(target, (OpOverload, OpOverloadPacket)):
            return qualified_name(target)
        plain = getattr(target, "__name__", "")
        if getattr(ops.higher_order, plain, None) is target:  # cond, while_loop
            return qualified_name(target)
        if getattr(operator, plain, None) is target:
            return f"operator.{plain}"
        if getattr(builtins, plain, None) is target:
            return plain
        public = public_name(target)
        if public is not None:
            return public
        return self.add(target, getattr(target, "__name__", type(target).__name__))

    def value(self, v: Any) -> str:
        """A constant argument as source: a literal, or a global holding it."""
        if isinstance(v, Node):
            return v.name
        t = type(v)
        if v is None or t in (bool, int, str):
            return repr(v)
        if t is float:
            if math.isfinite(v):
                return repr(v)
            return "nan" if v != v else ("inf" if v > 0 else "-inf")
        if t is list:
            return "[" + ", ".join(self.value(e) for e in v) + "]"
        if t is tuple:
            inner = ", ".join(self.value(e) for e in v)
            return f"({inner},)" if len(v) == 1 else f"({inner})"
        if t is dict and all(type(k) is str for k in v):
            return "{" + ", ".join(f"{k!r}: {self.value(e)}" for k, e in v.items()) + "}"
        if isinstance(v, ember.dtype):
            return repr(v)
        if isinstance(v, slice):
            return f"slice({self.value(v.start)}, {self.value(v.stop)}, {self.value(v.step)})"
        return self.add(v, type(v).__name__.lower())

    def call(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
        parts = [self.value(a) for a in args] + [
            f"{k} = {self.value(v)}" for k, v in kwargs.items()
        ]
        return ", ".join(parts)


def last_uses(graph: Graph) -> dict[Node, list[Node]]:
    """For each node, the nodes whose value is last read by it (in argument order)."""
    seen: set[Node] = set()
    out: dict[Node, list[Node]] = {}
    for node in reversed(graph.nodes):
        for n in node._input_nodes:
            if n not in seen:
                seen.add(n)
                out.setdefault(node, []).append(n)
    return out


def python_code(graph: Graph, root_module: str = "self") -> PythonCode:
    """``def forward(<root_module>, <placeholders>):`` with one line per node."""
    names = {n.name for n in graph.nodes} | RESERVED
    g = Globals(names)
    params: list[str] = []
    body: list[str] = []
    frees = last_uses(graph)
    for node in graph.nodes:
        if node.op == "placeholder":
            default = f" = {g.value(node.args[0])}" if node.args else ""
            params.append(f"{node.target}{default}")
            raw = str(node.target).lstrip("*")
            if node.name != raw:
                body.append(f"{node.name} = {raw}")
            continue
        if node.op == "output":
            body.append(f"return {_returned(g, node.args[0])}")
            continue
        line = f"{node.name} = {emit(g, node, root_module)}"
        dead = list(frees.get(node, []))
        if not node.users:
            dead.append(node)
        if dead:
            line += ";  " + " = ".join(n.name for n in dead) + " = None"
        body.append(line)
    head = ", ".join([root_module, *params] if root_module else params)
    src = f"def forward({head}):\n" + "".join(f"    {line}\n" for line in body or ["pass"])
    return PythonCode(src, g.values)


def emit(g: Globals, node: Node, root_module: str) -> str:
    """The right-hand side of one node's line."""
    if node.op == "get_attr":
        return _attr(root_module, str(node.target))
    if node.op == "call_method":
        obj, *rest = node.args
        return f"{g.value(obj)}.{node.target}({g.call(tuple(rest), node.kwargs)})"
    if node.op == "call_module":
        return f"{_attr(root_module, str(node.target))}({g.call(node.args, node.kwargs)})"
    target, args = node.target, node.args
    plain = getattr(target, "__name__", "")
    infix = MAGIC.get(plain)
    if infix is not None and not node.kwargs and getattr(operator, plain, None) is target:
        if infix.count("{}") == len(args):
            return infix.format(*(g.value(a) for a in args))
    if target is getattr and len(args) == 2 and isinstance(args[1], str):
        if args[1].isidentifier() and not keyword.iskeyword(args[1]):
            return f"{g.value(args[0])}.{args[1]}"  # attribute access, as torch.fx writes it
    return f"{g.target(target)}({g.call(args, node.kwargs)})"


def _attr(root: str, qualified: str) -> str:
    parts = qualified.split(".")
    if all(p.isidentifier() for p in parts):
        return ".".join([root, *parts])
    out = root
    for p in parts:
        out = f'getattr({out}, "{p}")'
    return out


def _returned(g: Globals, value: Any) -> str:
    return g.value(value)
