"""In-place reuse: an op that writes a copy of a value writes the value itself when the old
value is dead.

NOTE [in-place reuse]
The lowering gives every op that writes an argument a copy to write (``array_ops.copy``,
and ``copy_laid_out`` before a ``write_region_``; NOTE [lowering]). The copy is dropped, and
the op writes the value's own storage, when nothing can read the old value after the write:

- every node sharing the storage (NOTE [storage roots]) is a value this graph computed, or a
  placeholder marked ``donated`` (the executor proved nobody else holds its array: NOTE
  [donated inputs] in ``ember/lazy/executor.py``); never a constant;
- no shared node is returned by the graph (kept for the caller);
- no node reads the storage at the write (but through the copy) or after it;
- the source is not a broadcast view (stride 0: writing it would write one element twice).

A dropped ``copy`` is replaced by its source; a dropped ``copy_laid_out`` becomes
``laid_out`` (the source itself when it already has the layout). ``inplace_updates``
counts them; a placeholder that only failed the first rule is marked ``wants_donation``, so
the executor knows which inputs to offer.

>>> from ember.compiler import array_ops
>>> from ember.compiler.inplace import reuse_inputs_in_place
>>> g = ember.fx.Graph(); x = g.placeholder("x")
>>> y = g.call_function(ember.ops.aten.exp.default, (x,))
>>> c = g.call_function(array_ops.copy, (y,))
>>> w = g.call_function(ember.ops.aten.add_.Tensor, (c, x))
>>> _ = g.output(w)
>>> [n.name for n in reuse_inputs_in_place(g).nodes]
['x', 'exp_default', 'add__tensor', 'output']
"""

from __future__ import annotations

import operator
from typing import Any

from ember.compiler import array_ops, buffers, metrics
from ember.compiler.effects import mutated_args, output_roots, readers, storage_roots
from ember.fx.graph import Graph
from ember.fx.node import Node, is_random
from ember.ops.native._define import VARIANTS_OF
from ember.ops.registry import OpOverload

_COPIES = (array_ops.copy, array_ops.copy_laid_out)


def reuse_inputs_in_place(graph: Graph) -> Graph:
    """Drop the copies whose source is dead after the write (NOTE [in-place reuse])."""
    nodes = list(graph.nodes)
    position = {n: k for k, n in enumerate(nodes)}
    roots = storage_roots(nodes)
    kept = output_roots(nodes, roots)
    reads = readers(nodes, roots)
    sharing: dict[Node, set[Node]] = {}  # root -> nodes whose roots include it
    for n, rs in roots.items():
        for r in rs:
            sharing.setdefault(r, set()).add(n)
    done = 0
    for c in nodes:
        if c.op != "call_function" or c.target not in _COPIES:
            continue
        src = c.args[0]
        if not isinstance(src, Node):
            continue
        writer = next(
            (u for u in sorted(c.users, key=position.__getitem__) if c in mutated_args(u)), None
        )
        if writer is None:
            continue
        shared = roots[src]
        if any(r.op == "get_attr" or r in kept for r in shared):
            continue
        at = position[writer]
        if any(k >= at for r in shared for k in reads.get(r, ())):
            continue
        if _broadcast(src):
            continue
        blocked = [r for r in shared if r.op == "placeholder" and not r.meta.get("donated")]
        if blocked:
            if len(shared) == 1:
                blocked[0].meta["wants_donation"] = True
            continue
        # the op writes the source's storage; whoever read the copy reads it from now on
        erased = c.target is array_ops.copy
        if erased:
            c.replace_all_uses_with(src)
            graph.erase_node(c)
        else:
            c.target = array_ops.laid_out
        moved = reads.pop(c, [])
        for r in shared:
            here = reads.setdefault(r, [])
            if erased:
                here[:] = [k for k in here if k != position[c]]
            here.extend(moved)
        for n in sharing.pop(c, set()):
            roots[n] = (roots[n] - {c}) | shared
            for r in shared:
                sharing.setdefault(r, set()).add(n)
        if c in kept:
            kept |= shared
        done += 1
    if done:
        metrics.count("inplace_updates", done)
    return graph


def _broadcast(src: Node) -> bool:
    """A view with a stride-0 dim of more than one element (or a node made from one)."""
    if src.op == "call_function" and src.target is array_ops.view:
        shape, strides = src.args[2], src.args[4]
        return any(s == 0 and n != 1 for n, s in zip(shape, strides, strict=True))
    return False


