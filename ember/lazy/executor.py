"""Sync: cut the graph the requested tensors need, compile it (cached), run it, keep results.

NOTE [lazy sync]
A sync starts from the bases whose values are asked for (a view asks for its base). It walks
back through nodes not yet computed; nodes computed before (``node.value``) and data nodes
are the graph's inputs. The graph's key (NOTE [graph keys]) finds its compiled function in
the cache, or the compiler makes one (``ember/compiler``: the graph becomes an fx graph,
NOTE [lowering]; passes; code generation, NOTE [compiler tiers]); the function runs and
every node that must be kept gets its outputs: the ones the sync asked for, the ones a live
tensor holds, and the ones a pending node outside the graph reads. The others may be
computed in place of each other or fused away, and are not kept; nothing a later sync can
reach is ever computed twice. Each synced base then holds its values and drops its node,
which frees the history behind it.

NOTE [graph keys]
A compiled graph depends on the tier, the ops, how arguments are structured, which outputs
feed which inputs, which arguments are written, which nodes are kept, the inputs' dtypes
and ranks, and which values have equal shapes (NOTE [shape classes]); not on sizes (the
kernels take any size) nor on parameter values (Python numbers in Scalar and float
arguments), so a training loop whose batch or learning rate changes compiles once. (A view's
geometry is part of its node, so graphs with views do depend on the sizes they see.) The
roots of a sync are taken in the order their arrays were created, so the same program walks
its graph in the same order every time.

NOTE [shape classes]
Buffer reuse gives an op the array of a dead value of the same shape (NOTE [buffer reuse]),
and some direct NumPy calls need two operands of one shape: decisions that hold for every
run only if the same values have equal shapes every time. So the key numbers the distinct
shapes of the inputs and of every node's outputs in order of appearance, and lists each
one's number: equal shapes, equal numbers, whatever the sizes.

NOTE [donated inputs]
An op may write a graph input's array instead of a copy (NOTE [in-place reuse]) only when
nothing else can read that array: its node is not kept and no pending node outside the graph
reads it, and no Python object holds the array but the node and the sync (``sys.getrefcount``
says so for the array and each object down to the memory: a NumPy view, a tensor, a user's
``numpy()`` result all hold a reference). The compiler marks which inputs it would write if
allowed (``wants_donation``); each run checks them and picks the compiled variant for those
that pass. An optimizer step on parameters nobody else holds writes them in place; counted
in ``inputs_written_in_place``.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable, Collection, Iterable, Sequence
from typing import Any

import numpy as np

from ember._graph_walk import each_once
from ember._tensor import Tensor
from ember.compiler import layout, metrics
from ember.lazy._array import LazyArray, LiveArrays
from ember.lazy.ir import Node, Value, data_node

_LOCK = threading.RLock()  # one sync at a time: graphs of two threads may share nodes
#: bases with a pending node: what ``mark_step`` syncs, and what a fusion must keep
LIVE = LiveArrays()

_CACHE: dict[Any, Any] = {}  # graph key -> Compiled (NOTE [graph keys])


def clear_cache() -> None:
    _CACHE.clear()


# --------------------------------------------------------------------------- values


def current(arr: LazyArray) -> Value:
    """The IR value of a lazy array now: a base's node (a data node once computed), or a
    view node derived from its base's current value (NOTE [lazy views])."""
    base = arr.base
    if base is None:
        node = arr.node
        if node is None:
            node = arr.node = (data_node(arr.value), 0)  # type: ignore[arg-type]
        return node
    src = current(base)
    if arr.node is None or arr.source is not src:
        geometry = view_geometry(base, arr)
        meta = ((arr.shape, arr.element_strides, arr.dtype),)
        view = Node("view", None, geometry, {}, (src,), (), (), 1, meta)
        arr.node, arr.source = (view, 0), src
    return arr.node


def values_of(arr: LazyArray, cause: str) -> np.ndarray:
    """The values of a lazy array, computing what they need (NOTE [lazy sync])."""
    base = arr.base
    if base is None:
        if arr.value is None:
            sync_arrays([arr], cause)
        return arr.value  # type: ignore[return-value]
    storage = values_of(base, cause)
    return layout.window(storage, *view_geometry(base, arr)[2:])


