"""``Graph``: an ordered list of ``Node``s, as ``torch.fx.Graph``.

Nodes are kept in a doubly linked list in program order; new nodes go where the insert point
says (the end, unless inside ``inserting_before``/``inserting_after``). Names are unique per
graph and made as torch.fx makes them (NOTE [fx names]).

>>> import operator
>>> g = ember.fx.Graph()
>>> x = g.placeholder("x")
>>> y = g.call_function(operator.neg, (x,))
>>> _ = g.output(y)
>>> print(g)
graph():
    %x : [num_users=1] = placeholder[target=x]
    %neg : [num_users=1] = call_function[target=operator.neg](args = (%x,), kwargs = {})
    return neg
"""

from __future__ import annotations

import builtins
import contextlib
import inspect
import keyword
import operator  # noqa: F401  (the docstring's example)
import re
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from ember.fx.node import Argument, Node, Target, map_arg, qualified_name

if TYPE_CHECKING:
    from ember.fx.codegen import PythonCode

__all__ = ["Graph"]

_NAME = re.compile(r"^(.*?)(?:_(\d+))?$")
_ILLEGAL = re.compile(r"[^0-9a-zA-Z_]+")
_CAMEL = re.compile(r"(?<=[a-z0-9])([A-Z])")
#: names a node may not take (they would shadow a keyword, a builtin, or a name the
#: generated code uses)
RESERVED = set(keyword.kwlist) | set(vars(builtins)) | {"self", "ember", "operator", "inf", "nan"}


class _Namespace:
    """Unique Python names for one graph's nodes.

    NOTE [fx names]
    A node's name comes from its target (``aten.add.Tensor`` gives ``add_tensor``, as in
    torch.fx; an explicit ``name=`` is used as given) made a legal identifier; a name
    already taken, or one that would shadow a builtin or keyword (``sum``, ``input``), gets
    the next free ``_<n>`` suffix for its base: ``add``, ``add_1``, ``add_2``, ``sum_1``.
    """

    def __init__(self) -> None:
        self._used: set[str] = set()
        self._count: dict[str, int] = {}

    def create_name(self, candidate: str) -> str:
        candidate = _ILLEGAL.sub("_", candidate) or "_unnamed"
        if candidate[0].isdigit():
            candidate = f"_{candidate}"
        m = _NAME.match(candidate)
        assert m is not None
        base, num = m.group(1), m.group(2)
        if num is None or candidate in self._used:
            n = self._count.get(base, 0)
            if candidate in RESERVED:
                n += 1
                candidate = f"{base}_{n}"
        else:
            n = int(num)
        while candidate in self._used:
            n += 1
            candidate = f"{base}_{n}"
        self._used.add(candidate)
        self._count[base] = n
        return candidate


def _snake(s: str) -> str:
    return _CAMEL.sub(r"_\1", s).lower()


class _NodeList:
    """The nodes of a graph in order (a live view: iterate, ``len``, ``reversed``)."""

    def __init__(self, graph: Graph, reverse: bool = False) -> None:
        self.graph = graph
        self.reverse = reverse

    def __len__(self) -> int:
        return self.graph._len

    def __iter__(self) -> Iterator[Node]:
        root = self.graph._root
        cur = root._prev if self.reverse else root._next
        while cur is not root:
            nxt = cur._prev if self.reverse else cur._next
            if not cur._erased:
                yield cur
            cur = nxt

    def __reversed__(self) -> Iterator[Node]:
        return iter(_NodeList(self.graph, not self.reverse))


