"""What a node does beside computing its value: which arguments it writes, which argument's
storage its value may share, whether two calls with the same arguments give the same value.

NOTE [storage roots]
Passes that write into a buffer (in-place reuse, buffer reuse) must know every node that can
see the buffer. ``storage_roots`` gives each node the set of nodes whose storage its value
may share: its own node for a fresh result; for a view (an op whose schema returns an alias
of an argument, or the lowering's ``view``/``laid_out``), the roots of that argument; for
``getitem``, the roots of the tuple it reads. A buffer is dead after a node when no later
node reads any node sharing one of its roots, and no root of it is a graph result.

A few CPU kernels that are not views by schema return an input's storage for some arguments
(``_unsafe_view``; ``dropout`` when it does nothing; ``conj_physical`` of a real tensor):
``MAY_ALIAS`` lists them (found by running every op's samples and checking
``np.shares_memory``; ``tests/test_compiler.py`` repeats the check), and their values count
as views of their first argument.
"""

from __future__ import annotations

import operator

from ember.fx.node import Node, is_random, target_is_impure
from ember.ops.registry import OpOverload

#: packets whose CPU kernel may return (a view of) its first tensor argument's storage
MAY_ALIAS = frozenset({"_unsafe_view", "dropout", "conj_physical", "alias", "detach"})


def mutated_args(node: Node) -> list[Node]:
    """The argument nodes ``node`` writes (in schema order)."""
    target = node.target
    if node.op != "call_function":
        return []
    if isinstance(target, OpOverload):
        schema = target._schema
        if not schema.is_mutable:
            return []
        out: list[Node] = []
        positional = schema.positional
        for i in schema.mutated_indices:
            a = schema.arguments[i]
            value = None
            if not a.kwarg_only and a in positional and positional.index(a) < len(node.args):
                value = node.args[positional.index(a)]
            else:
                value = node.kwargs.get(a.name)
            for v in value if isinstance(value, (list, tuple)) else (value,):
                if isinstance(v, Node):
                    out.append(v)
        return out
    slots = getattr(target, "_ember_mutates", ())
    return [node.args[i] for i in slots if isinstance(node.args[i], Node)]


def aliased_args(node: Node) -> list[Node]:
    """The argument nodes whose storage ``node``'s value may share."""
    target = node.target
    if node.op != "call_function":
        return []
    if target is operator.getitem:
        return [node.args[0]] if isinstance(node.args[0], Node) else []
    if isinstance(target, OpOverload):
        schema = target._schema
        sets: set[str] = set()
        for r in schema.returns:
            if r.alias_info is not None:
                sets |= set(r.alias_info.before_set)
        out = []
        if sets:
            for i, a in enumerate(schema.positional):
                if a.alias_info is not None and set(a.alias_info.before_set) & sets:
                    if i < len(node.args) and isinstance(node.args[i], Node):
                        out.append(node.args[i])
            for a in schema.kwarg_only:
                if a.alias_info is not None and set(a.alias_info.before_set) & sets:
                    v = node.kwargs.get(a.name)
                    if isinstance(v, Node):
                        out.append(v)
        if target.overloadpacket.__name__ in MAY_ALIAS and node.args:
            first = node.args[0]
            if isinstance(first, Node):
                out.append(first)
        return out
    slot = getattr(target, "_ember_alias", None)
    if slot is not None and isinstance(node.args[slot], Node):
        return [node.args[slot]]
    return []


def is_pure(node: Node) -> bool:
    """Calling ``node``'s target twice with equal arguments gives equal values and does
    nothing else (no writes, no random numbers)."""
    if node.op != "call_function":
        return node.op == "get_attr"
    target = node.target
    if isinstance(target, OpOverload):
        return not target._schema.is_mutable and not is_random(target)
    if target is operator.getitem:
        return True
    return bool(getattr(target, "_ember_pure", False)) and not target_is_impure(target)


def storage_roots(nodes: list[Node]) -> dict[Node, frozenset[Node]]:
    """For each node, the nodes whose storage its value may share (NOTE [storage roots])."""
    roots: dict[Node, frozenset[Node]] = {}
    for node in nodes:
        shared = aliased_args(node)
        if not shared:
            roots[node] = frozenset((node,))
        else:
            acc: set[Node] = set()
            for a in shared:
                acc |= roots.get(a, frozenset((a,)))
            roots[node] = frozenset(acc)
    return roots


def output_roots(nodes: list[Node], roots: dict[Node, frozenset[Node]]) -> set[Node]:
    """Roots of every value the graph returns (their storage outlives the graph)."""
    found: set[Node] = set()
    for node in nodes:
        if node.op == "output":
            for n in node.all_input_nodes:
                found |= roots[n]
    return found


def readers(nodes: list[Node], roots: dict[Node, frozenset[Node]]) -> dict[Node, list[int]]:
    """For each root, the positions (in ``nodes``) of the nodes that read a value sharing
    its storage."""
    out: dict[Node, list[int]] = {}
    for k, node in enumerate(nodes):
        for a in node.all_input_nodes:
            for r in roots[a]:
                out.setdefault(r, []).append(k)
    return out
