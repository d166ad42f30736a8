"""Nested containers as trees of leaves, as ``torch.utils._pytree``: ``__torch_dispatch__``
handlers use ``tree_map`` to unwrap and rewrap the tensors in an op's arguments.

Nodes are tuples, lists, dicts (in insertion order), ``OrderedDict``, ``defaultdict``,
``deque``, named tuples and anything ``register_pytree_node`` adds; everything else, ``None``
included (as in PyTorch 2.13), is a leaf.

>>> from ember.utils._pytree import tree_flatten, tree_unflatten
>>> leaves, spec = tree_flatten([1, (2, None), {"a": 3}])
>>> leaves
[1, 2, None, 3]
>>> tree_unflatten([x * 10 for x in leaves if x is not None] + [None], spec)
[10, (20, 30), {'a': None}]
"""

from __future__ import annotations

from collections import OrderedDict, defaultdict, deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

__all__ = [
    "GetAttrKey",
    "KeyPath",
    "LeafSpec",
    "MappingKey",
    "PyTree",
    "SequenceKey",
    "TreeSpec",
    "keystr",
    "register_pytree_node",
    "tree_flatten",
    "tree_flatten_with_path",
    "tree_leaves",
    "tree_leaves_with_path",
    "tree_map",
    "tree_map_only",
    "tree_map_with_path",
    "tree_structure",
    "tree_unflatten",
]

#: a nested structure of containers and leaves (an annotation, as PyTorch's)
PyTree = Any
FlattenFn = Callable[[Any], tuple[list[Any], Any]]
UnflattenFn = Callable[[Iterable[Any], Any], Any]


@dataclass(frozen=True)
class SequenceKey:
    """A child's place in a sequence node: ``[0]``."""

    idx: int

    def __str__(self) -> str:
        return f"[{self.idx!r}]"

    def get(self, sequence: Any) -> Any:
        return sequence[self.idx]


@dataclass(frozen=True)
class MappingKey:
    """A child's key in a mapping node: ``['a']``."""

    key: Any

    def __str__(self) -> str:
        return f"[{self.key!r}]"

    def get(self, mapping: Any) -> Any:
        return mapping[self.key]


@dataclass(frozen=True)
class GetAttrKey:
    """A child's attribute name in a named tuple (or a registered class): ``.x``."""

    name: str

    def __str__(self) -> str:
        return f".{self.name}"

    def get(self, obj: Any) -> Any:
        return getattr(obj, self.name)


KeyEntry = Any
KeyPath = tuple[KeyEntry, ...]
FlattenWithKeysFn = Callable[[Any], tuple[list[tuple[KeyEntry, Any]], Any]]


class NodeDef(NamedTuple):
    type: type
    flatten: FlattenFn
    unflatten: UnflattenFn
    flatten_with_keys: FlattenWithKeysFn | None = None


SUPPORTED_NODES: dict[type, NodeDef] = {}
#: types found to be leaves (no node registered, not a named tuple), so ``_map`` calls
#: ``func`` on their instances at once; emptied by every registration
_LEAVES: set[type] = set()


def register_pytree_node(
    cls: type,
    flatten_fn: FlattenFn,
    unflatten_fn: UnflattenFn,
    *,
    serialized_type_name: str | None = None,
    flatten_with_keys_fn: FlattenWithKeysFn | None = None,
    **_: Any,
) -> None:
    """Make instances of ``cls`` tree nodes: ``flatten_fn(x) -> (children, context)`` and
    ``unflatten_fn(children, context) -> x`` (``flatten_with_keys_fn(x) -> ([(key, child),
    ...], context)`` serves ``tree_flatten_with_path``).

    >>> from ember.utils._pytree import register_pytree_node, tree_leaves
    >>> class Pair:
    ...     def __init__(self, a, b):
    ...         self.a, self.b = a, b
    >>> register_pytree_node(Pair, lambda p: ([p.a, p.b], None), lambda v, _: Pair(*v))
    >>> tree_leaves([Pair(1, 2), 3])
    [1, 2, 3]
    """
    if cls in SUPPORTED_NODES:
        raise ValueError(f"{cls} is already registered as a pytree node")
    SUPPORTED_NODES[cls] = NodeDef(cls, flatten_fn, unflatten_fn, flatten_with_keys_fn)
    _LEAVES.clear()


