"""``Node``: one step of an fx ``Graph``, as ``torch.fx.Node``.

A node has an ``op`` (``placeholder``, ``get_attr``, ``call_function``, ``call_method``,
``call_module``, ``output``), a ``target`` (a name, or the function to call), ``args`` and
``kwargs`` in which other nodes stand for their values, and ``users``: the nodes whose
arguments mention it. Setting ``args``/``kwargs`` keeps both directions of use in step.

>>> g = ember.fx.Graph()
>>> x = g.placeholder("x")
>>> y = g.call_function(ember.ops.aten.relu.default, (x,))
>>> list(x.users), y.all_input_nodes
([relu_default], [x])
"""

from __future__ import annotations

import builtins
import operator
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ember.ops.registry import OpOverload, OpOverloadPacket, ops

if TYPE_CHECKING:
    from ember.fx.graph import Graph

__all__ = ["Node", "map_arg", "map_aggregate", "Argument", "Target"]

Target = Callable[..., Any] | str
Argument = Any  # a Node, a Python value, or tuples, lists, dicts and slices of them

OPS = ("placeholder", "call_method", "call_module", "call_function", "get_attr", "output")
#: functions whose calls do something beside their result (never dead code)
SIDE_EFFECTFUL: set[Callable[..., Any]] = {operator.setitem}


def map_aggregate(a: Argument, fn: Callable[[Any], Any]) -> Argument:
    """``fn`` applied to every leaf of ``a`` (through tuples, lists, dicts and slices).

    >>> from ember.fx.node import map_aggregate
    >>> map_aggregate((1, [2, {"k": 3}]), lambda v: v * 10)
    (10, [20, {'k': 30}])
    """
    t = type(a)
    if t is tuple:
        return tuple(map_aggregate(e, fn) for e in a)
    if isinstance(a, tuple):  # a named tuple keeps its type
        items = [map_aggregate(e, fn) for e in a]
        return t(*items) if hasattr(a, "_fields") else t(items)
    if isinstance(a, list):
        return [map_aggregate(e, fn) for e in a]
    if isinstance(a, dict):
        return {k: map_aggregate(v, fn) for k, v in a.items()}
    if isinstance(a, slice):
        return slice(
            map_aggregate(a.start, fn), map_aggregate(a.stop, fn), map_aggregate(a.step, fn)
        )
    return fn(a)


def map_arg(a: Argument, fn: Callable[[Node], Argument]) -> Argument:
    """``fn`` applied to every ``Node`` in ``a``; other values are kept.

    >>> from ember.fx.node import map_arg
    >>> g = ember.fx.Graph(); x = g.placeholder("x")
    >>> map_arg((x, 2), lambda n: n.name)
    ('x', 2)
    """
    return map_aggregate(a, lambda v: fn(v) if isinstance(v, Node) else v)


def _collect(a: Argument, into: dict[Node, None]) -> None:
    """The nodes of ``a``, in order of first appearance."""
    if isinstance(a, Node):
        into.setdefault(a)
    elif isinstance(a, (tuple, list)):
        for e in a:
            _collect(e, into)
    elif isinstance(a, dict):
        for e in a.values():
            _collect(e, into)
    elif isinstance(a, slice):
        _collect((a.start, a.stop, a.step), into)


def qualified_name(target: Any) -> str:
    """How generated code and printed graphs name a function: ``ember.ops.aten.add.Tensor``,
    ``operator.getitem``, ``module.function``.

    >>> import operator
    >>> from ember.fx.node import qualified_name
    >>> qualified_name(ember.ops.aten.add.Tensor), qualified_name(operator.getitem)
    ('ember.ops.aten.add.Tensor', 'operator.getitem')
    """
    if isinstance(target, OpOverload):
        return f"ember.ops.{target.namespace}.{target.__name__}"
    if isinstance(target, OpOverloadPacket):
        return f"ember.ops.{target._namespace}.{target.__name__}"
    plain = getattr(target, "__name__", "")
    if getattr(builtins, plain, None) is target:
        return f"builtins.{plain}"
    if getattr(ops.higher_order, plain, None) is target:  # cond, while_loop
        return f"ember.ops.higher_order.{plain}"
    public = public_name(target)
    if public is not None:
        return public
    name = getattr(target, "__qualname__", None) or getattr(target, "__name__", None)
    if name is None:
        name = type(target).__name__
    module = getattr(target, "__module__", None) or type(target).__module__
    if module == "_operator":
        module = "operator"
    return f"{module}.{name}"


#: the public namespaces a function is named from (``ember.relu``, not ``ember._bind.relu``)
PUBLIC_MODULES = (
    "ember",
    "ember.nn.functional",
    "ember.linalg",
    "ember.special",
    "ember.fft",
    "ember._C",
)
_PUBLIC: dict[int, tuple[Any, str | None]] = {}


