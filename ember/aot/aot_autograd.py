"""AOTAutograd: trace a function ahead of time into dense graphs of OpOverloads (forward and
backward), hand them to compilers, run them behind a thin runtime wrapper; as
``torch._functorch.aot_autograd``.

>>> from ember.aot import aot_function
>>> def show(gm, example_inputs):
...     print([str(n.target) for n in gm.graph.nodes if n.op == "call_function"])
...     return gm
>>> f = aot_function(lambda x: (x * x).sum(), fw_compiler=show, bw_compiler=show)
>>> x = ember.tensor([1.0, 2.0], requires_grad=True)
>>> y = f(x)
['aten.mul.Tensor', 'aten.sum.default']
>>> y.backward()
['aten.expand.default', 'aten.mul.Tensor', 'aten.mul.Tensor', 'aten.add.Tensor']
>>> x.grad
tensor([2., 4.])

# NOTE [aot autograd]
A call of the compiled function flattens its arguments (pytree, then tensor subclasses into
their dense tensors: NOTE [subclass flattening]), computes its signature (NOTE [aot guards])
and runs the entry compiled for it, compiling one on a miss:

1. **Metadata** (``_collect``): the function is traced once under ``FakeTensorMode`` with
   functional tracing (NOTE [functional tracing] in ``proxy_tensor.py``), on the user-level
   inputs (subclasses rebuilt from fake dense tensors). It tells which dense inputs were
   written (their node is no longer their placeholder) and whether their metadata changed,
   which outputs are an input itself or a view of a dense input (regenerated at run time as
   a view of the user's tensor, never computed by the graph), and which outputs require grad.
2. **Inference** (no input requires grad, grad mode off, or no output requires grad): that
   trace is the graph, its outputs the written inputs' new values then the outputs; the
   inference compiler (the forward compiler by default) compiles it. With
   ``keep_inference_input_mutations=True`` the writes stay in the graph as final ``copy_``
   nodes instead.
3. **Joint** otherwise: ``joint(primals, tangents)`` runs the function and ``autograd.grad``
   of its differentiable outputs with respect to the inputs that require grad, the tangents
   as grad outputs, at the user level (a subclass's gradient is a subclass), flattened at
   both ends; traced with functional tracing into one graph whose placeholders are
   ``primals_<i>`` and ``tangents_<i>`` and whose output is the forward's outputs then the
   gradients. ``partition_fn`` splits it (NOTE [partitioners]); the forward compiler gets the
   forward at once, the backward compiler the backward on the first backward call.
4. **Runtime** (``_Entry``): an ``autograd.Function`` whose forward unwraps subclass inputs,
   runs the compiled forward, keeps the saved values for backward and rebuilds the outputs
   (subclasses too); its backward flattens the incoming gradients into tangents, runs the
   compiled backward and rebuilds gradients into the inputs' subclasses (None for inputs
   that do not require grad). Around it the wrapper copies written inputs' new values into
   the user's tensors, and regenerates outputs that alias inputs as views of them. A tensor
   passed twice is one input of the graph (its gradient counted once).
"""

from __future__ import annotations

import logging
import os
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ember._graph_break import GraphBreak
from ember._graph_walk import each_once
from ember._shape_only import DataDependentShapeError
from ember._subclasses.fake_tensor import (
    DataDependentOutputException,
    DynamicOutputShapeException,
)
from ember._tensor import Tensor, root_array
from ember.aot.guards import (
    autocast_signature,
    describe_difference,
    distance,
    memory_id,
    signature,
)
from ember.aot.partitioners import _is_tangent, default_partition
from ember.aot.subclass import SubclassMeta, flatten, unflatten
from ember.aot.synthetic_base import AliasedWrite, synthetic_base_runner
from ember.autograd import copy_slices, view_rules
from ember.autograd.api import grad as autograd_grad
from ember.autograd.engine import accumulating_inline
from ember.autograd.function import Function
from ember.autograd.grad_mode import enable_grad, no_grad
from ember.autograd.graph import NO_EDGE, AccumulateGrad
from ember.autograd.graph import SavedTensor as _SavedTensor
from ember.autograd.kernel import LeafWriteError, gradient_edge
from ember.dispatch import marks, state
from ember.fx.experimental.proxy_tensor import (
    DataDependentTracingError,
    _snapshot,
    _trace,
    _Tracker,
)
from ember.fx.graph_module import GraphModule
from ember.fx.node import Node
from ember.nn.modules.module import Module
from ember.nn.parameter import Parameter as _Parameter
from ember.ops.registry import ops
from ember.utils._pytree import tree_flatten, tree_unflatten

__all__ = [
    "aot_function",
    "aot_module",
    "aot_module_simplified",
    "config",
    "make_boxed_compiler",
    "make_boxed_func",
    "nop",
]

aten = ops.aten
#: what tracing raises where the program reads values (a graph break for ``ember.compile``)
GRAPH_BREAKS = (
    GraphBreak,
    DataDependentShapeError,
    DataDependentTracingError,
    DynamicOutputShapeException,
    DataDependentOutputException,
)
log = logging.getLogger("ember.aot")


class _Config:
    """Switches of AOTAutograd (``ember.aot.config``)."""

    #: print why each retrace happened (also ``EMBER_AOT_EXPLAIN=1``)
    explain_recompiles: bool = os.environ.get("EMBER_AOT_EXPLAIN", "") not in ("", "0")
    #: entries per compiled function before it runs uncompiled (PyTorch's recompile limit)
    cache_size_limit: int = 8


config = _Config()


def make_boxed_func(f: Callable[..., Any]) -> Callable[..., Any]:
    """``f`` called with one list of arguments (the boxed convention compilers may return).

    >>> from ember.aot import make_boxed_func
    >>> g = make_boxed_func(lambda a, b: a + b)
    >>> g([1, 2]), g._boxed_call
    (3, True)
    """

    def g(args: list[Any]) -> Any:
        return f(*args)

    g._boxed_call = True  # type: ignore[attr-defined]
    return g


def make_boxed_compiler(compiler: Callable[..., Any]) -> Callable[..., Any]:
    """A compiler whose result is boxed (``make_boxed_func``)."""

    def boxed(gm: GraphModule, example_inputs: Any) -> Callable[..., Any]:
        return make_boxed_func(compiler(gm, example_inputs))

    return boxed


def nop(fx_g: GraphModule, _: Any) -> Callable[..., Any]:
    """The compiler that compiles nothing: the graph module runs as it is.

    >>> from ember.aot import aot_function, nop
    >>> aot_function(lambda x: x + 1, nop)(ember.ones(2))
    tensor([2., 2.])
    """
    return make_boxed_func(fx_g)