def _register_pytree_node(
    cls: type,
    flatten_fn: FlattenFn,
    unflatten_fn: UnflattenFn,
    to_str_fn: Any = None,
    maybe_from_str_fn: Any = None,
    *,
    serialized_type_name: str | None = None,
    flatten_with_keys_fn: FlattenWithKeysFn | None = None,
    **_: Any,
) -> None:
    """PyTorch's older name and signature for ``register_pytree_node`` (the string
    conversion functions it took are ignored, as PyTorch now does)."""
    register_pytree_node(
        cls,
        flatten_fn,
        unflatten_fn,
        serialized_type_name=serialized_type_name,
        flatten_with_keys_fn=flatten_with_keys_fn,
    )


def _seq_keys(x: Any) -> tuple[list[tuple[KeyEntry, Any]], Any]:
    return [(SequenceKey(i), v) for i, v in enumerate(x)], None


def _map_keys(d: Any) -> tuple[list[tuple[KeyEntry, Any]], Any]:
    return [(MappingKey(k), v) for k, v in d.items()], list(d)


register_pytree_node(
    tuple, lambda t: (list(t), None), lambda v, _: tuple(v), flatten_with_keys_fn=_seq_keys
)
register_pytree_node(
    list, lambda x: (list(x), None), lambda v, _: list(v), flatten_with_keys_fn=_seq_keys
)
register_pytree_node(
    dict,
    lambda d: (list(d.values()), list(d)),
    lambda v, keys: dict(zip(keys, v, strict=True)),
    flatten_with_keys_fn=_map_keys,
)
register_pytree_node(
    OrderedDict,
    lambda d: (list(d.values()), list(d)),
    lambda v, keys: OrderedDict(zip(keys, v, strict=True)),
    flatten_with_keys_fn=_map_keys,
)
register_pytree_node(
    defaultdict,
    lambda d: (list(d.values()), (d.default_factory, list(d))),
    lambda v, c: defaultdict(c[0], zip(c[1], v, strict=True)),
    flatten_with_keys_fn=lambda d: (_map_keys(d)[0], (d.default_factory, list(d))),
)
register_pytree_node(
    deque,
    lambda d: (list(d), d.maxlen),
    lambda v, maxlen: deque(v, maxlen=maxlen),
    flatten_with_keys_fn=lambda d: (_seq_keys(d)[0], d.maxlen),
)


def _is_namedtuple(t: type) -> bool:
    return issubclass(t, tuple) and hasattr(t, "_fields")


def _node_of(x: Any) -> tuple[type, NodeDef] | None:
    t = type(x)
    node = SUPPORTED_NODES.get(t)
    if node is not None:
        return t, node
    if _is_namedtuple(t):
        return t, _NAMEDTUPLE
    return None


_NAMEDTUPLE = NodeDef(
    tuple,
    lambda t: (list(t), type(t)),
    lambda v, cls: cls(*v),
    lambda t: ([(GetAttrKey(f), v) for f, v in zip(t._fields, t, strict=True)], type(t)),
)  # context: the class


