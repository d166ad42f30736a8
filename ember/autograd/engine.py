"""The backward engine: run the graph from the roots to the leaves in dependency order.

Gradients arriving at one node input are summed before the node runs; each node's output
gradients are reduced to its inputs' shapes (broadcasting) and dtypes; leaves accumulate
into ``.grad``; tensor hooks and ``retain_grad`` act on the gradient of their tensor.
With ``create_graph`` the formulas run in grad mode, so the gradients have a graph too.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ember._graph_break import side_effect
from ember._tensor import Tensor
from ember.autograd.anomaly_mode import check_results, is_anomaly_enabled
from ember.autograd.graph import AccumulateGrad, GradientEdge, Node
from ember.autograd.kernel import gradient_edge
from ember.dispatch import state
from ember.dispatch.keys import AUTOGRAD_BIT
from ember.dtypes import FROM_NUMPY as _FROM_NP
from ember.ops.registry import ops

# NOTE [final callbacks]
# ``Variable._execution_engine.queue_callback(fn)``, as PyTorch's: during a backward pass (from
# a hook, say), ``fn`` is queued to run once that pass has run every node, before
# ``backward()`` returns; a callback may queue more. DistributedDataParallel waits for its
# gradient all-reduces this way. Each running backward (they nest: a hook may call
# ``autograd.grad``) has its own list, on a per-thread stack.
_FINAL = threading.local()


class _Pass(list):  # type: ignore[type-arg]
    """One backward pass's final callbacks (NOTE [final callbacks]), whether the pass adds
    leaves' gradients into ``.grad`` as they complete (NOTE [leaves inline]), its id and
    the nodes it runs or captures at (``will_execute``)."""

    __slots__ = ("inline", "task_id", "nodes", "grad_call")

    def __init__(self, inline: bool, nodes: dict[Node, Any], grad_call: bool) -> None:
        super().__init__()
        self.inline = inline
        self.task_id = next(_TASK_IDS)
        self.nodes = nodes
        self.grad_call = grad_call


_TASK_IDS = itertools.count()


def current_graph_task_id() -> int:
    """The id of the backward pass running in this thread (a new one for every pass), or -1
    outside one: PyTorch's ``torch._C._current_graph_task_id``.

    >>> ember.autograd.engine.current_graph_task_id()
    -1
    """
    stack = getattr(_FINAL, "stack", None)
    return stack[-1].task_id if stack else -1


def will_execute(node: Node) -> bool:
    """Whether the running backward pass runs ``node`` or captures a gradient there (an
    ``inputs=`` edge): PyTorch's ``torch._C._will_engine_execute_node``. Without
    ``inputs=`` that is every node reachable from the roots; with them, the nodes on a path
    to an input and the inputs' own (NOTE [pruning to the inputs])."""
    stack = getattr(_FINAL, "stack", None)
    if not stack:
        raise RuntimeError(
            "_will_engine_execute_node should only be called during the backward pass"
        )
    if not isinstance(node, Node):
        raise RuntimeError(
            f"_will_engine_execute_node expects a grad_fn or grad accumulator node, got "
            f"{type(node).__name__}"
        )
    task = stack[-1]
    if task.grad_call and type(node) is AccumulateGrad and node in task.nodes:
        # (an input leaf of autograd.grad: PyTorch refuses it, saying so)
        raise RuntimeError(
            "A leaf node was passed to _will_engine_execute_node but we are currently running "
            "autograd.grad(). This is currently not supported."
        )
    return node in task.nodes


def accumulating_inline() -> bool:
    """Whether the backward pass running in this thread adds each leaf's gradient into its
    ``.grad`` as soon as it is complete, with nothing watching (``backward()`` without
    ``inputs=``, hooks on the leaf's accumulator, ``create_graph``; not ``autograd.grad``):
    a node may then set a hook-free leaf's ``.grad`` itself (NOTE [gradients into .grad]
    in ``ember/aot/aot_autograd.py``)."""
    stack = getattr(_FINAL, "stack", None)
    return bool(stack) and stack[-1].inline


def queue_callback(callback: Callable[[], Any]) -> None:
    """Run ``callback`` when the current backward pass ends. NOTE [final callbacks]"""
    stack = getattr(_FINAL, "stack", None)
    if not stack:
        raise RuntimeError("Final callbacks can only be installed during backward pass.")
    stack[-1].append(callback)