def _call(fn: Callable[..., Any], args: Sequence[Any]) -> Any:
    if getattr(fn, "_boxed_call", False):
        return fn(list(args))
    return fn(*args)


def _as_list(out: Any) -> list[Any]:
    if isinstance(out, (tuple, list)):
        return list(out)
    return [out]


# ------------------------------------------------------------------------- metadata


class _Plan:
    """What one signature's trace found (NOTE [aot autograd] step 1)."""

    def __init__(self) -> None:
        self.in_metas: list[SubclassMeta | None] = []
        self.in_requires_grad: list[bool] = []
        self.n_dense = 0
        self.mutated: list[int] = []  # dense input positions written
        self.meta_mutated: dict[int, tuple[Any, Any, int]] = {}
        self.out_spec: Any = None
        #: per output leaf: ("const", v) | ("input", u) | ("alias", k, size, stride, offset)
        #: | ("graph", j)
        self.out_leaves: list[Any] = []
        self.graph_outs: list[int] = []  # user-level output leaf index of each graph output
        self.out_metas: list[SubclassMeta | None] = []  # per graph output
        self.out_requires_grad: list[bool] = []  # per user-level graph output
        self.n_dense_outs = 0


def _user_inputs(dense: Sequence[Any], plan: _Plan) -> list[Any]:
    """The user-level inputs rebuilt from dense ones (subclasses marked requiring grad as
    the user's were)."""
    users = unflatten(dense, plan.in_metas)
    for u, m, rg in zip(users, plan.in_metas, plan.in_requires_grad, strict=True):
        if m is not None and rg and not u.requires_grad:
            u.requires_grad_(True)
    return users


def _collect(
    fn: Callable[..., Any],
    flat_args: list[Any],
    in_spec: Any,
    uniq_pos: list[int],
    dup_of: dict[int, int],
    uniq: list[Tensor],
) -> tuple[_Plan, _Tracker, GraphModule, list[Any], list[Any]]:
    plan = _Plan()
    dense, plan.in_metas = flatten(uniq)
    plan.in_requires_grad = [u.requires_grad for u in uniq]
    plan.n_dense = len(dense)
    holder: dict[str, Any] = {}

    def user_fn(*dense_in: Any) -> list[Any]:
        users = _user_inputs(dense_in, plan)
        args, kwargs = _rebuild_args(flat_args, in_spec, uniq_pos, dup_of, users)
        out = fn(*args, **kwargs)
        leaves, spec = tree_flatten(out)
        holder["users"], holder["leaves"], holder["spec"] = users, leaves, spec
        return [x for x in leaves if isinstance(x, Tensor)]

    tracker = _Tracker({}, functionalize=True)
    fake_before: list[tuple[Any, Any, int, int]] = []
    try:
        gm, _, fake_dense = _trace(
            _record_before(user_fn, fake_before), tuple(dense), tracker, "fake", True,
            [f"arg{i}_1" for i in range(len(dense))],
        )  # fmt: skip
    except LeafWriteError as e:
        raise leaf_write_break(e, "aot_function") from e
    return plan, tracker, gm, fake_dense, [holder, fake_before]


def _record_before(user_fn: Callable[..., Any], into: list[Any]) -> Callable[..., Any]:
    def run(*dense_in: Any) -> Any:
        into.extend((t.shape, t.stride(), t.storage_offset(), t._version) for t in dense_in)
        return user_fn(*dense_in)

    return run


def _rebuild_args(
    flat_args: list[Any],
    in_spec: Any,
    uniq_pos: list[int],
    dup_of: dict[int, int],
    users: list[Any],
) -> tuple[tuple[Any, ...], dict[str, Any]]:
    flat = list(flat_args)
    for k, i in enumerate(uniq_pos):
        flat[i] = users[k]
    for i, j in dup_of.items():
        flat[i] = flat[j]
    args, kwargs = tree_unflatten(flat, in_spec)
    return tuple(args), dict(kwargs)


# ------------------------------------------------------------------------- entries


