"""Sync: cut the graph the requested tensors need, compile it (cached), run it, keep results.

NOTE [lazy sync]
A sync starts from the bases whose values are asked for (a view asks for its base). It walks
back through nodes not yet computed; nodes computed before (``node.value``) and data nodes
are the graph's inputs. The graph's key (NOTE [graph keys]) finds a compiled plan in the
cache or compiles one; the plan runs and every node it ran keeps its outputs, so a value is
never computed twice, while nodes nobody needs are never run. Each synced base then holds
its values and drops its node, which frees the history behind it.

NOTE [graph keys]
A plan depends on the ops, how arguments are structured, which outputs feed which inputs,
which arguments are written, and the inputs' dtypes and ranks; not on sizes (the kernels
take any size) nor on parameter values (Python numbers in Scalar and float arguments), so a
training loop whose batch or learning rate changes compiles once. The roots of a sync are
taken in the order their arrays were created, so the same program walks its graph in the
same order every time.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from ember._tensor import Tensor, wrap
from ember.dispatch.keys import CPU_BIT
from ember.lazy import layout, metrics
from ember.lazy._array import LazyArray, LiveArrays
from ember.lazy.ir import Node, Param, Slot, Value, data_node

_LOCK = threading.RLock()  # one sync at a time: graphs of two threads may share nodes
#: bases with a pending node: what ``mark_step`` syncs, and what a fusion must keep
LIVE = LiveArrays()

Step = Callable[[list[Any], tuple[Any, ...]], list[Any]]
#: a plan's step: run(inputs, the nodes it computes) -> their outputs
GraphStep = Callable[[list[Any], list[Node]], list[Any]]


class Plan:
    """A compiled graph: steps, each with where its inputs are in the graph's values, the
    nodes it computes (by index) and where their outputs go."""

    __slots__ = ("steps", "n_inputs")

    def __init__(
        self,
        steps: list[tuple[GraphStep, tuple[int, ...], tuple[int, ...], tuple[int, ...]]],
        n_inputs: int,
    ) -> None:
        self.steps = steps
        self.n_inputs = n_inputs


_CACHE: dict[Any, Plan] = {}


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


def sync_arrays(arrays: Iterable[LazyArray], cause: str) -> None:
    """Compute the values of ``arrays`` (their bases, for views) in one graph."""
    with _LOCK:
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
        needed.update(id(a.node[0]) for a in list(LIVE) if a.node is not None)
        run(roots, needed)  # type: ignore[arg-type]
        for a in bases:
            node, i = a.node  # type: ignore[misc]
            a.value = layout.laid_out(node.value[i], a.element_strides)
            a.node = None


def sync_tensors(tensors: Iterable[Tensor], cause: str) -> None:
    sync_arrays(
        [t._data for t in tensors if isinstance(t, Tensor) and isinstance(t._data, LazyArray)],
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


def run(roots: Sequence[Value], needed: set[int] | None = None) -> None:
    """Compute every node the roots need (NOTE [lazy sync]); ``needed``: ids of nodes
    whose values must be kept (the others may be fused away: NOTE [fusion groups])."""
    order = _topo(roots)
    if needed is None:
        needed = {id(n) for n, _ in roots}
    if not order:
        return
    computing = {id(n) for n in order}
    position: dict[tuple[int, int], int] = {}
    inputs: list[Any] = []
    input_keys: list[Any] = []
    for node in order:
        for n, i in node.inputs:
            k = (id(n), i)
            if id(n) in computing or k in position:
                continue
            position[k] = len(inputs)
            v = n.value[i]  # type: ignore[index]
            inputs.append(v)
            input_keys.append((v.dtype.str, v.ndim) if isinstance(v, np.ndarray) else None)
    nxt = len(inputs)
    for node in order:  # outputs follow the inputs, in order
        for i in range(node.n_out):
            position[(id(node), i)] = nxt
            nxt += 1
    wiring = [tuple(position[(id(n), i)] for n, i in node.inputs) for node in order]
    kept = tuple(id(n) in needed for n in order)
    key = (
        tuple(input_keys),
        tuple((node.key, w) for node, w in zip(order, wiring, strict=True)),
        kept,
    )
    plan = _CACHE.get(key)
    if plan is None:
        metrics.count("compile_cache_miss")
        start = time.perf_counter()
        plan = _compile_graph(order, wiring, needed, position, len(inputs))
        _CACHE[key] = plan
        metrics.sample("compile_time_s", time.perf_counter() - start)
    else:
        metrics.count("compile_cache_hit")
    start = time.perf_counter()
    env = inputs + [None] * (nxt - len(inputs))
    for step, w, computes, out_at in plan.steps:
        nodes = [order[k] for k in computes]
        outs = step([env[p] for p in w], nodes)
        for p, v in zip(out_at, outs, strict=True):
            env[p] = v
        if len(nodes) == 1:
            nodes[0].value = outs
        else:  # a fused group: only its root has a value (NOTE [fusion groups])
            nodes[-1].value = outs
    metrics.sample("execute_time_s", time.perf_counter() - start)
    metrics.sample("graph_nodes", len(order))
    metrics.count("graphs_executed")
    metrics.count("nodes_executed", len(order))


# --------------------------------------------------------------------------- steps


def _compile_graph(
    order: list[Node],
    wiring: list[tuple[int, ...]],
    needed: set[int],
    position: dict[tuple[int, int], int],
    n_inputs: int,
) -> Plan:
    """One step per node, except that each fusion group is one step (numba tier)."""
    from ember.compiler import fusion, numba_tier

    groups = fusion.find_groups(order, needed) if numba_tier.numba_available() else []
    in_group = {k: g for g in groups for k in g}
    steps = []
    for k, node in enumerate(order):
        group = in_group.get(k)
        if group is None:
            single = _compile(node)
            out_at = tuple(position[(id(node), i)] for i in range(node.n_out))
            steps.append((_one(single), wiring[k], (k,), out_at))
        elif k == group[-1]:  # the root: the whole group runs here
            members = [order[j] for j in group]
            fused = numba_tier.Fused(members, [_compile(m) for m in members])
            ext = tuple(position[key] for key in _external_keys(fused))
            steps.append((fused, ext, tuple(group), (position[(id(node), 0)],)))
    return Plan(steps, n_inputs)


def _external_keys(fused: Any) -> list[tuple[int, int]]:
    return list(fused.externals)


def _one(step: Step) -> GraphStep:
    return lambda ins, nodes: step(ins, nodes[0].params)


def _compile(node: Node) -> Step:
    if node.kind == "view":
        _, base_strides, *geometry = node.args

        def view(ins: list[Any], params: tuple[Any, ...]) -> list[Any]:
            return [layout.window(layout.laid_out(ins[0], base_strides), *geometry)]

        return view
    if node.kind == "write":
        base_shape, base_strides, *geometry = node.args

        def write(ins: list[Any], params: tuple[Any, ...]) -> list[Any]:
            new = layout.fresh(base_shape, base_strides, ins[0].dtype)
            new[...] = ins[0]
            layout.window(new, *geometry)[...] = ins[1]
            return [new]

        return write
    return _call_step(node)


def _call_step(node: Node) -> Step:
    """Run the op on the cpu kernels (``redispatch`` to CPU only: nothing above it runs)."""
    op = node.op
    assert op is not None
    args_t, kwargs_t, written = node.args, node.kwargs, frozenset(node.written)
    redispatch = op.redispatch

    def call(ins: list[Any], params: tuple[Any, ...]) -> list[Any]:
        tensors = [
            wrap(np.array(a, copy=True, order="K") if i in written else a)
            for i, a in enumerate(ins)
        ]
        args = _fill(args_t, tensors, params)
        kwargs = _fill(kwargs_t, tensors, params)
        result = redispatch(CPU_BIT, *args, **kwargs)
        outs: list[Any] = []
        _flatten(result, outs)
        outs.extend(tensors[i]._data for i in node.written)
        return outs

    return call


def _fill(x: Any, tensors: list[Tensor], params: tuple[Any, ...]) -> Any:
    if type(x) is Slot:
        return tensors[x.i]
    if type(x) is Param:
        return params[x.j]
    if isinstance(x, tuple):
        return tuple(_fill(e, tensors, params) for e in x)
    if isinstance(x, list):
        return [_fill(e, tensors, params) for e in x]
    if isinstance(x, dict):
        return {k: _fill(v, tensors, params) for k, v in x.items()}
    return x


def _flatten(result: Any, out: list[Any]) -> None:
    if isinstance(result, Tensor):
        out.append(result._data)
    elif isinstance(result, (list, tuple)):
        for r in result:
            _flatten(r, out)
    elif result is None:
        out.append(None)
    else:
        out.append(np.asarray(result))