class ExecutionEngine:
    """``Variable._execution_engine``: what PyTorch's engine object offers to Python."""

    def queue_callback(self, callback: Callable[[], Any]) -> None:
        queue_callback(callback)

    def run_backward(self, *args: Any, **kwargs: Any) -> Any:
        return run_backward(*args, **kwargs)


_SUM = ops.aten.sum.dim_IntList._dispatch  # the ops' dispatch, called directly: no resolution
_VIEW = ops.aten.view.default._dispatch
_ZEROS = ops.aten.zeros.default._dispatch


def _sum_to(grad: Tensor, shape: tuple[int, ...], np_dtype: Any) -> Tensor:
    """Reduce a broadcast gradient to ``shape`` and cast it to the ember dtype of the NumPy
    dtype ``np_dtype``."""
    gshape = grad._edata.shape
    if gshape != shape:
        # PyTorch's sum_to: one sum over the leading dims broadcasting added and the size-1
        # dims it stretched, keeping them, then a view when there were leading dims
        lead = len(gshape) - len(shape)
        dims = list(range(lead))
        for i, n in enumerate(shape):
            if n == 1 and gshape[lead + i] != 1:
                dims.append(lead + i)
        if dims:
            grad = _SUM(grad, dims, True)
        if grad._edata.shape != shape:
            grad = _VIEW(grad, list(shape))
    if grad._edata.dtype != np_dtype:
        dtype = _FROM_NP[np_dtype]
        if grad._edata.dtype.kind == "c" and not dtype.is_complex:
            # a real input of a complex-valued op: the real part, as PyTorch takes it (a cast
            # would warn that it discards the imaginary part)
            grad = ops.aten.real.default(grad)
        grad = grad.to(dtype)  # type: ignore[attr-defined]
    return grad


def _add(a: Any, b: Any) -> Any:
    if a is None:
        return b
    if b is None:
        return a
    return a + b


def _collect(roots: Sequence[Node]) -> dict[Node, int]:
    """Every node reachable from ``roots``, with how many edges point at it."""
    deps: dict[Node, int] = {}
    stack: list[Node] = []
    for r in roots:
        if r not in deps:
            deps[r] = 0
            stack.append(r)
    get = deps.get
    while stack:
        for nxt, _ in stack.pop().next_functions:
            if nxt is None:  # no gradient flows there
                continue
            n = get(nxt)
            if n is None:  # found for the first time
                deps[nxt] = 1
                stack.append(nxt)
            else:
                deps[nxt] = n + 1
    return deps


# NOTE [pruning to the inputs]
# With ``inputs=`` (``autograd.grad``, ``backward(inputs=...)``) only the nodes on a path
# from the roots to an input's edge run, as in PyTorch: a node none of whose descendants is
# an input's computes nothing anyone asked for, and its hooks do not fire. An input's own
# node runs only if it is also on a path to another input; otherwise its gradient is just
# captured there, after the tensor hooks of that node (a leaf's ``register_hook`` ones, a
# non-leaf's, ``retain_grad``), as PyTorch's capture does.


def _prune(roots: Sequence[Node], targets: set[Node]) -> tuple[dict[Node, int], set[Node]]:
    """For a pass with ``inputs=``: the nodes it visits (on a path from ``roots`` to a node
    of ``targets``, or in ``targets``) with how many edges from nodes that run point at
    them, and the set of those that run (some descendant is in ``targets``)."""
    needed: dict[Node, bool] = {}
    for r in roots:
        if r in needed:
            continue
        needed[r] = False
        stack: list[list[Any]] = [[r, iter(r.next_functions), False]]
        while stack:
            top = stack[-1]
            for nxt, _ in top[1]:
                if nxt is None:
                    continue
                seen = needed.get(nxt)
                if seen is None:  # first visit: descend (the graph has no cycles)
                    needed[nxt] = False
                    stack.append([nxt, iter(nxt.next_functions), False])
                    break
                if seen or nxt in targets:
                    top[2] = True
            else:
                stack.pop()
                node, flag = top[0], top[2]
                needed[node] = flag
                if stack and (flag or node in targets):
                    stack[-1][2] = True
    run = {n for n, flag in needed.items() if flag}
    deps: dict[Node, int] = {n: 0 for n in needed if n in run or n in targets}
    for n in run:
        for nxt, _ in n.next_functions:
            if nxt is not None and nxt in deps:
                deps[nxt] += 1
    return deps, run


