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

>>> g = ember.fx.Graph(); x = g.placeholder("x")
>>> y = g.call_function(ember.ops.aten.exp.default, (x,))
>>> c = g.call_function(array_ops.copy, (y,))
>>> w = g.call_function(ember.ops.aten.add_.Tensor, (c, x))
>>> _ = g.output(w)
>>> [n.name for n in reuse_inputs_in_place(g).nodes]
['x', 'exp_default', 'add__tensor', 'output']
"""

from __future__ import annotations

from ember.compiler import array_ops
from ember.compiler.effects import mutated_args, output_roots, readers, storage_roots
from ember.fx.graph import Graph
from ember.fx.node import Node
from ember.lazy import metrics

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