def view_geometry(base: LazyArray, arr: LazyArray) -> tuple[Any, ...]:
    """(base shape, base strides in elements, view shape, dtype, strides and offset in
    bytes): what a view or write node needs."""
    return (
        base.shape, base.element_strides, arr.shape, arr.dtype, arr.strides,
        arr.offset * arr.dtype.itemsize,
    )  # fmt: skip


def sync_arrays(arrays: Iterable[LazyArray] | None, cause: str) -> None:
    """Compute the values of ``arrays`` (their bases, for views) in one graph; ``None``:
    every live array (``mark_step``)."""
    with _LOCK:
        live = LIVE.alive()  # one look per sync: nothing records while it holds the lock
        if arrays is None:
            arrays = live
        pending: dict[int, LazyArray] = {}
        for a in arrays:
            while a.base is not None:
                a = a.base
            if a.value is None and a.node is not None:
                pending[id(a)] = a
        if not pending:
            return
        metrics.count(f"sync::{cause}")
        bases = sorted(pending.values(), key=lambda a: a.seq)  # NOTE [graph keys]
        roots = [a.node for a in bases]
        # nodes whose values must be kept: asked for, or held by a live tensor
        needed = {id(n) for n, _ in roots}  # type: ignore[misc]
        outside = [a.node[0] for a in live if a.node is not None]  # type: ignore[index]
        needed.update(id(n) for n in outside)
        run(roots, needed, outside)  # type: ignore[arg-type]
        for a in bases:
            node, i = a.node  # type: ignore[misc]
            a.value = layout.laid_out(node.value[i], a.element_strides)
            a.node = None


def sync_tensors(tensors: Iterable[Tensor], cause: str) -> None:
    sync_arrays(
        [t._edata for t in tensors if isinstance(t, Tensor) and isinstance(t._edata, LazyArray)],
        cause,
    )


# --------------------------------------------------------------------------- graphs


def _topo(roots: Sequence[Value]) -> list[Node]:
    """Nodes the roots need that are not computed yet, inputs before users."""
    order: list[Node] = []
    seen: set[int] = set()
    stack: list[tuple[Node, bool]] = [(n, False) for n, _ in reversed(roots)]
    while stack:
        node, done = stack.pop()
        if done:
            order.append(node)
            continue
        if id(node) in seen or node.value is not None:
            continue
        seen.add(id(node))
        stack.append((node, True))
        for n, _ in reversed(node.inputs):
            if id(n) not in seen and n.value is None:
                stack.append((n, False))
    return order


class Cut:
    """A cut graph, ready to key and run: its nodes (inputs first), its inputs' values and
    where they come from, which nodes it keeps, its parameters, its key."""

    __slots__ = ("order", "inputs", "sources", "kept", "params", "key", "needed")

    def __init__(self, needed: set[int], order: list[Node], live: list[Node]) -> None:
        self.order = order
        first: dict[int, int] = {id(n): 0 for n in order}  # node -> its first output's number
        needed = needed | _read_from_outside(first, live)
        self.needed = needed
        # one pass, inputs before users: a node's tensor arguments are numbered by where
        # they come from (-1 - k: the k-th input; j >= 0: the j-th output computed here)
        outside: dict[tuple[int, int], int] = {}
        inputs: list[Any] = []
        sources: list[Value] = []
        input_keys: list[Any] = []
        classes: dict[Any, int] = {}
        shapes: list[int] = []
        structure: list[Any] = []
        nxt = 0
        for node in order:
            wiring = []
            for n, i in node.inputs:
                base = first.get(id(n))
                if base is not None:
                    wiring.append(base + i)
                    continue
                k = outside.get((id(n), i))
                if k is None:
                    k = outside[(id(n), i)] = len(inputs)
                    v = n.value[i]  # type: ignore[index]
                    inputs.append(v)
                    sources.append((n, i))
                    if type(v) is np.ndarray:
                        input_keys.append((v.dtype.str, v.ndim))
                        shapes.append(classes.setdefault(v.shape, len(classes)))
                    else:
                        input_keys.append(None)
                wiring.append(-1 - k)
            first[id(node)] = nxt
            nxt += node.n_out
            for m in node.meta:  # NOTE [shape classes]
                shapes.append(classes.setdefault(m[0], len(classes)))
            structure.append((node.key, tuple(wiring)))
        self.inputs = inputs
        self.sources = sources
        self.kept = tuple(id(n) in needed for n in order)
        self.params = [p for node in order for p in node.params]
        self.key = (_TIER[0], tuple(input_keys), tuple(structure), self.kept, tuple(shapes))