# NOTE [leaves inline]
# A leaf's AccumulateGrad node does nothing but add its gradient into ``.grad``. When the
# last edge into it delivers, the engine does that on the spot instead of queueing the node
# and running it as a node: a model's parameters are a third of its graph. It queues it
# as any node when something must see it run: ``inputs=`` capture, hooks on it, or
# ``autograd.grad`` (which accumulates nothing).


def run_backward(
    tensors: Sequence[Tensor],
    grad_tensors: Sequence[Tensor],
    *,
    retain_graph: bool,
    create_graph: bool,
    inputs: Sequence[Tensor] | None = None,
    accumulate: bool = True,
    grad_call: bool = False,
) -> list[Tensor | None]:
    """Backpropagate ``grad_tensors`` from ``tensors``; returns the gradients of ``inputs``
    (when given) instead of, or as well as (``accumulate``), adding them into ``.grad``.
    ``grad_call``: the pass is ``autograd.grad``'s (which ``will_execute`` refuses leaves
    in, as PyTorch's)."""
    if accumulate:  # NOTE [compile side effects]: .grad written outside the graph
        side_effect("Tensor.backward() writes .grad, which a compiled graph cannot hold")
    roots: list[tuple[Node, int, Tensor]] = []
    for t, g in zip(tensors, grad_tensors, strict=True):
        if isinstance(t, GradientEdge):
            node, nr = t.node, t.output_nr
        else:
            if not t.requires_grad:
                raise RuntimeError(
                    "element 0 of tensors does not require grad and does not have a grad_fn"
                )
            node, nr = gradient_edge(t)  # type: ignore[misc]
        roots.append((node, nr, g))
    #: (id of node, output_nr) -> the positions in ``inputs`` of that edge (one may repeat)
    capture: dict[tuple[int, int], list[int]] = {}
    keep: list[Node] = []  # the inputs' nodes stay alive while their ids are capture's keys
    if inputs is not None:
        for i, x in enumerate(inputs):
            if isinstance(x, GradientEdge):  # an edge of the graph itself
                node, nr = x.node, x.output_nr
            else:
                if not x.requires_grad:
                    raise RuntimeError(
                        f"One of the differentiated Tensors (input {i}) does not require grad"
                    )
                node, nr = gradient_edge(x)  # type: ignore[misc]
            keep.append(node)
            capture.setdefault((id(node), nr), []).append(i)
    captured: list[Tensor | None] = [None] * (len(inputs) if inputs is not None else 0)

    # the memory of gradients more than one holder has (NOTE [stealing gradients]): by id,
    # the roots kept alive while their ids are keys
    shared: dict[int, Any] = {}
    for _, _, g in roots:
        if g is not None:
            _share(g, shared)  # the user's seeds: theirs
    run: set[Node] | None = None  # with inputs=: the nodes that run (NOTE [pruning ...])
    if capture:
        deps, run = _prune([r[0] for r in roots], {n for n in keep if n is not None})
    else:
        deps = _collect([r[0] for r in roots])
    buffers: dict[Node, list[Any]] = {}
    for node, nr, g in roots:
        buf = buffers.setdefault(node, [None] * node.n_outputs)
        buf[nr] = _add(buf[nr], g)
    ready = [n for n in dict.fromkeys(r[0] for r in roots) if deps.get(n) == 0]
    anomaly = is_anomaly_enabled()
    # Formulas are ember's own code, as PyTorch's are C++: no __torch_function__ handler or
    # mode sees their ops (a Function's backward, user code, turns it back on: function.py).
    # With grad mode off the Autograd key would only pass every formula op through, so it is
    # left out of the whole pass (hooks see the same: nothing records).
    guard = state.GradKeyGuard(create_graph, state.TF_BITS | (0 if create_graph else AUTOGRAD_BIT))
    stack = getattr(_FINAL, "stack", None)
    if stack is None:
        stack = _FINAL.stack = []
    # a leaf's gradient goes into .grad as soon as it is complete, in the routing below,
    # unless something must see its accumulator run (capture, hooks): NOTE [leaves inline]
    leaves_inline = accumulate and not capture
    final = _Pass(leaves_inline and not create_graph and not anomaly, deps, grad_call)
    stack.append(final)  # NOTE [final callbacks]
    guard.__enter__()  # (not a with-statement: the loop below is the whole function)
    try:
        node: Node | None = None  # made ready by the node before: runs next, off the queue
        grads: list[Any] = []
        while True:
            if node is None:
                if not ready:
                    break
                node = ready.pop()
                grads = buffers.pop(node, None) or [None] * node.n_outputs
            if capture:
                only = node not in run  # type: ignore[operator]
                if only and not (accumulate and type(node) is AccumulateGrad):
                    # an input's node on no path to another input: its tensor hooks, then
                    # the capture, and it does not run (NOTE [pruning to the inputs])
                    grads = _tensor_pre_hooks(node, grads, shared)
                for i, g in enumerate(grads):
                    where = capture.get((id(node), i))
                    if where is not None and g is not None:
                        for j in where:
                            captured[j] = _add(captured[j], g)
                        _share(g, shared)  # returned to the caller
                if only and not (accumulate and type(node) is AccumulateGrad):
                    node = None
                    continue
            watched = node._watched
            if watched:  # pre-hooks, tensor hooks, retain_grad
                grads = _before(node, grads, shared)
            if type(node) is AccumulateGrad:
                if accumulate and grads[0] is not None:
                    g0 = grads[0]
                    if watched:  # its hooks have run (a hook's result may be held elsewhere)
                        _accumulate_leaf(node.variable, g0, create_graph, False, hooked=True)
                    else:
                        _accumulate_leaf(node.variable, g0, create_graph, _owned(g0, shared))
                node = None
                continue
            edges = node.next_functions
            if len(grads) == 1 and grads[0] is not None:  # the common case
                results = node.backward_fn(node, grads)
            elif all(g is None for g in grads):  # (not count(None): Tensor overloads ==)
                results = [None] * len(edges)
            elif node.materialize_grads:  # a custom Function's: zeros for the missing ones
                results = node.backward_fn(node, _materialize(node, grads))
            else:  # NOTE [undefined output gradients]: None for the missing ones
                results = node.backward_fn(node, grads)
            if type(results) is not tuple and not isinstance(results, (tuple, list)):
                results = (results,)
            if anomaly:
                check_results(node, results)
            if watched and node._hooks:
                for hook in node._hooks:  # a hook may return new grad_inputs, as PyTorch's
                    new = hook(tuple(results), tuple(grads))
                    if new is not None:
                        results = tuple(new)
            if not retain_graph and node.saved:
                node.release()
            if len(results) != len(edges):
                _wrong_count(node, results)
            if len(results) > 1 or node.materialize_grads:
                _note_shared(results, shared, node.materialize_grads)
            follow: Node | None = None
            for (nxt, nr), grad, meta in zip(edges, results, node.input_meta, strict=True):
                if nxt is None:
                    continue
                n = deps.get(nxt)
                if n is None:  # on no path to an input (NOTE [pruning to the inputs])
                    continue
                n -= 1  # without a gradient, only the dependency count moves
                deps[nxt] = n
                if grad is not None:
                    d = grad._edata
                    resized = meta is not None and (meta[1] is not d.dtype or meta[0] != d.shape)
                    if resized:
                        grad = _sum_to(grad, meta[0], meta[1])
                    buf = buffers.get(nxt)
                    if type(nxt) is AccumulateGrad:
                        # NOTE [stealing gradients]: only a leaf's accumulator may keep the
                        # tensor itself as .grad, when no one else holds it
                        own = False
                        if buf is not None:
                            old = buf[0]
                            if old is not None:
                                grad = old + grad
                                own = True  # a sum: only this leaf holds it
                        own = own or _owned(grad, shared)
                        if not n and leaves_inline and not nxt._watched:
                            if buf is not None:
                                del buffers[nxt]
                            _accumulate_leaf(nxt.variable, grad, create_graph, own)
                            continue
                        if buf is None:
                            buffers[nxt] = [grad]
                        else:
                            buf[0] = grad
                    elif buf is None:
                        if not n and follow is None and nxt.n_outputs == 1:
                            # its one gradient, complete: it runs next, with no buffer
                            follow, follow_grads = nxt, [grad]
                            continue
                        buf = buffers[nxt] = [None] * nxt.n_outputs
                        buf[nr] = grad
                    else:
                        old = buf[nr]
                        buf[nr] = grad if old is None else old + grad
                elif (
                    not n and type(nxt) is AccumulateGrad and leaves_inline and not nxt._watched
                ):  # its last input brought no gradient: what the others brought, if any
                    buf = buffers.pop(nxt, None)
                    if buf is not None and buf[0] is not None:
                        g0 = buf[0]
                        _accumulate_leaf(nxt.variable, g0, create_graph, _owned(g0, shared))
                    continue
                if not n:
                    ready.append(nxt)
            node = follow
            if follow is not None:
                grads = follow_grads
    except BaseException:
        stack.pop()
        raise
    finally:
        guard.__exit__()
    try:
        i = 0
        while i < len(final):  # a callback may queue more
            final[i]()
            i += 1
    finally:
        stack.pop()
    return captured