@dataclass(frozen=True)
class TreeSpec:
    """The shape of a tree: a node's type, its context (dict keys, a named tuple's class) and
    its children's specs; a leaf is ``LeafSpec()``."""

    type: Any
    context: Any
    children_specs: list[TreeSpec] = field(default_factory=list)

    @property
    def num_leaves(self) -> int:
        return sum(c.num_leaves for c in self.children_specs)

    @property
    def num_children(self) -> int:
        return len(self.children_specs)

    def is_leaf(self) -> bool:
        return False

    @property
    def num_nodes(self) -> int:
        """Nodes and leaves, this one included."""
        return 1 + sum(c.num_nodes for c in self.children_specs)

    def unflatten(self, leaves: Iterable[Any]) -> Any:
        return tree_unflatten(leaves, self)

    def __repr__(self, indent: int = 0) -> str:
        """PyTorch's layout: the first child on the opening line, each further child on a
        line of its own, indented two more per level.

        >>> from ember.utils._pytree import tree_structure
        >>> print(tree_structure([1, (2, 3)]))
        TreeSpec(list, None, [*,
          TreeSpec(tuple, None, [*,
            *])])
        """
        name = self.type.__name__ if isinstance(self.type, type) else str(self.type)
        if self.type is tuple and isinstance(self.context, type):
            name = "namedtuple"
        inner = ""
        if self.children_specs:
            indent += 2
            first, *rest = self.children_specs
            inner = first.__repr__(indent) + ("," if rest else "")
            inner += ",".join("\n" + " " * indent + c.__repr__(indent) for c in rest)
        return f"TreeSpec({name}, {self.context}, [{inner}])"


class LeafSpec(TreeSpec):
    """The spec of a leaf."""

    def __init__(self) -> None:
        super().__init__(None, None, [])

    @property
    def num_leaves(self) -> int:
        return 1

    @property
    def num_nodes(self) -> int:
        return 1

    def is_leaf(self) -> bool:
        return True

    def __repr__(self, indent: int = 0) -> str:
        return "*"


_LEAF = LeafSpec()


def tree_flatten(
    tree: Any, is_leaf: Callable[[Any], bool] | None = None
) -> tuple[list[Any], TreeSpec]:
    """The leaves of ``tree``, left to right, and its spec."""
    leaves: list[Any] = []
    spec = _flatten(tree, leaves, is_leaf)
    return leaves, spec


def _flatten(tree: Any, leaves: list[Any], is_leaf: Callable[[Any], bool] | None) -> TreeSpec:
    found = None if is_leaf is not None and is_leaf(tree) else _node_of(tree)
    if found is None:
        leaves.append(tree)
        return _LEAF
    t, node = found
    children, context = node.flatten(tree)
    specs = [_flatten(c, leaves, is_leaf) for c in children]
    return TreeSpec(t if node is not _NAMEDTUPLE else tuple, context, specs)


def tree_unflatten(leaves: Iterable[Any], treespec: TreeSpec) -> Any:
    """The tree of shape ``treespec`` holding ``leaves``."""
    values = list(leaves)
    if len(values) != treespec.num_leaves:
        raise ValueError(
            f"tree_unflatten(leaves, treespec): treespec has {treespec.num_leaves} leaves, "
            f"but {len(values)} were given"
        )
    it = iter(values)
    return _build(treespec, it)


def _build(spec: TreeSpec, it: Any) -> Any:
    if spec.is_leaf():
        return next(it)
    children = [_build(c, it) for c in spec.children_specs]
    if spec.type is tuple and isinstance(spec.context, type):
        return _NAMEDTUPLE.unflatten(children, spec.context)
    return SUPPORTED_NODES[spec.type].unflatten(children, spec.context)