def _read_from_outside(computing: Collection[int], live: list[Node]) -> set[int]:
    """Ids of nodes of the graph, and of computed nodes (its inputs among them), that a
    pending node outside it reads: their values must be kept, and never written in place (a
    later sync reads them; NOTE [donated inputs]). ``live``: the live arrays' nodes."""
    stack = [n for n in live if id(n) not in computing and n.value is None]
    found: set[int] = set()
    for node in each_once(stack):
        for n, _ in node.inputs:
            if id(n) in computing or n.value is not None:
                found.add(id(n))
            else:
                stack.append(n)
    return found


class Compiled:
    """The compiled function(s) of one graph key: one per set of donated inputs (NOTE
    [donated inputs]), the inputs that may be donated, and how outputs map to nodes."""

    __slots__ = ("tier", "variants", "candidates", "slices", "sources")

    def __init__(self, cut: Cut) -> None:
        self.tier = cut.key[0]
        self.variants: dict[tuple[bool, ...], Callable[..., Any]] = {}
        self.sources: dict[tuple[bool, ...], str] = {}
        self.slices: list[tuple[int, int, int]] = []  # (node index, first output, end)
        at = 0
        for k, (node, keep) in enumerate(zip(cut.order, cut.kept, strict=True)):
            if keep:
                self.slices.append((k, at, at + node.n_out))
                at += node.n_out
        base = compile_cut(cut, frozenset())
        self.candidates: tuple[int, ...] = base[2]
        self.variants[(False,) * len(self.candidates)] = base[0]
        self.sources[(False,) * len(self.candidates)] = base[1]

    def function(self, cut: Cut) -> tuple[Callable[..., Any], tuple[bool, ...]]:
        """The function for this run: with the candidate inputs nobody else holds donated."""
        mask = tuple(_donatable(cut, i) for i in self.candidates)
        fn = self.variants.get(mask)
        if fn is None:
            donated = frozenset(i for i, m in zip(self.candidates, mask, strict=True) if m)
            fn, src, _ = compile_cut(cut, donated)
            self.variants[mask] = fn
            self.sources[mask] = src
        return fn, mask


def compile_cut(
    cut: Cut, donated: frozenset[int]
) -> tuple[Callable[..., Any], str, tuple[int, ...]]:
    """Lower, optimize and generate code for a cut graph (NOTE [lowering], NOTE [compiler
    tiers]); returns the function, its source and the inputs it could write if donated."""
    # deferred, not a cycle: the compiler and fx load with the first graph compiled, so
    # ``import ember`` does not pay for them
    from ember.compiler.pipeline import compile_lowered
    from ember.lazy.lowering import lower

    start = time.perf_counter()
    gm = lower(cut.order, cut.sources, cut.inputs, cut.kept, donated)
    fn, src = compile_lowered(gm, cut.key[0])
    wants = tuple(
        ph.meta["input"]
        for ph in gm.graph.find_nodes(op="placeholder")
        if ph.meta.get("wants_donation")
    )
    metrics.sample("compile_time_s", time.perf_counter() - start)
    return fn, src, wants


def _donatable(cut: Cut, i: int) -> bool:
    """Input ``i``'s array may be written by the graph (NOTE [donated inputs])."""
    node, _ = cut.sources[i]
    if id(node) in cut.needed:
        return False
    a = cut.inputs[i]
    if type(a) is not np.ndarray or not a.flags.writeable:
        return False
    # held by: the node's value list, the cut's input list, this frame, getrefcount's argument
    if sys.getrefcount(a) > 4:
        return False
    b = a.base
    while b is not None:  # every object down to the memory is held only by the one above it
        if sys.getrefcount(b) > 3:
            return False
        b = getattr(b, "base", None)
    return True


def compiler_tier() -> str:
    """The tier to compile for (NOTE [compiler tiers])."""
    if not _PIPELINE:
        from ember.compiler import pipeline  # deferred: see compile_cut

        _PIPELINE.append(pipeline)
    return _PIPELINE[0].tier()


_PIPELINE: list[Any] = []

_TIER = ["numba"]  # the tier of the current sync (read from the environment once per sync)