def _wrong_count(node: Node, results: Sequence[Any]) -> None:
    n = len(node.next_functions)
    raise RuntimeError(
        f"function {node.name()} returned an incorrect number of gradients (expected {n}, "
        f"got {len(results)})"
    )


# NOTE [undefined output gradients]
# When some outputs of a multi-output op got a gradient and others did not (``v, m =
# var_mean(x, 1)`` and only ``m`` is used), a derivative formula gets None for the others,
# as PyTorch's get an undefined tensor, and leaves their terms out. Zeros would not do: a
# zero times an intermediate that is inf or NaN where the unused output is degenerate (the
# variance of one element divides by n - 1 = 0) is NaN, which then poisons the gradient
# of the used output. So every formula of an op with several differentiable outputs takes
# None for any of them (``_var_mean``, ``_cat_or_zeros``, the nn backward ops' double
# backward). A custom ``Function`` gets zeros unless its ``ctx.set_materialize_grads(False)``
# says otherwise, as in PyTorch (``Node.materialize_grads``).


def _materialize(node: Node, grads: list[Any]) -> list[Any]:
    """Zeros for the outputs no gradient reached (a custom Function's backward gets a full
    tuple: NOTE [undefined output gradients])."""
    if all(g is not None for g in grads):
        return grads
    meta = node.out_meta
    return [
        g if g is not None or i >= len(meta) or meta[i] is None
        else _ZEROS(meta[i][0], dtype=meta[i][1])
        for i, g in enumerate(grads)
    ]  # fmt: skip