def public_name(target: Any) -> str | None:
    """``ember.<name>`` (or ``ember.nn.functional.<name>``...) when ``target`` is that public
    function, as torch.fx prints ``torch.relu``; None otherwise.

    >>> from ember.fx.node import public_name
    >>> public_name(ember.relu), public_name(ember.nn.functional.gelu), public_name(print)
    ('ember.relu', 'ember.nn.functional.gelu', None)
    """
    found = _PUBLIC.get(id(target))
    if found is not None and found[0] is target:
        return found[1]
    name = getattr(target, "__name__", None)
    result = None
    if isinstance(name, str) and str(getattr(target, "__module__", "")).startswith("ember"):
        for module_name in PUBLIC_MODULES:
            module = sys.modules.get(module_name)
            if module is not None and getattr(module, name, None) is target:
                result = f"{module_name}.{name}"
                break
    _PUBLIC[id(target)] = (target, result)
    return result


def format_arg(a: Argument) -> str:
    """An argument as a printed graph shows it (a node as ``%name``)."""
    if isinstance(a, Node):
        return f"%{a.name}"
    if isinstance(a, list):
        return "[" + ", ".join(format_arg(e) for e in a) + "]"
    if isinstance(a, tuple) and not hasattr(a, "_fields"):
        inner = ", ".join(format_arg(e) for e in a)
        return f"({inner},)" if len(a) == 1 else f"({inner})"
    if isinstance(a, dict):
        return "{" + ", ".join(f"{k}: {format_arg(v)}" for k, v in a.items()) + "}"
    return str(a)


