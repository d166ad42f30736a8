"""``Interpreter`` runs a graph node by node; ``Transformer`` builds a new graph the same way.

Subclasses override one method per node kind (``placeholder``, ``get_attr``,
``call_function``, ``call_method``, ``call_module``, ``output``) or ``run_node``. Values are
freed after their last use (``garbage_collect_values``), as torch.fx's ``Interpreter`` does.

>>> g = ember.fx.Graph(); x = g.placeholder("x")
>>> _ = g.output(g.call_function(ember.ops.aten.neg.default, (x,)))
>>> ember.fx.Interpreter(ember.fx.GraphModule({}, g)).run(ember.ones(2))
tensor([-1., -1.])
"""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import Iterator
from typing import Any

from ember.fx._symbolic_trace import Tracer
from ember.fx.graph import Graph
from ember.fx.graph_module import GraphModule
from ember.fx.node import Argument, Node, Target, map_aggregate, map_arg
from ember.fx.proxy import Proxy

__all__ = ["Interpreter", "Transformer"]


class Interpreter:
    """Runs ``module.graph`` (or ``graph``) on arguments (see the module docstring)."""

    def __init__(
        self, module: Any, garbage_collect_values: bool = True, graph: Graph | None = None
    ) -> None:
        self.module = module
        self.graph: Graph = graph if graph is not None else module.graph
        self.env: dict[Node, Any] = {}
        self.name = "Interpreter"
        self.garbage_collect_values = garbage_collect_values
        self.current_node: Node | None = None
        self.user_to_last_uses: dict[Node, list[Node]] = {}
        if garbage_collect_values:
            seen: set[Node] = set()
            for node in reversed(self.graph.nodes):
                for n in node._input_nodes:
                    if n not in seen:
                        seen.add(n)
                        self.user_to_last_uses.setdefault(node, []).append(n)

    def run(
        self,
        *args: Any,
        initial_env: dict[Node, Any] | None = None,
        enable_io_processing: bool = True,
    ) -> Any:
        """Run the graph on ``args`` (one per placeholder, in order); returns the output."""
        self.env = initial_env if initial_env is not None else {}
        self.args_iter: Iterator[Any] = iter(args)
        for node in self.graph.nodes:
            if node in self.env:
                continue
            try:
                self.env[node] = self.run_node(node)
            except Exception as exc:
                note = f"While executing {node.format_node()}"
                if note not in getattr(exc, "__notes__", ()):
                    exc.add_note(note)
                raise
            if self.garbage_collect_values:
                for dead in self.user_to_last_uses.get(node, ()):
                    del self.env[dead]
            if node.op == "output":
                return self.env[node]
        return None

    def boxed_run(self, args_list: list[Any]) -> Any:
        """``run`` on the arguments in ``args_list``, which is cleared (so the caller's
        references do not keep the inputs alive)."""
        args = list(args_list)
        args_list.clear()
        return self.run(*args)

    @contextlib.contextmanager
    def _set_current_node(self, node: Node) -> Iterator[None]:
        saved = self.current_node
        self.current_node = node
        try:
            yield
        finally:
            self.current_node = saved

    def run_node(self, n: Node) -> Any:
        """Fetch ``n``'s arguments from the environment and run the method of its op."""
        with self._set_current_node(n):
            args, kwargs = self.fetch_args_kwargs_from_env(n)
            return getattr(self, n.op)(n.target, args, kwargs)

    # ---------------------------------------------------------------- one per op
    def placeholder(
        self, target: Target, args: tuple[Argument, ...], kwargs: dict[str, Any]
    ) -> Any:
        if isinstance(target, str) and target.startswith("*"):
            return list(self.args_iter)
        try:
            return next(self.args_iter)
        except StopIteration:
            if args:
                return args[0]
            raise RuntimeError(
                f"Expected positional argument for parameter {target}, but one was not passed in!"
            ) from None

    def get_attr(self, target: Target, args: tuple[Argument, ...], kwargs: dict[str, Any]) -> Any:
        return self.fetch_attr(str(target))

    def call_function(
        self, target: Target, args: tuple[Argument, ...], kwargs: dict[str, Any]
    ) -> Any:
        return target(*args, **kwargs)  # type: ignore[operator]

    def call_method(
        self, target: Target, args: tuple[Argument, ...], kwargs: dict[str, Any]
    ) -> Any:
        obj, *rest = args
        return getattr(obj, str(target))(*rest, **kwargs)

    def call_module(
        self, target: Target, args: tuple[Argument, ...], kwargs: dict[str, Any]
    ) -> Any:
        return self.fetch_attr(str(target))(*args, **kwargs)

    def output(self, target: Target, args: tuple[Argument, ...], kwargs: dict[str, Any]) -> Any:
        return args[0]

    # ---------------------------------------------------------------- helpers
    def fetch_attr(self, target: str) -> Any:
        """The module's attribute at a dotted path."""
        obj = self.module
        for i, part in enumerate(target.split(".")):
            if not hasattr(obj, part):
                done = ".".join(target.split(".")[:i])
                raise RuntimeError(
                    f"Node referenced nonexistent target {target} (at {done or 'the root'})"
                )
            obj = getattr(obj, part)
        return obj

    def fetch_args_kwargs_from_env(self, n: Node) -> tuple[tuple[Any, ...], dict[str, Any]]:
        """``n``'s arguments with each node replaced by its value."""
        return self.map_nodes_to_values(n.args, n), self.map_nodes_to_values(n.kwargs, n)

    def map_nodes_to_values(self, args: Argument, n: Node) -> Any:
        def load(a: Node) -> Any:
            if a not in self.env:
                raise RuntimeError(
                    f"Node {n} referenced nonexistent value {a}! Run Graph.lint() to diagnose "
                    "such issues"
                )
            return self.env[a]

        return map_arg(args, load)