def _before(node: Node, grads: list[Any], shared: dict[int, Any]) -> list[Any]:
    """What a watched node's gradients go through before it runs, in PyTorch's order: the
    hooks registered on its output tensors, then ``retain_grad``, then its pre-hooks."""
    grads = _tensor_pre_hooks(node, grads, shared)
    for hook in node._pre_hooks or ():
        new = hook(tuple(grads))
        if new is not None:
            grads = list(new)
    return grads


def _tensor_pre_hooks(node: Node, grads: list[Any], shared: dict[int, Any]) -> list[Any]:
    """The hooks registered on the tensors whose gradients ``node`` receives, then
    ``retain_grad``: for a leaf's accumulator, the leaf's ``register_hook`` ones."""
    if type(node) is AccumulateGrad:
        hooks = node.variable.__dict__.get("_leaf_hooks", ())
        if hooks and grads[0] is not None:
            grads = list(grads)
            for fn in hooks:
                new = fn(grads[0])
                if new is not None:
                    grads[0] = new
        return grads
    if node._tensor_hooks:
        for nr, fns in node._tensor_hooks.items():
            for fn in fns:
                if grads[nr] is not None:
                    new = fn(grads[nr])
                    if new is not None:
                        grads[nr] = new
    if node._retain:
        for nr, ref in node._retain.items():
            t = ref()
            if t is not None and grads[nr] is not None:
                g = grads[nr] if t.grad is None else t.grad + grads[nr]
                t.grad = g.detach() if not state.local.grad_enabled else g  # type: ignore[attr-defined]
                if g is grads[nr]:
                    _share(g, shared)  # the retained .grad holds what flows on
    return grads


def _root(t: Any) -> Any:
    """The object that owns the memory under ``t``: the first NumPy array of the chain of
    bases of its data (a view's gradient, ``g.view(...)``, has the root of ``g``)."""
    d = t._edata
    if type(d) is not np.ndarray:
        return t  # lazy, meta or wrapper data: the tensor itself stands for its memory
    while True:
        b = d.base
        if b is None:
            return d
        if type(b) is not np.ndarray:
            return b  # a buffer or NumPy's DummyArray of a stride-tricks view
        d = b