# NOTE [updates in place]
# The Functionalize key records an in-place op as its functional op and rebinds what it
# wrote (NOTE [functionalize] in ``ember/functionalize/fallback.py``): an optimizer's
# ``p.add_(g, alpha=-lr)`` is ``add(p, g)``, a new value. Where the old value is dead after
# the call, the call becomes its in-place variant again (``add`` -> ``add_``,
# ``_foreach_mul.List`` -> ``_foreach_mul_.List``) and writes the old value's storage:
#
# - the op has an in-place variant and is not random; its first argument (each element, for
#   a list) is a value of its own storage (no view), read by nothing after the call, not
#   returned by the graph, not a constant, and appears in no other argument of the call;
# - the result has exactly the first argument's shape, strides and dtype (element by
#   element for a list), so the in-place op computes the same numbers in the same place;
# - a placeholder must be donated (nobody else holds its array: NOTE [donated inputs] in
#   ``ember/lazy/executor.py``); otherwise it is marked ``wants_donation``;
# - on the NumPy tiers, a call the code generator writes as a direct NumPy call with
#   ``out=`` is left to buffer reuse, which writes it in place with NumPy itself (NOTE
#   [buffer reuse]).
#
# ``inplace_updates`` counts the calls rewritten.


def update_in_place(graph: Graph, leave_direct: bool = False) -> Graph:
    """Turn updates of dead values back into in-place calls (NOTE [updates in place]);
    ``leave_direct``: leave the calls the NumPy tier writes directly to buffer reuse."""
    done = 0
    changed = True
    while changed:  # each rewrite changes what shares storage: look again
        changed = False
        nodes = list(graph.nodes)
        position = {n: k for k, n in enumerate(nodes)}
        roots = storage_roots(nodes)
        kept = output_roots(nodes, roots)
        reads = readers(nodes, roots)
        for n in nodes:
            variant = _inplace_variant(n)
            if variant is None or (leave_direct and buffers.direct_with_out(n)):
                continue
            selves = _selves(n)
            if selves is None or not _fits(n, selves):
                continue
            at = position[n]
            others = _flat(list(n.args[1:])) + _flat(list(n.kwargs.values()))
            ok = True
            for s in selves:
                if roots[s] != frozenset((s,)) or s in kept or s.op == "get_attr":
                    ok = False
                elif any(k > at for k in reads.get(s, ())) or s in others:
                    ok = False
                elif s.op == "placeholder" and not s.meta.get("donated"):
                    s.meta["wants_donation"] = True
                    ok = False
            if not ok:
                continue
            n.target = variant
            if isinstance(n.args[0], (list, tuple)):  # foreach: its items are the selves
                for u in list(n.users):
                    if u.target is operator.getitem:
                        u.replace_all_uses_with(n.args[0][u.args[1]])
                        graph.erase_node(u)
            done += 1
            changed = True
            break
    if done:
        metrics.count("inplace_updates", done)
    return graph


def update_in_place_but_direct(graph: Graph) -> Graph:
    """``update_in_place``, leaving the calls the NumPy tier writes directly to buffer
    reuse (NOTE [updates in place])."""
    return update_in_place(graph, leave_direct=True)


def _inplace_variant(n: Node) -> OpOverload | None:
    if n.op != "call_function" or not isinstance(n.target, OpOverload) or not n.args:
        return None
    if is_random(n.target):
        return None
    variants = VARIANTS_OF.get(n.target)
    return variants[0] if variants is not None else None


def _selves(n: Node) -> list[Node] | None:
    first = n.args[0]
    if isinstance(first, Node):
        return [first]
    if isinstance(first, (list, tuple)) and first and all(isinstance(a, Node) for a in first):
        if len(set(first)) != len(first):
            return None
        return list(first)
    return None


def _meta(n: Node) -> Any:
    tm = n.meta.get("tensor_meta")
    if tm is None or not hasattr(tm, "shape"):
        return None
    return (tuple(tm.shape), tuple(tm.stride), tm.dtype)


def _fits(n: Node, selves: list[Node]) -> bool:
    """The result is laid out exactly as the first argument (each item, for a list)."""
    if isinstance(n.args[0], Node):
        want = _meta(selves[0])
        return want is not None and _meta(n) == want
    items: dict[int, Node] = {}
    for u in n.users:
        if u.target is not operator.getitem:
            return False
        items[u.args[1]] = u
    for i, s in enumerate(selves):
        want = _meta(s)
        if want is None or (i in items and _meta(items[i]) != want):
            return False
    return True


def _flat(xs: list[Any]) -> list[Any]:
    out: list[Any] = []
    for x in xs:
        if isinstance(x, (list, tuple)):
            out.extend(_flat(list(x)))
        else:
            out.append(x)
    return out