def tree_leaves(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> list[Any]:
    """The leaves of ``tree``, left to right."""
    return tree_flatten(tree, is_leaf)[0]


def tree_structure(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> TreeSpec:
    """The spec of ``tree``."""
    return tree_flatten(tree, is_leaf)[1]


def tree_map(
    func: Callable[..., Any],
    tree: Any,
    *rests: Any,
    is_leaf: Callable[[Any], bool] | None = None,
) -> Any:
    """``tree`` with ``func`` applied to every leaf (with the matching leaves of ``rests``).

    >>> from ember.utils._pytree import tree_map
    >>> tree_map(lambda x: x + 1, {"a": [1, 2], "b": (3,)})
    {'a': [2, 3], 'b': (4,)}
    """
    if not rests and is_leaf is None:
        return _map(func, tree)
    leaves, spec = tree_flatten(tree, is_leaf)
    if not rests:
        return tree_unflatten([func(x) for x in leaves], spec)
    others = [tree_flatten(r, is_leaf)[0] for r in rests]
    return tree_unflatten([func(*xs) for xs in zip(leaves, *others, strict=True)], spec)


def _map(func: Callable[[Any], Any], x: Any) -> Any:
    """``tree_map`` of one tree, without building a spec (handlers call it on every op):
    the elements of tuples, lists and dicts that are leaves get ``func`` directly. Plain
    loops, not comprehensions: on Python 3.11 each comprehension is a call of its own."""
    t = type(x)
    leaves = _LEAVES
    if t is tuple or t is list:
        out = []
        for e in x:
            out.append(func(e) if type(e) in leaves else _map(func, e))
        return tuple(out) if t is tuple else out
    if t is dict:
        d = {}
        for k, v in x.items():
            d[k] = func(v) if type(v) in leaves else _map(func, v)
        return d
    if t in leaves:
        return func(x)
    found = _node_of(x)
    if found is None:
        leaves.add(t)
        return func(x)
    _, node = found
    children, context = node.flatten(x)
    return node.unflatten([_map(func, c) for c in children], context)


def tree_map_only(
    type_or_types: type | tuple[type, ...],
    func: Callable[[Any], Any],
    tree: Any,
    is_leaf: Callable[[Any], bool] | None = None,
) -> Any:
    """``tree`` with ``func`` applied to the leaves that are instances of ``type_or_types``.

    >>> from ember.utils._pytree import tree_map_only
    >>> tree_map_only(int, lambda x: -x, [1, "s", 2.0])
    [-1, 's', 2.0]
    """
    return tree_map(lambda x: func(x) if isinstance(x, type_or_types) else x, tree, is_leaf=is_leaf)


def tree_flatten_with_path(
    tree: Any, is_leaf: Callable[[Any], bool] | None = None
) -> tuple[list[tuple[KeyPath, Any]], TreeSpec]:
    """``tree_flatten`` with each leaf's key path (``SequenceKey``, ``MappingKey``,
    ``GetAttrKey`` entries from the root).

    >>> from ember.utils._pytree import tree_flatten_with_path, keystr
    >>> pairs, _ = tree_flatten_with_path({"a": [1, 2]})
    >>> [(keystr(path), leaf) for path, leaf in pairs]
    [("['a'][0]", 1), ("['a'][1]", 2)]
    """
    pairs: list[tuple[KeyPath, Any]] = []
    _paths(tree, (), pairs, is_leaf)
    return pairs, tree_structure(tree, is_leaf)


def _paths(
    tree: Any, path: KeyPath, out: list[tuple[KeyPath, Any]], is_leaf: Callable[[Any], bool] | None
) -> None:
    found = None if is_leaf is not None and is_leaf(tree) else _node_of(tree)
    if found is None:
        out.append((path, tree))
        return
    t, node = found
    if node.flatten_with_keys is None:
        raise ValueError(
            f"Did not find a flatten_with_keys_fn for type: {t}. Please pass a "
            "flatten_with_keys_fn argument to register_pytree_node."
        )
    children, _ = node.flatten_with_keys(tree)
    for key, child in children:
        _paths(child, (*path, key), out, is_leaf)


def tree_leaves_with_path(
    tree: Any, is_leaf: Callable[[Any], bool] | None = None
) -> list[tuple[KeyPath, Any]]:
    """The (key path, leaf) pairs of ``tree``, left to right."""
    return tree_flatten_with_path(tree, is_leaf)[0]


def tree_map_with_path(
    func: Callable[..., Any],
    tree: Any,
    *rests: Any,
    is_leaf: Callable[[Any], bool] | None = None,
) -> Any:
    """``tree`` with ``func(path, leaf, *other_leaves)`` applied to every leaf."""
    pairs, spec = tree_flatten_with_path(tree, is_leaf)
    others = [tree_leaves(r, is_leaf) for r in rests]
    values = [func(p, x, *xs) for (p, x), *xs in zip(pairs, *others, strict=True)]
    return tree_unflatten(values, spec)


def keystr(kp: KeyPath) -> str:
    """A key path as the Python expression that indexes it: ``"['a'][0].x"``."""
    return "".join(str(k) for k in kp)