class _Entry:
    """One compiled signature: the graphs' callables and how to run them (NOTE [aot
    autograd] step 4)."""

    def __init__(self) -> None:
        self.plan: _Plan
        self.autograd = False
        self.fw: Callable[..., Any]
        self.bw: Callable[..., Any] | None = None
        self.bw_graph: GraphModule | None = None
        self.bw_compiler: Callable[..., Any] | None = None
        self.num_saved = 0
        self.grad_inputs: list[int] = []  # user-level inputs that get gradients
        self.grad_metas: list[SubclassMeta | None] = []
        self.grad_deps: list[set[int]] = []
        self.n_fw_user_outs = 0
        self.fn_class: type[Function] | None = None
        self.keep_mutations = False
        self.graphs: dict[str, GraphModule] = {}
        #: the inference fast path of ``run`` applies
        self.simple = False
        #: the lean autograd path of ``run`` applies (NOTE [lean autograd path])
        self.lean = False
        #: the inputs whose gradients the lean backward may store as their ``.grad``, and
        #: those whose gradients share memory with another gradient, a saved value or a
        #: tangent (NOTE [gradients into .grad]), known after the first backward
        self.grad_layout: tuple[tuple[int, ...], tuple[int, ...]] | None = None
        #: the second of those for the ``autograd.Function`` path
        self.shared_grads: tuple[int, ...] | None = None
        #: what runs instead when tracing met a data-dependent call (``ember.compile``)
        self.fallback: Callable[..., Any] | None = None

    def backward_fn(self) -> Callable[..., Any]:
        if self.bw is None:
            assert self.bw_graph is not None and self.bw_compiler is not None
            example = [_example(n) for n in self.bw_graph.graph.nodes if n.op == "placeholder"]
            self.bw = self.bw_compiler(self.bw_graph, example)
        return self.bw

    def run(self, uniq: list[Any]) -> list[Any]:
        """The user-level output leaves of one call (written inputs updated)."""
        plan = self.plan
        if self.simple:  # dense inputs, no writes, every output from the graph, no autograd
            local = state.local
            if not local.grad_enabled:
                return list(_call(self.fw, uniq))
            local.grad_enabled = False
            try:
                return list(_call(self.fw, uniq))
            finally:
                local.grad_enabled = True
        if self.lean and state.local.grad_enabled:
            return self._run_lean(uniq)
        dense, _ = flatten(uniq) if plan.in_metas and any(plan.in_metas) else (uniq, None)
        n_mut = 0 if self.keep_mutations else len(plan.mutated)
        if self.autograd:
            assert self.fn_class is not None
            results = list(self.fn_class.apply(*uniq))
            mut_vals = results[:n_mut]
            graph_users = results[n_mut:]
        else:
            with no_grad():
                outs = _as_list(_call(self.fw, dense))
            mut_vals = outs[:n_mut]
            graph_users = _rebuild_outputs(outs[n_mut:], plan)
        if mut_vals:
            with no_grad():
                for k, v in zip(plan.mutated, mut_vals, strict=True):
                    _apply_mutation(dense[k], v, plan.meta_mutated.get(k))
        leaves: list[Any] = []
        for how in plan.out_leaves:
            kind = how[0]
            if kind == "graph":
                leaves.append(graph_users[how[1]])
            elif kind == "const":
                leaves.append(how[1])
            elif kind == "input":
                leaves.append(uniq[how[1]])
            else:
                _, k, size, stride, rel = how
                base = dense[k]
                leaves.append(base.as_strided(size, stride, base.storage_offset() + rel))
        return leaves

    # NOTE [lean autograd path]
    # An entry whose inputs and outputs are dense, which writes no input and whose outputs
    # all come from the graph in order (the common training step) skips the generic
    # ``Function.apply``: it runs the compiled forward with grad mode off and makes the
    # backward node itself, as ``apply`` would (the same node class, edges, saved values
    # with their versions, outputs marked), and its backward is ``_lean_backward``. The
    # node takes None for outputs no gradient reached (zeros tangents are made here).

    def _run_lean(self, uniq: list[Any]) -> list[Any]:
        plan = self.plan
        local = state.local
        local.grad_enabled = False
        try:
            outs = _call(self.fw, uniq)
        finally:
            local.grad_enabled = True
        n_user = plan.n_dense_outs
        users = list(outs[:n_user])
        edges = tuple([gradient_edge(a) if marks.tracks_grad(a) else NO_EDGE for a in uniq])
        assert self.fn_class is not None
        node = self.fn_class._backward_cls(self._lean_backward, edges)
        raw = outs[n_user:]
        node.saved = [
            _SavedTensor(t, "CompiledFunctionBackward") for t in raw if isinstance(t, Tensor)
        ]
        if len(node.saved) != len(raw):  # saved Python values too: kept in order
            node.ctx = tuple(raw)
        node.n_outputs = n_user
        for i, (o, rg) in enumerate(zip(users, plan.out_requires_grad, strict=True)):
            if any(o is a for a in uniq):  # an input returned as is: an alias, as apply's
                with no_grad():
                    o = users[i] = o.view_as(o)
            if not rg:
                continue
            marks.mark_autograd(o)
            o.grad_fn = node
            o._output_nr = i
            if o._base is not None:
                copy_slices.track(o)
                view_rules.mark(
                    o,
                    view_rules.MULTI_OUTPUT_NODE if n_user > 1 else view_rules.IN_CUSTOM_FUNCTION,
                )
        return users

    def _lean_backward(self, node: Any, grads: Sequence[Any]) -> tuple[Any, ...]:
        saved: list[Any] = [s.unpack() for s in node.saved]
        if node.ctx is not None:
            it = iter(saved)
            saved = [next(it) if isinstance(t, Tensor) else t for t in node.ctx]
        tangents: list[Any] = []
        unset: set[int] = set()
        vals = _user_vals(self)
        for g, rg, val in zip(grads, self.plan.out_requires_grad, vals, strict=True):
            if not rg:
                continue
            if g is None:
                unset.add(len(tangents))
                tangents.append(aten.zeros.default(list(val.shape), dtype=val.dtype))
            elif type(g._edata) is _ndarray and g._edata.flags.c_contiguous:
                tangents.append(g)
            else:
                tangents.append(g.contiguous())
        dense_grads = _as_list(_call(self.backward_fn(), [*saved, *tangents]))
        out: list[Any] = [None] * len(self.plan.in_metas)
        for k, gr, deps in zip(self.grad_inputs, dense_grads, self.grad_deps, strict=True):
            out[k] = None if deps and deps <= unset else gr
        layout = self.grad_layout
        if layout is None:
            layout = self.grad_layout = _grad_layout(node, out, [*saved, *tangents])
        fresh, shared = layout
        for k in shared:  # NOTE [gradients into .grad]: no stored gradient aliases another
            if out[k] is not None:
                out[k] = out[k].clone()
        if fresh and accumulating_inline():
            _into_leaves(node, out, fresh)
        return tuple(out)


# NOTE [gradients into .grad]
# In a ``backward()`` that adds leaves' gradients into ``.grad`` as they complete (NOTE
# [leaves inline] in ``ember/autograd/engine.py``: no ``inputs=``, no ``create_graph``, not
# ``autograd.grad``), the lean backward sets a parameter's ``.grad`` to its gradient itself
# and hands the engine None for that edge, which then only counts the edge as done: the
# engine's per-leaf routing and accumulator are most of a small training step's backward
# overhead. It does so only where the engine would store the same tensor (NOTE [stealing
# gradients]): the leaf's ``.grad`` is None, nothing watches it (no hooks on the leaf or
# its accumulator), the gradient has the leaf's shape and dtype, nothing above the CPU key
# sees the tensor, and its array is a fresh contiguous one that no other gradient, saved
# value or tangent of this call shares. A gradient another node adds to the same leaf later
# is added into that ``.grad`` by the engine, as into any stored gradient: the same sum.
# A gradient whose array another gradient, a saved value or a tangent shares (``(a + b) *
# 2`` gives ``a`` and ``b`` one array; ``x + y`` gives them the caller's tangent) is cloned
# before the engine sees it, which would otherwise store it as it is (it checks tensors,
# not the arrays under them): two ``.grad`` sharing memory, or one the caller's tensor.


def _owner(d: Any) -> Any:
    """The object at the end of ``d``'s chain of bases: the owner of its memory (an array,
    or the ``DummyArray`` a NumPy stride-tricks view stands on)."""
    while True:
        base = getattr(d, "base", None)
        if base is None:
            return d
        d = base


def _whole_array(d: Any) -> bool:
    """A contiguous array owning its memory, or all of a contiguous array that does (a
    reshape of a fresh result)."""
    if type(d) is not _ndarray or not d.flags.c_contiguous or not d.flags.writeable:
        return False
    base = d.base
    return base is None or (
        type(base) is _ndarray
        and base.base is None
        and base.nbytes == d.nbytes
        and (base.flags.c_contiguous or base.flags.f_contiguous)
    )