def prepare(
    roots: Sequence[Value], needed: set[int] | None = None, live: list[Node] | None = None
) -> Cut | None:
    """The cut graph the roots need (None when everything is computed); ``live``: the
    nodes of the live arrays (looked up when not given)."""
    order = _topo(roots)
    if not order:
        return None
    if needed is None:
        needed = {id(n) for n, _ in roots}
    if live is None:
        live = [a.node[0] for a in LIVE.alive() if a.node is not None]  # type: ignore[index]
    _TIER[0] = compiler_tier()
    return Cut(needed, order, live)


def compiled(cut: Cut) -> Compiled:
    """The compiled graph of a cut (from the cache, or compiled now)."""
    entry = _CACHE.get(cut.key)
    if entry is None:
        metrics.count("compile_cache_miss")
        if debug_enabled():
            _explain_miss(cut)
        entry = _CACHE[cut.key] = Compiled(cut)
    else:
        metrics.count("compile_cache_hit")
    return entry


def run(
    roots: Sequence[Value], needed: set[int] | None = None, live: list[Node] | None = None
) -> None:
    """Compute every node the roots need (NOTE [lazy sync]); ``needed``: ids of nodes
    whose values must be kept (the compiler may drop or overwrite the others)."""
    cut = prepare(roots, needed, live)
    if cut is None:
        return
    entry = compiled(cut)
    fn, mask = entry.function(cut)
    start = time.perf_counter()
    outs = fn(*cut.inputs, *cut.params)
    order = cut.order
    for k, a, b in entry.slices:
        order[k].value = list(outs[a:b])
    metrics.sample("execute_time_s", time.perf_counter() - start)
    metrics.sample("graph_nodes", len(order))
    metrics.count("graphs_executed")
    metrics.count("nodes_executed", len(order))
    metrics.count(f"tier::{_TIER_NAMES[entry.tier]}")
    donated = sum(mask)
    if donated:
        metrics.count("inputs_written_in_place", donated)


_TIER_NAMES = {"interpreter": "interpreter", "numpy": "numpy_source", "numba": "numpy_source"}


def debug_enabled() -> bool:
    return os.environ.get("EMBER_LAZY_DEBUG", "") not in ("", "0")


def _explain_miss(cut: Cut) -> None:
    """Print what differs between a graph compiled now and the nearest one cached."""
    print(
        f"[ember.lazy] compiling a graph of {len(cut.order)} nodes: {miss_reason(cut.key)}",
        file=sys.stderr,
    )


def miss_reason(key: Any) -> str:
    """What differs from the cached key nearest to ``key`` (the first difference)."""
    if not _CACHE:
        return "nothing was compiled before"
    tier, inputs, nodes, kept, shapes = key

    def common(other: Any) -> int:
        k = 0
        for a, b in zip(nodes, other[2], strict=False):
            if a != b:
                break
            k += 1
        return k + (inputs == other[1]) * 10**6

    nearest = max(_CACHE, key=common)
    o_tier, o_inputs, o_nodes, o_kept, o_shapes = nearest
    if tier != o_tier:
        return f"tier {tier} (cached: {o_tier})"
    if len(inputs) != len(o_inputs):
        return f"{len(inputs)} inputs (nearest cached graph: {len(o_inputs)})"
    for i, (a, b) in enumerate(zip(inputs, o_inputs, strict=True)):
        if a != b:
            return f"input {i} is {_describe_input(a)} (nearest cached graph: {_describe_input(b)})"
    for k, (a, b) in enumerate(zip(nodes, o_nodes, strict=False)):
        if a != b:
            return f"node {k}: {_describe_node(a)} (nearest cached graph: {_describe_node(b)})"
    if len(nodes) != len(o_nodes):
        return f"{len(nodes)} nodes (nearest cached graph: {len(o_nodes)}, the same up to there)"
    if kept != o_kept:
        k = next(j for j, (a, b) in enumerate(zip(kept, o_kept, strict=True)) if a != b)
        return f"node {k} is {'kept' if kept[k] else 'not kept'} for the caller this time"
    return "the same ops, but values of different shapes are equal (NOTE [shape classes])"


def _describe_input(k: Any) -> str:
    if k is None:
        return "not an array"
    return f"{np.dtype(k[0]).name} of rank {k[1]}"


def _describe_node(entry: Any) -> str:
    key, wiring = entry
    if isinstance(key, tuple) and len(key) == 7:
        kind, op, args, kwargs, params, _, _ = key
        what = str(op) if op is not None else kind
        return f"{what} args={args} kwargs={dict(kwargs)} params={params} reading {list(wiring)}"
    return f"{key} reading {list(wiring)}"