class Graph:
    """A program as a list of nodes (see the module docstring)."""

    def __init__(self, owning_module: Any = None, tracer_cls: Any = None) -> None:
        self._root = Node(self, "", "output", "root", (), {})  # the list's sentinel
        self._len = 0
        self._insert: Callable[[Node], None] = self._root.prepend
        self._namespace = _Namespace()
        self.owning_module = owning_module
        self._tracer_cls = tracer_cls

    @property
    def nodes(self) -> _NodeList:
        return _NodeList(self)

    def find_nodes(self, *, op: str, target: Any = None) -> list[Node]:
        """The nodes with this ``op`` (and ``target``, if given), in order."""
        return [n for n in self.nodes if n.op == op and (target is None or n.target == target)]

    # ---------------------------------------------------------------- making nodes
    def create_node(
        self,
        op: str,
        target: Target,
        args: tuple[Argument, ...] | None = None,
        kwargs: dict[str, Argument] | None = None,
        name: str | None = None,
        type_expr: Any = None,
    ) -> Node:
        """A new node at the insert point (NOTE [fx names] for its name)."""
        args = tuple(args) if args is not None else ()
        kwargs = dict(kwargs) if kwargs is not None else {}
        candidate = name if name is not None else self._target_to_str(target)
        node = Node(
            self, self._namespace.create_name(candidate), op, target, args, kwargs, type_expr
        )
        self._insert(node)
        self._len += 1
        return node

    def placeholder(
        self, name: str, type_expr: Any = None, default_value: Any = inspect.Signature.empty
    ) -> Node:
        """An input of the graph (a parameter of the generated function)."""
        args = () if default_value is inspect.Signature.empty else (default_value,)
        return self.create_node("placeholder", name, args, type_expr=type_expr)

    def get_attr(self, qualified_name: str, type_expr: Any = None) -> Node:
        """A value read from the owning module (``self.<qualified_name>``)."""
        return self.create_node("get_attr", qualified_name, type_expr=type_expr)

    def call_function(
        self,
        the_function: Callable[..., Any],
        args: tuple[Argument, ...] | None = None,
        kwargs: dict[str, Argument] | None = None,
        type_expr: Any = None,
        name: str | None = None,
    ) -> Node:
        """A call of ``the_function`` (an op, or any Python callable)."""
        return self.create_node("call_function", the_function, args, kwargs, name, type_expr)

    def call_method(
        self,
        method_name: str,
        args: tuple[Argument, ...] | None = None,
        kwargs: dict[str, Argument] | None = None,
        type_expr: Any = None,
    ) -> Node:
        """A call of ``args[0].<method_name>(*args[1:], **kwargs)``."""
        return self.create_node("call_method", method_name, args, kwargs, type_expr=type_expr)

    def call_module(
        self,
        module_name: str,
        args: tuple[Argument, ...] | None = None,
        kwargs: dict[str, Argument] | None = None,
        type_expr: Any = None,
    ) -> Node:
        """A call of the owning module's submodule ``module_name``."""
        return self.create_node("call_module", module_name, args, kwargs, type_expr=type_expr)

    def output(self, result: Argument, type_expr: Any = None) -> Node:
        """The graph's result (the ``return`` of the generated function)."""
        return self.create_node("output", "output", (result,), type_expr=type_expr)

    def _target_to_str(self, target: Any) -> str:
        if callable(target):
            name = getattr(target, "__name__", None) or type(target).__name__
        else:
            name = str(target)
            if name.startswith("__") and name.endswith("__") and len(name) > 4:
                name = name[2:-2]
        return _snake(name)

    # ---------------------------------------------------------------- where nodes go
    def inserting_before(self, n: Node | None = None) -> contextlib.AbstractContextManager[None]:
        """``with graph.inserting_before(n):`` new nodes go just before ``n`` (at the start of
        the graph when ``n`` is None), as torch.fx."""
        if n is None:
            return self._inserting(self._root.append)
        return self._inserting(n.prepend)

    def inserting_after(self, n: Node | None = None) -> contextlib.AbstractContextManager[None]:
        """``with graph.inserting_after(n):`` each new node goes just after ``n`` (so several
        end up in reverse order, as in torch.fx); at the end of the graph when ``n`` is
        None."""
        if n is None:
            return self._inserting(self._root.prepend)
        return self._inserting(n.append)

    @contextlib.contextmanager
    def _inserting(self, insert: Callable[[Node], None]) -> Iterator[None]:
        saved = self._insert
        self._insert = insert
        try:
            yield
        finally:
            self._insert = saved

    # ---------------------------------------------------------------- removing, copying
    def erase_node(self, to_erase: Node) -> None:
        """Remove a node nobody uses."""
        if to_erase.users:
            raise RuntimeError(
                f"Tried to erase Node {to_erase} but it still had {len(to_erase.users)} users in "
                f"the graph: {to_erase.users}!"
            )
        if to_erase.graph is not self:
            raise RuntimeError(f"Attempting to remove {to_erase} from the wrong graph!")
        if to_erase._erased:
            return
        to_erase._remove_from_list()
        to_erase._erased = True
        self._len -= 1
        to_erase._update_args_kwargs((), {})

    def node_copy(
        self, node: Node, arg_transform: Callable[[Node], Argument] = lambda x: x
    ) -> Node:
        """A copy of ``node`` (from any graph) at the insert point, its node arguments
        mapped through ``arg_transform``."""
        args = map_arg(node.args, arg_transform)
        kwargs = map_arg(node.kwargs, arg_transform)
        new = self.create_node(node.op, node.target, args, kwargs, node.name, node.type)
        new.meta = dict(node.meta)
        return new

    def graph_copy(
        self, g: Graph, val_map: dict[Node, Node], return_output_node: bool = False
    ) -> Any:
        """Copy every node of ``g`` into this graph (``val_map`` maps ``g``'s nodes to the
        copies, and may pre-map placeholders); returns what ``g``'s output returned."""
        for node in g.nodes:
            if node in val_map:
                continue
            if node.op == "output":
                result = map_arg(node.args[0], lambda n: val_map[n])
                return (result, node) if return_output_node else result
            val_map[node] = self.node_copy(node, lambda n: val_map[n])
        return None

    # ---------------------------------------------------------------- passes, checks
    def eliminate_dead_code(self, is_impure_node: Callable[[Node], bool] | None = None) -> bool:
        """Remove nodes whose values nobody uses and that have no effect beside them
        (``Node.is_impure``: writes to an argument, random numbers, placeholders and the
        output stay). Returns whether anything was removed."""
        self.lint()
        impure = is_impure_node or (lambda n: n.is_impure())
        changed = False
        for node in reversed(self.nodes):
            if not node.users and not impure(node):
                self.erase_node(node)
                changed = True
        return changed

    def lint(self) -> None:
        """Check the graph's invariants: links both ways, unique names, every argument
        defined before its use and in this graph, at most one output, at the end."""
        seen: set[Node] = set()
        names: set[str] = set()
        outputs = 0
        for node in self.nodes:
            if node.graph is not self:
                raise RuntimeError(f"Node {node} does not belong to this graph")
            if node._next._prev is not node or node._prev._next is not node:
                raise RuntimeError(f"Node {node}: broken links")
            if node.name in names:
                raise RuntimeError(f"Node redefined name {node.name}!")
            names.add(node.name)
            for arg in node._input_nodes:
                if arg.graph is not self:
                    raise RuntimeError(
                        f"Argument '{arg}' of Node '{node}' does not belong to this Graph"
                    )
                if arg not in seen:
                    raise RuntimeError(
                        f"Argument '{arg}' of Node '{node}' was used before it has been defined!"
                    )
                if node not in arg.users:
                    raise RuntimeError(f"Node {arg} is missing user {node}")
            for user in node.users:
                if user._erased or node not in user._input_nodes:
                    raise RuntimeError(f"Node {node} lists {user} as a user, which does not use it")
            if node.op == "output":
                outputs += 1
                if node._next is not self._root:
                    raise RuntimeError(f"Node {node}: nodes follow the output")
            elif outputs:
                raise RuntimeError("Graph: a node follows the output")
            if node.op == "get_attr" and self.owning_module is not None:
                _check_attr(self.owning_module, str(node.target))
            seen.add(node)
        if outputs > 1:
            raise RuntimeError("Graph: more than one output node")

    # ---------------------------------------------------------------- printing
    def __str__(self) -> str:
        # as torch.fx prints it: placeholders as lines, and an empty ``graph():`` header
        lines = [f"    {node.format_node()}" for node in self.nodes]
        return "graph():\n" + "\n".join(lines)

    def print_tabular(self) -> None:
        """Print one row per node: opcode, name, target, args, kwargs."""
        rows = [["opcode", "name", "target", "args", "kwargs"]]
        for n in self.nodes:
            target = n.target if isinstance(n.target, str) else _target_name(n.target)
            rows.append([n.op, n.name, target, str(n.args), str(n.kwargs)])
        widths = [max(len(r[i]) for r in rows) for i in range(5)]
        lines = [
            "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows
        ]
        lines.insert(1, "  ".join("-" * w for w in widths))
        print("\n".join(lines))

    def python_code(self, root_module: str = "self") -> PythonCode:
        """The graph as Python source (``def forward(self, ...):``) and the globals it needs."""
        from ember.fx.codegen import python_code  # cycle: fx/codegen.py imports this module

        return python_code(self, root_module)


def _target_name(target: Any) -> str:
    return qualified_name(target)


def _check_attr(module: Any, qualified: str) -> None:
    obj = module
    for part in qualified.split("."):
        if not hasattr(obj, part):
            raise RuntimeError(f"Node referenced nonexistent target {qualified}")
        obj = getattr(obj, part)