def _shared_grads(grads: list[Any], held: list[Any]) -> tuple[dict[int, int], tuple[int, ...]]:
    """How many of ``grads`` and ``held`` share each owning array, and the positions of the
    gradients whose array another of them shares."""
    owners: dict[int, int] = {}
    for t in (*grads, *held):
        if isinstance(t, Tensor):
            key = id(_owner(t._edata))
            owners[key] = owners.get(key, 0) + 1
    shared = tuple(
        k for k, g in enumerate(grads) if isinstance(g, Tensor) and owners[id(_owner(g._edata))] > 1
    )
    return owners, shared


def _grad_layout(
    node: Any, grads: list[Any], held: list[Any]
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The inputs whose gradient the compiled backward makes as a fresh contiguous array
    of the input's shape and dtype that no other gradient, saved value or tangent shares,
    and those whose gradient's array one of them shares (NOTE [gradients into .grad]).
    Computed on an entry's first backward: the generated code makes the same arrays on
    every call (the layouts are guarded)."""
    owners, shared = _shared_grads(grads, held)
    fresh = []
    for k, (g, meta) in enumerate(zip(grads, node.input_meta, strict=True)):
        if type(g) is not Tensor or g.requires_grad or k in shared:
            continue
        d = g._edata
        if not _whole_array(d):
            continue
        if meta is None or (meta[1] is d.dtype and meta[0] == d.shape):
            fresh.append(k)
    return tuple(fresh), shared


def _into_leaves(node: Any, grads: list[Any], fresh: tuple[int, ...]) -> None:
    """NOTE [gradients into .grad]: each leaf's fresh gradient that can be its ``.grad`` is
    stored there, and its entry in ``grads`` becomes None."""
    edges = node.next_functions
    for k in fresh:
        g = grads[k]
        acc = edges[k][0]
        if g is None or type(acc) is not AccumulateGrad or acc._watched:
            continue
        var = acc.variable
        hooks = var.__dict__
        if "_leaf_hooks" in hooks or "_post_accumulate_hooks" in hooks or var.grad is not None:
            continue
        if state.python_key_sees(g):
            continue
        var.grad = g
        grads[k] = None


def _apply_mutation(dst: Tensor, value: Tensor, meta: Any) -> None:
    dst.copy_(value)


def _rebuild_outputs(dense_outs: list[Any], plan: _Plan) -> list[Any]:
    """Graph outputs (dense) rebuilt into the user-level outputs they flatten."""
    if not any(plan.out_metas):
        return dense_outs
    return unflatten(dense_outs, plan.out_metas)


def _example(n: Any) -> Any:
    return n.meta.get("val")


def _make_function(entry: _Entry) -> type[Function]:
    """The runtime ``autograd.Function`` of one entry."""
    plan = entry.plan
    n_mut = len(plan.mutated)

    class CompiledFunction(Function):
        @staticmethod
        def forward(ctx: Any, *uniq: Any) -> Any:
            dense, _ = flatten(uniq)
            outs = _as_list(_call(entry.fw, dense))
            n_user = plan.n_dense_outs
            mut, user, saved = outs[:n_mut], outs[n_mut : n_mut + n_user], outs[n_mut + n_user :]
            ctx.save_for_backward(*saved)
            users = _rebuild_outputs(user, plan)
            no_diff = list(mut) + [
                u for u, rg in zip(users, _user_requires_grad(plan), strict=True) if not rg
            ]
            if no_diff:
                ctx.mark_non_differentiable(*no_diff)
            ctx.set_materialize_grads(False)
            return (*mut, *users)

        @staticmethod
        def backward(ctx: Any, *grads: Any) -> Any:
            saved = ctx.saved_tensors
            user_grads = grads[n_mut:]
            tangents: list[Any] = []
            unset: set[int] = set()  # dense tangents of outputs that got no gradient
            for g, rg, meta, val in zip(
                user_grads, _user_requires_grad(plan), _user_metas(plan), _user_vals(entry),
                strict=True,
            ):  # fmt: skip
                if not rg:
                    continue
                dense_t = _dense_tangent(g, meta, val)
                if g is None:
                    unset.update(range(len(tangents), len(tangents) + len(dense_t)))
                tangents.extend(dense_t)
            bw = entry.backward_fn()
            dense_grads = _as_list(_call(bw, [*saved, *tangents]))
            metas = entry.grad_metas
            rebuilt = unflatten(dense_grads, metas) if any(metas) else dense_grads
            out: list[Any] = [None] * len(plan.in_metas)
            for k, gr, deps in zip(entry.grad_inputs, rebuilt, entry.grad_deps, strict=True):
                # an input reached only from outputs that got no gradient gets None, as in
                # eager (the graph computed zeros for it): NOTE [which gradients are None]
                out[k] = None if deps and deps <= unset else gr
            shared = entry.shared_grads
            if shared is None:
                shared = entry.shared_grads = _shared_grads(out, [*saved, *tangents])[1]
            for k in shared:  # NOTE [gradients into .grad]: no two .grad share memory
                if out[k] is not None:
                    out[k] = out[k].clone()
            return tuple(out)

    CompiledFunction.__name__ = "CompiledFunction"
    return CompiledFunction


def _user_requires_grad(plan: _Plan) -> list[bool]:
    """Per user-level graph output: does it require grad."""
    return plan.out_requires_grad


def _user_metas(plan: _Plan) -> list[SubclassMeta | None]:
    return plan.out_metas


def _user_vals(entry: _Entry) -> list[Any]:
    return entry.graphs.get("_out_vals", [None] * len(entry.plan.out_metas))  # type: ignore[return-value]


def _dense_tangent(g: Any, meta: SubclassMeta | None, val: Any) -> list[Any]:
    """The dense tangents of one output's gradient (zeros for a gradient nobody sent)."""
    if g is None:
        if meta is None:
            return [aten.zeros.default(list(val.shape), dtype=val.dtype)]
        return [aten.zeros.default(list(v.shape), dtype=v.dtype) for v in val]
    if meta is None:
        return [g.contiguous() if not g.is_contiguous() else g]
    if type(g) is meta.cls:
        return flatten([g])[0]
    # a dense gradient for a subclass output: every inner tensor gets it
    return [g] * meta.count


# ------------------------------------------------------------------------- compiling


def _compile_entry(
    fn: Callable[..., Any],
    flat_args: list[Any],
    in_spec: Any,
    uniq_pos: list[int],
    dup_of: dict[int, int],
    uniq: list[Tensor],
    options: dict[str, Any],
) -> _Entry:
    plan, tracker, gm, fake_dense, (holder, before) = _collect(
        fn, flat_args, in_spec, uniq_pos, dup_of, uniq
    )
    entry = _Entry()
    entry.plan = plan
    users_in: list[Any] = holder["users"]
    leaves: list[Any] = holder["leaves"]
    plan.out_spec = holder["spec"]
    # written inputs (NOTE [aot autograd] step 1)
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    for k, (fk, ph) in enumerate(zip(fake_dense, placeholders, strict=True)):
        shape, stride, offset, version = before[k]
        if (
            tuple(fk.shape) != tuple(shape)
            or fk.stride() != stride
            or (fk.storage_offset() != offset)
        ):
            plan.meta_mutated[k] = (list(fk.shape), list(fk.stride()), fk.storage_offset())
        if tracker.node_of(fk) is not ph and fk._version != version:
            plan.mutated.append(k)
    if plan.mutated:
        _check_aliased_writes(uniq, plan)
    if plan.meta_mutated:
        k = next(iter(plan.meta_mutated))
        raise UnsupportedWrite(
            f"aot_function: the function changes the shape or strides of dense input {k} in "
            f"place (to {plan.meta_mutated[k][0]}); ember replays no metadata writes"
        )
    dense_index = {id(t): k for k, t in enumerate(fake_dense)}
    user_index = {id(u): k for k, u in enumerate(users_in)}
    graph_leaves: list[Any] = []
    for x in leaves:
        if not isinstance(x, Tensor):
            plan.out_leaves.append(("const", x))
        elif id(x) in user_index:
            plan.out_leaves.append(("input", user_index[id(x)]))
        elif (
            _alias_source(x, dense_index) is not None
            and plan.in_metas[_user_of(_alias_source(x, dense_index), plan)] is None
        ):
            k = _alias_source(x, dense_index)
            assert k is not None
            rel = x.storage_offset() - fake_dense[k].storage_offset()
            plan.out_leaves.append(("alias", k, list(x.shape), list(x.stride()), rel))
        else:
            plan.out_leaves.append(("graph", len(graph_leaves)))
            graph_leaves.append(x)
    dense_outs, plan.out_metas = flatten(graph_leaves)
    plan.out_requires_grad = [
        t.requires_grad and t.dtype.is_floating_point or t.dtype.is_complex for t in graph_leaves
    ]
    if not graph_leaves:
        plan.out_metas = []
    plan.n_dense_outs = len(dense_outs)
    entry.graphs["_out_vals"] = [  # type: ignore[assignment]
        _snapshot(x) if m is None else [_snapshot(d) for d in flatten([x])[0]]
        for x, m in zip(graph_leaves, plan.out_metas, strict=True)
    ]
    needs_grad = (
        state.local.grad_enabled and any(plan.in_requires_grad) and any(plan.out_requires_grad)
    )
    for k in plan.mutated:
        if needs_grad and fake_dense[k].requires_grad:
            raise UnsupportedWrite(
                "aot_function: the function writes an input that requires grad "
                f"(dense input {k}, shape {list(fake_dense[k].shape)}); AOTAutograd of such "
                "writes is not supported: write a clone, or call it under no_grad"
            )
    fw_compiler = options["fw_compiler"]
    if not needs_grad:
        _finish_inference(entry, gm, tracker, fake_dense, dense_outs, options)
        return entry
    entry.autograd = True
    _build_joint(entry, fn, flat_args, in_spec, uniq_pos, dup_of, uniq, dense_outs, options)
    fw_graph = entry.graphs["forward"]
    example = [_example(n) for n in fw_graph.graph.nodes if n.op == "placeholder"]
    entry.fw = fw_compiler(fw_graph, example)
    entry.fn_class = _make_function(entry)
    entry.lean = (
        not any(plan.in_metas)
        and not plan.mutated
        and not any(plan.out_metas)
        and not any(entry.grad_metas)
        and all(how[0] == "graph" for how in plan.out_leaves)
        and [how[1] for how in plan.out_leaves] == list(range(len(plan.out_leaves)))
    )
    return entry


class UnsupportedWrite(GraphBreak, NotImplementedError):
    """A write to an input that AOTAutograd cannot trace yet (a metadata write, a write into
    an input that requires grad under autograd): ``ember.compile`` runs that signature
    eagerly, a bare ``aot_function`` raises."""


def leaf_write_break(e: LeafWriteError, who: str) -> UnsupportedWrite:
    """``UnsupportedWrite`` for autograd's refusal ``e`` met while tracing: the inputs
    that require grad are leaves of the trace, the caller's may not be (eagerly the
    write may be fine), so the signature runs eagerly rather than raising ``e``."""
    return UnsupportedWrite(
        f"{who}: the function writes an input that requires grad in place "
        f"({str(e).partition(':')[0]}); AOTAutograd of such writes is not supported: "
        "write a clone, or call it under no_grad"
    )


def _check_aliased_writes(uniq: list[Tensor], plan: _Plan) -> None:
    """NOTE [aliased inputs]: raise ``GraphBreak`` when a written dense input shares memory
    with another input.

    # NOTE [aliased inputs]
    The trace gets one fake tensor per input, each with memory of its own, so a write to
    one input is not seen through another that views the same memory (``f(x, x[:2])``
    writing ``x``): the graph would read the old values. A signature marks inputs that share
    memory (NOTE [aot guards]); when such an input is written, the call cannot be one graph
    (``AliasedWrite``), and the inputs that share memory are given a synthetic base (NOTE
    [synthetic bases] in ``synthetic_base.py``). Where they cannot have one,
    ``ember.compile`` runs that signature eagerly, counted as a graph break; a bare
    ``aot_function`` raises.
    """
    if any(m is not None for m in plan.in_metas):
        return  # subclass inputs: their dense parts are not compared
    owner: dict[int, int] = {}
    shared: set[int] = set()
    for k, t in enumerate(uniq):
        m = memory_id(t)
        if m is None:
            continue
        j = owner.setdefault(m, k)
        if j != k:
            shared.update((j, k))
    written = shared.intersection(plan.mutated)
    if written:
        k = min(written)
        others = sorted(shared - {k})
        raise AliasedWrite(
            f"aot_function: input {k} (shape {list(uniq[k].shape)}) is written in place and "
            f"shares memory with input(s) {others}; one graph cannot see the write through "
            "the other view: pass distinct tensors (clone one) or run it eagerly"
        )


def _user_of(k: int, plan: _Plan) -> int:
    """The user-level input whose dense tensors include dense position ``k``."""
    pos = 0
    for u, m in enumerate(plan.in_metas):
        n = 1 if m is None else m.count
        if pos <= k < pos + n:
            return u
        pos += n
    raise IndexError(k)


def _alias_source(x: Tensor, dense_index: dict[int, int]) -> int | None:
    """The dense input position whose storage output ``x`` views, or None."""
    if id(x) in dense_index:
        return dense_index[id(x)]
    b = x._base
    while b is not None:
        if id(b) in dense_index:
            return dense_index[id(b)]
        b = b._base
    return None


def _finish_inference(
    entry: _Entry,
    gm: GraphModule,
    tracker: _Tracker,
    fake_dense: list[Any],
    dense_outs: list[Any],
    options: dict[str, Any],
) -> None:
    plan = entry.plan
    g = gm.graph
    out_node = next(n for n in g.nodes if n.op == "output")
    results = [tracker.node_of(t) for t in dense_outs]
    placeholders = [n for n in g.nodes if n.op == "placeholder"]
    if options["keep_inference_input_mutations"] and plan.mutated:
        entry.keep_mutations = True
        with g.inserting_before(out_node):
            for k in plan.mutated:
                g.call_function(
                    aten.copy_.default, (placeholders[k], tracker.node_of(fake_dense[k])),
                    name="copy_",
                )  # fmt: skip
        out_node.args = (tuple(results),)
    else:
        muts = [tracker.node_of(fake_dense[k]) for k in plan.mutated]
        out_node.args = (tuple(muts + results),)
    g.eliminate_dead_code()
    gm.recompile()
    entry.graphs["inference"] = gm
    compiler = options["inference_compiler"] or options["fw_compiler"]
    example = [_example(n) for n in placeholders]
    entry.fw = compiler(gm, example)
    entry.simple = (
        not any(plan.in_metas)
        and not plan.mutated
        and not any(plan.out_metas)
        and all(how[0] == "graph" for how in plan.out_leaves)
        and [how[1] for how in plan.out_leaves] == list(range(len(plan.out_leaves)))
    )


def _build_joint(
    entry: _Entry,
    fn: Callable[..., Any],
    flat_args: list[Any],
    in_spec: Any,
    uniq_pos: list[int],
    dup_of: dict[int, int],
    uniq: list[Tensor],
    dense_outs: list[Any],
    options: dict[str, Any],
) -> None:
    """NOTE [aot autograd] step 3: the joint graph, partitioned."""
    plan = entry.plan
    n_dense = plan.n_dense
    user_rg = _user_requires_grad(plan)
    entry.grad_inputs = [k for k, rg in enumerate(plan.in_requires_grad) if rg]
    holder: dict[str, Any] = {}

    def joint(*flat: Any) -> list[Any]:
        primals, tangents_dense = flat[:n_dense], flat[n_dense:]
        users = _user_inputs(primals, plan)
        args, kwargs = _rebuild_args(flat_args, in_spec, uniq_pos, dup_of, users)
        out = fn(*args, **kwargs)
        leaves, _ = tree_flatten(out)
        graph_leaves = [leaves[i] for i, how in enumerate(plan.out_leaves) if how[0] == "graph"]
        dense_fw, _ = flatten(graph_leaves)
        muts = [primals[k] for k in plan.mutated]
        diff = [x for x, rg in zip(graph_leaves, user_rg, strict=True) if rg]
        diff_metas = [m for m, rg in zip(plan.out_metas, user_rg, strict=True) if rg]
        tangents = unflatten(tangents_dense, diff_metas)
        wrt = [users[k] for k in entry.grad_inputs]
        holder["grad_deps"] = _reached_by(diff, diff_metas, wrt)
        grads = autograd_grad(diff, wrt, tangents, allow_unused=True)
        dense_grads: list[Any] = []
        metas: list[SubclassMeta | None] = []
        for gr in grads:
            if gr is None:
                dense_grads.append(None)
                metas.append(None)
            else:
                d, (m,) = flatten([gr])
                if m is not None:
                    m.start = len(dense_grads)
                dense_grads.extend(d)
                metas.append(m)
        holder["grad_metas"] = metas
        return [*muts, *dense_fw, *dense_grads]

    tangent_examples: list[Any] = []
    vals = entry.graphs["_out_vals"]
    for rg, m, val in zip(user_rg, plan.out_metas, vals, strict=True):  # type: ignore[arg-type]
        if rg:
            shapes = [val] if m is None else val
            tangent_examples.extend(
                aten.zeros.default(list(v.shape), dtype=v.dtype) for v in shapes
            )
    dense_in, _ = flatten(uniq)
    names = [f"primals_{i + 1}" for i in range(n_dense)] + [
        f"tangents_{i + 1}" for i in range(len(tangent_examples))
    ]
    tracker = _Tracker(options["decompositions"], functionalize=True)
    with enable_grad():
        joint_gm, _, _ = _trace(joint, (*dense_in, *tangent_examples), tracker, "fake", True, names)
    entry.grad_metas = holder["grad_metas"]
    num_fwd = len(plan.mutated) + plan.n_dense_outs
    _remove_detach(joint_gm)
    joint_gm.graph.eliminate_dead_code()
    joint_gm.recompile()
    entry.graphs["joint"] = joint_gm
    fw, bw = options["partition_fn"](
        joint_gm, (*dense_in, *tangent_examples), num_fwd_outputs=num_fwd
    )
    entry.graphs["forward"], entry.graphs["backward"] = fw, bw
    entry.num_saved = fw.meta.get("num_saved", 0)
    entry.bw_graph = bw
    entry.bw_compiler = options["bw_compiler"] or options["fw_compiler"]
    entry.grad_deps = _grad_dependencies(bw, entry.grad_metas, holder["grad_deps"])


def _grad_dependencies(
    bw: GraphModule, grad_metas: list[SubclassMeta | None], reach: list[set[int]]
) -> list[set[int]]:
    """Per gradient (user level), the dense tangents whose being unset makes it None
    (NOTE [which gradients are None]): those it is computed from, and, when a term that
    reads no tangent is added into it, those of every output reaching it."""
    placeholders = [n for n in bw.graph.nodes if n.op == "placeholder"]
    tangents = {n: i for i, n in enumerate(p for p in placeholders if _is_tangent(p))}
    outs = next(n for n in bw.graph.nodes if n.op == "output").args[0]
    reads: dict[Node, frozenset[int]] = {}  # the tangents each value is computed from
    # a value that adds a term reading no tangent to one that reads some (a formula of
    # zeros summed into a gradient), there or in what it is computed from
    mixed: dict[Node, bool] = {}
    for n in bw.graph.nodes:  # (in order: a node's inputs come first)
        found = frozenset([tangents[n]]) if n in tangents else frozenset()
        inputs = n.all_input_nodes
        for a in inputs:
            found |= reads[a]
        reads[n] = found
        mixed[n] = any(mixed[a] for a in inputs) or (
            n.target is aten.add.Tensor and bool(found) and any(not reads[a] for a in inputs)
        )

    per_dense = []
    for o in outs:
        if not isinstance(o, Node):
            per_dense.append(None)
        else:
            per_dense.append((reads[o], not reads[o] or mixed[o]))
    out: list[set[int]] = []
    pos = 0
    for k, m in enumerate(grad_metas):
        count = 1 if m is None else m.count
        deps: set[int] = set()
        for part in per_dense[pos : pos + count]:
            if part is not None:
                deps |= part[0]
                if part[1]:
                    deps |= reach[k]
        out.append(deps)
        pos += count
    return out


def _reached_by(
    outs: Sequence[Any], metas: Sequence[SubclassMeta | None], wrt: Sequence[Any]
) -> list[set[int]]:
    """Per input in ``wrt``: the dense tangents of the outputs whose autograd graph reaches it.

    NOTE [which gradients are None]
    Eager gives an input None when no gradient reached it, or when every formula on the
    way returned None for an output gradient that was None (slogdet's for an unset
    ``logabsdet``); a formula of zeros (copysign's for ``other``) gives zeros whenever its
    node runs. So a gradient of the backward graph is None at run time when every tangent
    it is computed from is unset; but when a term that reads no tangent (the zeros) is
    added into it, there or in what it is computed from (nextafter's zeros go on through
    softsign's formula), it counts as computed from every output whose autograd graph
    reaches the input: read from the traced forward's autograd graph, where a ``detach``
    or an ``argmax`` is no edge.
    """
    targets: dict[int, list[int]] = {}
    for k, x in enumerate(wrt):
        node, _ = gradient_edge(x)
        if node is not None:
            targets.setdefault(id(node), []).append(k)
    deps: list[set[int]] = [set() for _ in wrt]
    pos = 0
    for o, m in zip(outs, metas, strict=True):
        ids = range(pos, pos + (1 if m is None else m.count))
        pos = ids.stop
        root, _ = gradient_edge(o)
        stack = [root] if root is not None else []
        for n in each_once(stack):
            for k in targets.get(id(n), ()):
                deps[k].update(ids)
            stack.extend(nxt for nxt, _ in n.next_functions if nxt is not None)
    return deps


_ndarray = np.ndarray


_STATIC = (str, bool, int, float, type(None))


#: id(tuple) -> (the tuple, its part of a fast key): a tuple is immutable, and keeping it
#: keeps its id from being reused
_TUPLE_KEYS: dict[int, tuple[tuple[Any, ...], Any]] = {}


def _fast_signature(args: tuple[Any, ...], grad: bool) -> Any:
    """A key for calls whose arguments are distinct plain tensors (or parameters) on the cpu
    and static values (numbers, strings, None, flat tuples of them): each array's shape,
    byte strides and dtype and the tensor's requires_grad, each static value with its type
    (together they determine the signature); None for other calls."""
    key: list[Any] = [grad, autocast_signature()]
    ids: set[int] = set()
    n = 0
    for a in args:
        t = type(a)
        if t is Tensor or t is _Parameter:
            d = a._edata
            if type(d) is not _ndarray:
                return None
            ids.add(id(d) if d.base is None else id(root_array(d)))
            n += 1
            key.append((d.shape, d.strides, d.dtype, a.requires_grad))
        elif t in _STATIC:
            key.append((t, a))
        elif t is tuple:
            memo = _TUPLE_KEYS.get(id(a))
            if memo is None or memo[0] is not a:
                if not all(type(v) in _STATIC for v in a):
                    return None
                memo = (a, (t, tuple([(type(v), v) for v in a])))
                if len(_TUPLE_KEYS) > 64:
                    _TUPLE_KEYS.clear()
                _TUPLE_KEYS[id(a)] = memo  # (a compiled module passes the same tuples)
            key.append(memo[1])
        else:
            return None
    if len(ids) != n:  # a tensor passed twice, or views of one memory: the general path
        return None  # deduplicates, or marks the alias (NOTE [aliased inputs])
    return tuple(key)


def _remove_detach(gm: GraphModule) -> None:
    """Drop ``detach`` nodes (the autograd engine's, around saved values and gradients): a
    graph has no autograd, so a detach is its input."""
    for n in list(gm.graph.nodes):
        if n.op == "call_function" and n.target is aten.detach.default:
            n.replace_all_uses_with(n.args[0])
            gm.graph.erase_node(n)


# ------------------------------------------------------------------------- the wrapper


class AOTCompiledFunction:
    """What ``aot_function`` returns: calls the entry compiled for the arguments'
    signature (NOTE [aot guards]), compiling one on a miss."""

    def __init__(self, fn: Callable[..., Any], options: dict[str, Any]) -> None:
        self.fn = fn
        self.options = options
        self.cache: dict[Any, _Entry] = {}
        self.signatures: list[Any] = []
        self.recompile_reasons: list[str] = []
        self.warned = False
        #: NOTE [aot guards]: calls whose arguments are all plain cpu tensors, keyed by each
        #: array's shape, byte strides and dtype and requires_grad (finer than a signature)
        self.fast: dict[Any, tuple[_Entry, list[int] | None]] = {}
        self.__name__ = getattr(fn, "__name__", "aot_function")
        self.__doc__ = getattr(fn, "__doc__", None)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        grad = state.local.grad_enabled
        fast = None if kwargs else _fast_signature(args, grad)
        if fast is not None:
            hit = self.fast.get(fast)
            if hit is not None:
                entry, pos = hit
                uniq = list(args) if pos is None else [args[i] for i in pos]
                spec = entry.plan.out_spec
                if spec.is_leaf():
                    return entry.run(uniq)[0]
                return tree_unflatten(entry.run(uniq), spec)
        flat, spec = tree_flatten((args, kwargs))
        sig = signature(flat, grad)
        entry = self.cache.get(sig)
        if entry is None:
            entry = self._miss(sig, flat, spec)
            if entry is None:
                return self.fn(*args, **kwargs)
        if entry.fallback is not None:
            return entry.fallback(*args, **kwargs)
        uniq_pos = self._uniq_pos(flat)
        if fast is not None and len(self.fast) < 4 * config.cache_size_limit:
            pos = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
            self.fast[fast] = (entry, None if len(pos) == len(args) else pos)
        uniq = [flat[i] for i in uniq_pos]
        leaves = entry.run(uniq)
        return tree_unflatten(leaves, entry.plan.out_spec)

    @staticmethod
    def _uniq_pos(flat: list[Any]) -> list[int]:
        seen: set[int] = set()
        out = []
        for i, a in enumerate(flat):
            if isinstance(a, Tensor) and id(a) not in seen:
                seen.add(id(a))
                out.append(i)
        return out

    def _miss(self, sig: Any, flat: list[Any], spec: Any) -> _Entry | None:
        if self.signatures:
            reason = self.explain_signature(sig)
            self.recompile_reasons.append(reason)
            if config.explain_recompiles:
                log.warning("%s", reason)
                print(reason)
        if len(self.cache) >= config.cache_size_limit:
            if not self.warned:
                self.warned = True
                warnings.warn(
                    f"aot_function({self.__name__}): {len(self.cache)} compiled signatures "
                    f"reached the recompile limit (config.cache_size_limit = "
                    f"{config.cache_size_limit}); running the function uncompiled from now "
                    f"on. Last retrace: {self.recompile_reasons[-1]}",
                    stacklevel=3,
                )
            return None
        uniq_pos = self._uniq_pos(flat)
        first: dict[int, int] = {}
        dup_of = {}
        for i, a in enumerate(flat):
            if isinstance(a, Tensor):
                j = first.setdefault(id(a), i)
                if j != i:
                    dup_of[i] = j
        uniq = [flat[i] for i in uniq_pos]
        try:
            entry = _compile_entry(self.fn, flat, spec, uniq_pos, dup_of, uniq, self.options)
        except GRAPH_BREAKS as e:
            entry = _Entry()
            if isinstance(e, AliasedWrite):  # NOTE [synthetic bases]
                entry.fallback = synthetic_base_runner(
                    self.fn, flat, spec, lambda g: AOTCompiledFunction(g, self.options)
                )
            if entry.fallback is None:
                hook = self.options.get("graph_break")
                if hook is None:
                    raise
                entry.fallback = hook(sig, e)
        self.cache[sig] = entry
        self.signatures.append(sig)
        return entry

    def explain_signature(self, sig: Any) -> str:
        """Why ``sig`` misses the cache: the closest earlier signature and what differs."""
        if not self.signatures:
            return f"{self.__name__}: first compilation"
        closest = min(self.signatures, key=lambda s: distance(sig, s))
        diffs = describe_difference(sig, closest)
        n = self.signatures.index(closest)
        return (
            f"{self.__name__}: retracing (compiled signatures: {len(self.signatures)}); "
            f"closest is #{n}: " + "; ".join(diffs)
        )

    def explain(self) -> list[str]:
        """Why each retrace happened, in order."""
        return list(self.recompile_reasons)

    @property
    def graphs(self) -> list[dict[str, GraphModule]]:
        """Per compiled signature, its graphs (``inference``, or ``joint``/``forward``/
        ``backward``)."""
        return [
            {k: v for k, v in e.graphs.items() if isinstance(v, GraphModule)}
            for e in self.cache.values()
        ]


def aot_function(
    fn: Callable[..., Any],
    fw_compiler: Callable[..., Any],
    bw_compiler: Callable[..., Any] | None = None,
    partition_fn: Callable[..., Any] = default_partition,
    decompositions: dict[Any, Callable[..., Any]] | None = None,
    num_params_buffers: int = 0,
    keep_inference_input_mutations: bool = False,
    inference_compiler: Callable[..., Any] | None = None,
    *,
    dynamic: bool = False,
    enable_log: bool = True,
) -> AOTCompiledFunction:
    """``fn`` traced ahead of time into dense forward and backward graphs, each compiled by
    its compiler (``(GraphModule, example_inputs) -> callable``), run behind a runtime
    wrapper (NOTE [aot autograd]); retraced when the arguments' signature changes (NOTE
    [aot guards]).

    >>> from ember.aot import aot_function, nop
    >>> f = aot_function(lambda x, y: (x * y).sin(), nop)
    >>> x = ember.ones(3, requires_grad=True)
    >>> f(x, ember.zeros(3)).sum().backward()
    >>> x.grad
    tensor([0., 0., 0.])
    """
    if dynamic:
        raise NotImplementedError("aot_function(dynamic=True): ember traces static shapes only")
    options = {
        "fw_compiler": fw_compiler,
        "bw_compiler": bw_compiler,
        "partition_fn": partition_fn,
        "decompositions": dict(decompositions or {}),
        "num_params_buffers": num_params_buffers,
        "keep_inference_input_mutations": keep_inference_input_mutations,
        "inference_compiler": inference_compiler,
    }
    return AOTCompiledFunction(fn, options)


class AOTModule(Module):
    """What ``aot_module`` returns: the module's forward compiled with its parameters and
    buffers as the first inputs."""

    def __init__(self, mod: Module, compiled: AOTCompiledFunction) -> None:
        super().__init__()
        self.orig_module = mod
        self.__dict__["compiled"] = compiled

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        params = dict(self.orig_module.named_parameters(remove_duplicate=False))
        buffers = dict(self.orig_module.named_buffers(remove_duplicate=False))
        return self.__dict__["compiled"](params, buffers, *args, **kwargs)


def aot_module(mod: Module, *args: Any, **kwargs: Any) -> AOTModule:
    """``mod``'s forward as ``aot_function`` compiles it, parameters and buffers first.

    >>> from ember.aot import aot_module, nop
    >>> lin = ember.nn.Linear(3, 1)
    >>> m = aot_module(lin, nop)
    >>> bool(ember.allclose(m(ember.ones(2, 3)), lin(ember.ones(2, 3))))
    True
    """
    from ember.func import functional_call  # (ember.func imports ember.aot for functionalize)

    def functional(params: dict[str, Any], buffers: dict[str, Any], *a: Any, **k: Any) -> Any:
        return functional_call(mod, {**params, **buffers}, a, k)

    n = len(list(mod.parameters())) + len(list(mod.buffers()))
    kwargs.setdefault("num_params_buffers", n)
    return AOTModule(mod, aot_function(functional, *args, **kwargs))


def aot_module_simplified(
    mod: Module, args: Any, fw_compiler: Callable[..., Any], *a: Any, **k: Any
) -> AOTModule:
    """``aot_module`` (the example ``args`` are not needed: ember traces on first call)."""
    return aot_module(mod, fw_compiler, *a, **k)
