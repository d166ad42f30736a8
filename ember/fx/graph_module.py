"""``GraphModule``: a module whose ``forward`` is Python generated from a ``Graph``.

>>> g = ember.fx.Graph()
>>> x = g.placeholder("x")
>>> _ = g.output(g.call_function(ember.ops.aten.mul.Tensor, (x, 2), name="mul"))
>>> gm = ember.fx.GraphModule(ember.nn.Module(), g)
>>> gm(ember.ones(2))
tensor([2., 2.])
>>> print(gm.code.strip())
def forward(self, x):
    mul = ember.ops.aten.mul.Tensor(x, 2);  x = None
    return mul
"""

from __future__ import annotations

import copy
import itertools
from typing import Any

from ember.dispatch.codegen import define
from ember.fx.graph import Graph
from ember.nn.modules.module import STRUCTURE, Module

__all__ = ["GraphModule"]

_COUNTER = itertools.count()


def compile_source(src: str, globals_: dict[str, Any], name: str, kind: str) -> Any:
    """Define the function ``name`` from generated source through ``dispatch/codegen.py``
    (the one place generated code is executed), under a unique name kept in ``linecache``
    so tracebacks and ``inspect`` show the generated lines."""
    return define(src.splitlines(), dict(globals_), name, f"ember.fx {kind} {next(_COUNTER)}")


class GraphModule(Module):
    """A ``Module`` running a ``Graph``; ``root`` (a module, or a dict of name to object)
    provides what the graph's ``get_attr`` and ``call_module`` nodes read."""

    def __init__(
        self, root: Module | dict[str, Any], graph: Graph, class_name: str = "GraphModule"
    ) -> None:
        super().__init__()
        self.__dict__["_class_name"] = class_name
        self.__dict__["meta"] = {}
        count = STRUCTURE[0]
        for node in graph.nodes:
            if node.op in ("get_attr", "call_module"):
                _copy_attr(root, self, str(node.target))
        # a module being made changes no structure a compiled function guards (NOTE [lifted
        # tensors]): a trace that makes graph modules (a cond's branches) need not retrace
        STRUCTURE[0] = count
        self.__dict__["_graph"] = graph
        graph.owning_module = self
        self.recompile()

    @property
    def graph(self) -> Graph:
        return self.__dict__["_graph"]

    @graph.setter
    def graph(self, g: Graph) -> None:
        self.__dict__["_graph"] = g
        g.owning_module = self
        self.recompile()

    @property
    def code(self) -> str:
        """The generated source of ``forward``."""
        return self.__dict__["_code"]

    def recompile(self) -> Any:
        """Generate ``forward`` again from the graph (after editing it); the source now,
        the function when it is first called."""
        code = self.graph.python_code("self")
        self.__dict__["_code"] = code.src
        self.__dict__["_globals"] = code.globals
        self.__dict__["_forward_fn"] = None
        return code

    def generated_forward(self) -> Any:
        """The generated ``forward(self, ...)`` function, with the graph's own parameters
        (what ``symbolic_trace`` of a ``GraphModule`` traces)."""
        fn = self.__dict__["_forward_fn"]
        if fn is None:
            fn = compile_source(self.code, self.__dict__["_globals"], "forward", self._class_name)
            self.__dict__["_forward_fn"] = fn
        return fn

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        fn = self.__dict__["_forward_fn"] or self.generated_forward()
        return fn(self, *args, **kwargs)

    def add_submodule(self, target: str, m: Module) -> bool:
        """Install ``m`` at the dotted path ``target``, making empty modules for missing
        parents; False if a parent on the path is not a module.

        >>> gm = ember.fx.GraphModule(ember.nn.Module(), ember.fx.Graph())
        >>> gm.add_submodule("a.b", ember.nn.ReLU()), type(gm.a.b).__name__
        (True, 'ReLU')
        """
        *prefix, field = target.split(".")
        mod: Module = self
        for part in prefix:
            nxt = getattr(mod, part, None)
            if nxt is None:
                nxt = Module()
                mod.add_module(part, nxt)
            if not isinstance(nxt, Module):
                return False
            mod = nxt
        mod.add_module(field, m)
        return True

    def delete_submodule(self, target: str) -> bool:
        """Remove the submodule at ``target``; False if there is none."""
        *prefix, field = target.split(".")
        mod: Any = self
        for part in prefix:
            mod = getattr(mod, part, None)
            if not isinstance(mod, Module):
                return False
        if field not in mod._modules:
            return False
        del mod._modules[field]
        return True

    def delete_all_unused_submodules(self) -> None:
        """Remove the submodules no ``call_module`` or ``get_attr`` node uses (nor their
        descendants)."""
        used: set[str] = set()
        for node in self.graph.nodes:
            if node.op in ("call_module", "get_attr"):
                parts = str(node.target).split(".")
                used.update(".".join(parts[: i + 1]) for i in range(len(parts)))
                if node.op == "call_module":
                    sub = self.get_submodule(str(node.target))
                    used.update(f"{node.target}.{n}" for n, _ in sub.named_modules() if n)
        for name, _ in reversed(list(self.named_modules())):
            if name and name not in used:
                self.delete_submodule(name)

    def print_readable(self, print_output: bool = True) -> str:
        """The module as a class with its ``forward``; printed unless ``print_output`` is
        False; returned either way."""
        body = "\n".join(f"    {line}" if line else "" for line in self.code.splitlines())
        text = f"class {self._class_name}(ember.nn.Module):\n{body}\n"
        if print_output:
            print(text)
        return text

    def __deepcopy__(self, memo: dict[int, Any]) -> GraphModule:
        """A copy with its own graph, submodules and parameters (the generated code, which
        holds modules as globals, is made again)."""
        res = type(self).__new__(type(self))
        memo[id(self)] = res
        skip = ("_globals", "_forward_fn", "_code")
        state = {k: v for k, v in self.__dict__.items() if k not in skip}
        res.__dict__.update(copy.deepcopy(state, memo))
        res.__dict__["_graph"].owning_module = res
        res.recompile()
        return res

    def __copy__(self) -> GraphModule:
        """A module over the same graph and the same submodules (``meta`` copied)."""
        res = GraphModule(self, self.graph, self._class_name)
        res.__dict__["meta"] = copy.copy(self.meta)
        return res

    def _get_name(self) -> str:
        return self._class_name

    def __str__(self) -> str:
        # as torch.fx prints it: the module with its children, then the code
        return (
            f"{Module.__repr__(self)}\n\n\n\n{self.code}\n"
            "# To see more debug info, please use `graph_module.print_readable()`"
        )

    def __repr__(self) -> str:
        return Module.__repr__(self)


def _copy_attr(root: Any, into: Module, qualified: str) -> None:
    """Copy the object at a dotted path of ``root`` (a dict keyed by the full path, or a
    module) to the same path in ``into``, making empty modules for the path's parents."""
    if isinstance(root, dict):
        if qualified not in root:
            raise RuntimeError(f"GraphModule: the root dict has no entry {qualified!r}")
        value, buffer = root[qualified], False
    else:
        owner = root
        *prefix, field = qualified.split(".")
        for part in prefix:
            owner = getattr(owner, part)
        value = getattr(owner, field)
        buffer = isinstance(owner, Module) and field in owner._buffers
    *prefix, field = qualified.split(".")
    dst = into
    for part in prefix:
        nxt = dst._modules.get(part)
        if nxt is None:
            nxt = Module()
            setattr(dst, part, nxt)
        dst = nxt
    if buffer:
        dst.register_buffer(field, value)
    else:
        setattr(dst, field, value)