def _share(g: Any, shared: dict[int, Any]) -> None:
    """Record that more than one holder has the memory under ``g``."""
    root = _root(g)
    shared[id(root)] = root


def _owned(g: Any, shared: dict[int, Any]) -> bool:
    """Whether only the edge delivering ``g`` holds its memory. NOTE [stealing gradients]"""
    return id(_root(g)) not in shared


def _note_shared(results: Sequence[Any], shared: dict[int, Any], custom: bool) -> None:
    """Record the memory a node's gradients share among themselves (AddBackward passes one
    gradient to both operands; view formulas reshape it for each); a custom Function's are
    user code's, which may hold them too (a constant, a saved tensor)."""
    roots: list[Any] = []
    for r in results:
        if r is None:
            continue
        root = _root(r)
        if custom:
            shared[id(root)] = root
            continue
        for q in roots:
            if q is root:
                shared[id(root)] = root
                break
        else:
            roots.append(root)


_ADD_ = ops.aten.add_.Tensor._dispatch
_DETACH = ops.aten.detach.default._dispatch


def _accumulate_leaf(
    t: Tensor, grad: Tensor, create_graph: bool, owned: bool, hooked: bool = False
) -> None:
    """Add ``grad`` into ``t.grad``, after the leaf's ``register_hook`` hooks (unless its
    accumulator's pre-hooks ran them already: ``hooked``).

    # NOTE [stealing gradients]
    The first gradient a leaf gets becomes its ``.grad``. Storing the engine's tensor itself
    saves a copy, as PyTorch's AccumulateGrad does, but only when nothing else holds its
    memory (``owned``) and it is laid out like a fresh tensor; otherwise it is cloned. The
    engine decides by memory, not by tensor object: it records in ``shared`` the root array
    (``_root``) of every gradient with more than one holder -- the user's seeds, a node's
    gradients that share an array (AddBackward passes one gradient to both operands, and
    each operand's view formula then makes its own tensor over it), a custom Function's
    (user code may keep them), retained and captured ones -- and steals only the others.
    PyTorch decides by counting references to the tensor object, which lets two leaves'
    ``.grad`` share one array when a gradient reaches both through views (``(a.view(3) +
    b.view(3)).sum()``: its issue #34082, known to be unsound); ember copies there instead,
    so a dispatch mode sees ``clone`` where PyTorch's shows ``detach``.
    """
    for fn in () if hooked else t.__dict__.get("_leaf_hooks", ()):
        new = fn(grad)
        if new is not None:
            grad = new
            owned = False
    # without create_graph, grad mode is off here, so clone() and add_() record nothing and
    # the stored gradient never requires grad; a stolen gradient is stored as a detach() of
    # it all the same, the call a dispatch mode sees from PyTorch's AccumulateGrad
    if t.grad is None:
        if create_graph:
            t.grad = grad
        elif owned and _whole(grad):
            t.grad = _DETACH(grad)
        else:
            t.grad = grad.clone()  # type: ignore[attr-defined]
    elif create_graph:
        t.grad = t.grad + grad
    else:
        _ADD_(t.grad, grad)  # aten.add_.Tensor, dispatched, minus the Python binding
    for fn in t.__dict__.get("_post_accumulate_hooks", ()):  # register_post_accumulate_grad_hook
        fn(t)


def _whole(g: Tensor) -> bool:
    """Contiguous and covering all of its storage (a view only in name, e.g. ``x.t().t()``)."""
    d = g._edata
    if type(d) is np.ndarray and d.flags.c_contiguous:  # the common cases, from the array
        base = g._base
        if base is None:
            owner = d.base
            if owner is None:
                return True  # a fresh result that owns its array
            if (
                type(owner) is np.ndarray
                and owner.base is None
                and owner.nbytes == d.nbytes
                and (owner.flags.c_contiguous or owner.flags.f_contiguous)
            ):
                return True  # all of a fresh contiguous array (a compiled ``mm(...).T``)
        elif base._base is None and type(base._edata) is np.ndarray:
            return base._edata.size == d.size  # contiguous and as large: offset 0, all of it
    if not g.is_contiguous() or g.storage_offset():
        return False
    base = g._base
    return base is None or base.numel() == g.numel()