class Node:
    """One operation of a ``Graph`` (see the module docstring).

    >>> import operator
    >>> g = ember.fx.Graph(); x = g.placeholder("x")
    >>> print(g.call_function(operator.neg, (x,)).format_node())
    %neg : [num_users=0] = call_function[target=operator.neg](args = (%x,), kwargs = {})
    """

    def __init__(
        self,
        graph: Graph,
        name: str,
        op: str,
        target: Target,
        args: tuple[Argument, ...],
        kwargs: dict[str, Argument],
        return_type: Any = None,
    ) -> None:
        if op not in OPS:
            raise ValueError(f"Node: op must be one of {OPS}, got {op!r}")
        if op == "call_function" and not callable(target):
            raise ValueError(
                f"Node {name}: call_function's target must be callable, got {target!r}"
            )
        if op in ("placeholder", "get_attr", "call_method", "call_module", "output") and not (
            isinstance(target, str) or op == "output"
        ):
            raise ValueError(f"Node {name}: {op}'s target must be a string, got {target!r}")
        self.graph = graph
        self.name = name
        self.op = op
        self.target = target
        self.type = return_type
        self._input_nodes: dict[Node, None] = {}
        self.users: dict[Node, None] = {}
        self._args: tuple[Argument, ...] = ()
        self._kwargs: dict[str, Argument] = {}
        self._update_args_kwargs(args, kwargs)
        self.meta: dict[str, Any] = {}
        self._prev = self
        self._next = self
        self._erased = False

    # ---------------------------------------------------------------- list links
    @property
    def next(self) -> Node:
        """The node after this one (the graph's root sentinel after the last)."""
        return self._next

    @property
    def prev(self) -> Node:
        return self._prev

    def prepend(self, x: Node) -> None:
        """Move ``x`` to just before this node (within the same graph)."""
        if x.graph is not self.graph:
            raise RuntimeError("Node.prepend: the nodes belong to different graphs")
        if x is self:
            return
        x._remove_from_list()
        p = self._prev
        p._next, x._prev, x._next, self._prev = x, p, self, x

    def append(self, x: Node) -> None:
        """Move ``x`` to just after this node."""
        self._next.prepend(x)

    def _remove_from_list(self) -> None:
        p, n = self._prev, self._next
        p._next, n._prev = n, p
        self._prev = self._next = self

    # ---------------------------------------------------------------- arguments
    @property
    def args(self) -> tuple[Argument, ...]:
        return self._args

    @args.setter
    def args(self, a: tuple[Argument, ...]) -> None:
        self._update_args_kwargs(tuple(a), self._kwargs)

    @property
    def kwargs(self) -> dict[str, Argument]:
        return self._kwargs

    @kwargs.setter
    def kwargs(self, k: dict[str, Argument]) -> None:
        self._update_args_kwargs(self._args, dict(k))

    @property
    def all_input_nodes(self) -> list[Node]:
        """The nodes this one's arguments mention, in order of first appearance."""
        return list(self._input_nodes)

    def update_arg(self, idx: int, arg: Argument) -> None:
        args = list(self._args)
        args[idx] = arg
        self.args = tuple(args)

    def update_kwarg(self, key: str, arg: Argument) -> None:
        self.kwargs = {**self._kwargs, key: arg}

    def _update_args_kwargs(self, args: tuple[Argument, ...], kwargs: dict[str, Argument]) -> None:
        for old in self._input_nodes:
            old.users.pop(self, None)
        self._args, self._kwargs = args, kwargs
        found: dict[Node, None] = {}
        _collect(args, found)
        _collect(kwargs, found)
        self._input_nodes = found
        for n in found:
            if n.graph is not self.graph:
                raise RuntimeError(
                    f"Node {self.name}: argument {n.name} belongs to another graph; copy it in "
                    "with Graph.node_copy first"
                )
            n.users.setdefault(self)

    def replace_all_uses_with(
        self,
        replace_with: Node,
        delete_user_cb: Callable[[Node], bool] = lambda user: True,
        *,
        propagate_meta: bool = False,
    ) -> list[Node]:
        """Make every user (for which ``delete_user_cb`` says yes) read ``replace_with``
        instead of this node; returns the users changed.

        >>> g = ember.fx.Graph(); x, y = g.placeholder("x"), g.placeholder("y")
        >>> r = g.call_function(ember.ops.aten.neg.default, (x,))
        >>> x.replace_all_uses_with(y), r.args
        ([neg_default], (y,))
        """
        if propagate_meta:
            for k, v in self.meta.items():
                replace_with.meta.setdefault(k, v)
        changed = [u for u in list(self.users) if delete_user_cb(u)]
        for user in changed:
            user._replace_input(self, replace_with)
        return changed

    def replace_input_with(self, old_input: Node, new_input: Node) -> None:
        """Read ``new_input`` wherever the arguments mention ``old_input``."""
        self._replace_input(old_input, new_input)

    def _replace_input(self, old: Node, new: Node) -> None:
        def swap(n: Node) -> Node:
            return new if n is old else n

        self._update_args_kwargs(map_arg(self._args, swap), map_arg(self._kwargs, swap))

    # ---------------------------------------------------------------- properties
    def is_impure(self) -> bool:
        """Whether removing this node could change what the graph does: placeholders,
        outputs, side-effectful functions and ops whose schema writes an argument (or that
        draw random numbers).

        >>> g = ember.fx.Graph(); x = g.placeholder("x")
        >>> g.call_function(ember.ops.aten.add_.Tensor, (x, x)).is_impure()
        True
        """
        if self.op in ("placeholder", "output"):
            return True
        if self.op == "call_function":
            return target_is_impure(self.target)
        if self.op == "call_module":
            mod = self.graph.owning_module
            sub = mod.get_submodule(self.target) if mod is not None else None  # type: ignore[arg-type]
            return bool(getattr(sub, "_is_impure", False))
        return False

    # ---------------------------------------------------------------- printing
    def format_node(
        self,
        placeholder_names: list[str] | None = None,
        maybe_return_typename: list[str] | None = None,
    ) -> str | None:
        """This node as a line of ``str(graph)``; a placeholder's name is appended to
        ``placeholder_names`` instead when that list is given (None is returned)."""
        if self.op == "placeholder":
            if placeholder_names is not None:
                placeholder_names.append(str(self.target))
                return None
            default = f"(default={self.args[0]})" if self.args else ""
            return (
                f"%{self.name} : {self._users_text()} = placeholder[target={self.target}]{default}"
            )
        if self.op == "get_attr":
            return f"%{self.name} : {self._users_text()} = get_attr[target={self.target}]"
        if self.op == "output":
            return f"return {self.args[0] if self.args else None}"
        target = self.target if isinstance(self.target, str) else qualified_name(self.target)
        return (
            f"%{self.name} : {self._users_text()} = {self.op}[target={target}]"
            f"(args = {format_arg(self.args)}, kwargs = {format_arg(self.kwargs)})"
        )

    def _users_text(self) -> str:
        return f"[num_users={len(self.users)}]"

    def __repr__(self) -> str:
        return self.name


def target_is_impure(target: Any) -> bool:
    """A call of ``target`` has effects beside its result: it writes an argument (a
    mutable schema), draws random numbers, or is a known side-effectful function."""
    if isinstance(target, OpOverload):
        return target._schema.is_mutable or is_random(target)
    return target in SIDE_EFFECTFUL or bool(getattr(target, "_ember_mutates", ()))


#: ops that draw random numbers (besides any op taking a Generator): never merged, folded
#: or removed as if two calls gave the same values
RANDOM_OPS = frozenset({
    "rand", "randn", "randint", "rand_like", "randn_like", "randint_like", "randperm",
    "native_dropout", "dropout", "bernoulli", "normal", "multinomial", "poisson",
})  # fmt: skip


def is_random(op: Any) -> bool:
    schema = op._schema
    return op.overloadpacket.__name__ in RANDOM_OPS or any(
        a.type.base == "Generator" for a in schema.arguments
    )