def _unproxy(a: Any) -> Any:
    return map_aggregate(a, lambda v: v.node if isinstance(v, Proxy) else v)


class Transformer(Interpreter):
    """Builds a new graph by running the old one with ``Proxy`` values: each method returns
    the proxy of the node it adds; override them to rewrite nodes.

    >>> class NegToRelu(ember.fx.Transformer):
    ...     def call_function(self, target, args, kwargs):
    ...         if target is ember.ops.aten.neg.default:
    ...             target = ember.ops.aten.relu.default
    ...         return super().call_function(target, args, kwargs)
    >>> g = ember.fx.Graph(); x = g.placeholder("x")
    >>> _ = g.output(g.call_function(ember.ops.aten.neg.default, (x,)))
    >>> NegToRelu(ember.fx.GraphModule({}, g)).transform()(ember.tensor([-1.0, 2.0]))
    tensor([0., 2.])
    """

    def __init__(self, module: GraphModule) -> None:
        super().__init__(module, garbage_collect_values=False)
        self.new_graph = Graph()
        self.tracer = _TransformerTracer(self.new_graph, module)

    def run_node(self, n: Node) -> Any:
        result = super().run_node(n)
        if isinstance(result, Proxy) and n.op != "output":
            for k, v in n.meta.items():
                result.node.meta.setdefault(k, v)
        return result

    def placeholder(
        self, target: Target, args: tuple[Argument, ...], kwargs: dict[str, Any]
    ) -> Proxy:
        default = args[0] if args else inspect.Signature.empty
        return Proxy(self.new_graph.placeholder(str(target), default_value=default), self.tracer)

    def get_attr(self, target: Target, args: tuple[Argument, ...], kwargs: dict[str, Any]) -> Proxy:
        return self.tracer.create_proxy("get_attr", target, args, kwargs)

    def call_function(
        self, target: Target, args: tuple[Argument, ...], kwargs: dict[str, Any]
    ) -> Proxy:
        return self.tracer.create_proxy("call_function", target, args, kwargs)

    def call_method(
        self, target: Target, args: tuple[Argument, ...], kwargs: dict[str, Any]
    ) -> Proxy:
        return self.tracer.create_proxy("call_method", target, args, kwargs)

    def call_module(
        self, target: Target, args: tuple[Argument, ...], kwargs: dict[str, Any]
    ) -> Any:
        submod = self.fetch_attr(str(target))
        return self.tracer.call_module(submod, submod.forward, args, kwargs)

    def transform(self) -> GraphModule:
        """The new graph, as a ``GraphModule`` over the old module's attributes."""
        result = self.run(enable_io_processing=False)
        if result is not None:
            out = self.new_graph.output(_unproxy(result))
            old = [n for n in self.graph.nodes if n.op == "output"]
            if old:
                out.meta.update(old[0].meta)
        return GraphModule(self.module, self.new_graph)


class _TransformerTracer(Tracer):
    """The tracer of a ``Transformer``'s proxies: it appends to the new graph, and every
    module is a leaf (a ``call_module`` node stays one)."""

    def __init__(self, graph: Graph, root: Any) -> None:
        super().__init__()
        self.graph = graph
        self.root = root

    def is_leaf_module(self, m: Any, module_qualified_name: str) -> bool:
        return True
