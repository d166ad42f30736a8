"""The Autograd key's kernel: one boxed fallback that records a graph node for every op.

# NOTE [autograd as a dispatch key]
A tensor carries the Autograd key only while it requires grad, so ops on plain tensors never
reach this layer. Here, with grad mode on and some input requiring grad, the op runs below
the Autograd key (nested ops record nothing), and its differentiable outputs get a
``grad_fn`` node built from the op's entry in the derivative table. In-place ops rewrite
the history of the tensor they modify (its ``grad_fn`` becomes the new node); on a leaf that
requires grad they raise, as in PyTorch. Backward formulas are ember ops, so they dispatch
like any other op and record their own graph when ``create_graph=True``.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any

from ember._tensor import Tensor
from ember.autograd import copy_slices, saved_hooks, view_rules
from ember.autograd.anomaly_mode import OPEN as ANOMALY
from ember.autograd.anomaly_mode import forward_trace, is_anomaly_enabled
from ember.autograd.forward_ad._levels import copy_tangents
from ember.autograd.function_table import DERIVATIVES, NONDIFFERENTIABLE, VJP
from ember.autograd.graph import (
    NO_EDGE,
    AccumulateGrad,
    Edge,
    Node,
    SavedOutput,
    SavedTensor,
    TensorMeta,
)
from ember.autograd.recorder import (
    Runner,
    make_nondifferentiable,
    make_passthrough,
    make_recorder,
    make_runner,
)
from ember.dispatch import marks, state
from ember.dispatch.codegen import define
from ember.dispatch.dispatcher import KIND_KEYSET, Kernel, set_fallback
from ember.dispatch.keys import (
    AUTOGRAD_BIT,
    DispatchKey,
    below,
)
from ember.dtypes import FROM_NUMPY as _FROM_NP
from ember.ops.binding import tensor_params
from ember.ops.native._define import FUNCTIONAL_OF
from ember.ops.registry import OpOverload, ops

BELOW = below(DispatchKey.Autograd)
_DETACH = ops.aten.detach.default
_SET_ = ops.aten.set_  # NOTE [set_ forms]: a NotImplemented node, not a refusal
_new = object.__new__


def gradient_edge(t: Tensor) -> Edge:
    """Where the gradient of ``t`` goes: its grad_fn, or its leaf accumulator."""
    fn = t.grad_fn
    if fn is not None:
        return (fn, t._output_nr)
    if t._base is not None and view_rules.creation_meta(t) == view_rules.NO_GRAD_MODE:
        return NO_EDGE  # a view taken under no_grad: no history, no accumulator of its own
    ref = t.__dict__.get("_grad_accumulator")
    acc = ref() if ref is not None else None
    if acc is None:  # weak, as in PyTorch: the graphs using the leaf keep it alive, not the leaf
        acc = AccumulateGrad(t)
        t._grad_accumulator = weakref.ref(acc)  # type: ignore[attr-defined]
    return (acc, 0)


def saved_output(t: Tensor) -> Tensor:
    """What a node keeps of its own output.

    # NOTE [saved outputs]
    A formula that reads the op's result (``exp``, ``relu``, ``log_softmax``) needs the output,
    and the output's ``grad_fn`` is the node: keeping the output itself would make a reference
    cycle, which only the garbage collector frees, so every graph would outlive its last
    use. Like PyTorch's SavedVariable, the node keeps instead a tensor sharing the output's
    data, view base and version counter (so in-place changes are still caught) but no
    ``grad_fn``. Under ``create_graph`` the formula gets it ``relink``-ed to the node, so the
    gradient is differentiable through the result too. That tensor is made, as PyTorch's, by a
    dispatched ``detach()``, and backward reads it through another (``_unpacked``), so a
    ``__torch_dispatch__`` mode counts what it counts on PyTorch. An output without history
    (max_pool's indices, batch norm's statistics) is kept itself, as PyTorch keeps a leaf:
    it holds no node, so there is no cycle, and no detach() is dispatched for it.
    """
    if type(t) is not Tensor:
        if marks.has_python_key(t):
            # a __torch_dispatch__ subclass makes its own alias, as PyTorch's SavedVariable
            # asks it to: one aten.detach.default per saved output
            return _DETACH(t)
        if not marks.is_batched(t):
            return t  # a subclass keeps its own state: save the output itself
        # a vmap BatchedTensor (a C++ TensorImpl in PyTorch): aliased as a plain tensor is,
        # else every graph recorded under vmap(grad(f)) would be a cycle
    if t.grad_fn is None:
        return t  # an output with no history (indices, statistics): no cycle to break
    return _alias(t)


def _alias(t: Tensor) -> Tensor:
    """A dispatched ``detach()`` of ``t`` whose base is ``t``'s own, not ``t`` (NOTE [saved
    outputs])."""
    if t._vc is None:
        t._vc = [0]
    a = _DETACH(t)
    if a._base is t:  # ember's detach is a view of t: t's own data and base instead
        a._edata = t._edata
        a._base = t._base
    elif marks.is_batched(a):  # a new wrapper of t's physical tensor: t's counter too
        a._vc = t._vc
    if marks.is_dual(t):  # a dual keeps its tangents (forward over reverse)
        copy_tangents(t, a)
    return a


def relink(saved: Tensor, node: Node, nr: int) -> Tensor:
    """A saved output as the differentiable output ``nr`` of ``node`` (for double backward)."""
    if saved.grad_fn is node or (type(saved) is not Tensor and not marks.is_batched(saved)):
        return saved
    a = _alias(saved)
    marks.mark_autograd(a)
    a.grad_fn = node
    a._output_nr = nr
    return a


def _differentiable(t: Any) -> bool:
    return isinstance(t, Tensor) and t.dtype.category >= 2


Gather = Callable[
    [tuple[Any, ...], dict[str, Any]], "tuple[tuple[Any, ...], tuple[Any, ...]] | None"
]


class _OpInfo:
    """What the fallback needs of one op, computed on its first call under the Autograd key:
    its Tensor parameters, a ``gather(args, kwargs)`` generated from the schema that returns
    (inputs, which need grad) or None when none does, and its derivative entry."""

    __slots__ = (
        "params", "gather", "vjp", "is_out", "inplace", "has_list", "simple", "saved",
        "unread", "saved_for", "kernel",
    )  # fmt: skip

    def __init__(self, op: OpOverload) -> None:
        self.params = tensor_params(op)
        self.gather = _make_gather(self.params)
        self.is_out = op._schema.is_out
        self.inplace = op._schema.is_inplace
        self.vjp = _lookup_vjp(op)
        self.has_list = any(p[2] for p in self.params)
        #: no Tensor[], not in place, not out=: a generated recorder can record it
        self.simple = not (self.has_list or self.inplace or self.is_out)
        #: the op's specialized Autograd kernel and what it was made for (NOTE [generated
        #: recorders]): (kernel, derivative entry, nondifferentiable)
        self.kernel: tuple[Kernel, VJP | None, bool] | None = None
        self.saved: tuple[int, ...] = ()  # Tensor parameters the formula reads
        self.unread: tuple[int, ...] = ()  # positions of those it never reads
        self.saved_for: VJP | None = None


def _lookup_vjp(op: OpOverload) -> VJP | None:
    return DERIVATIVES.get(op) or DERIVATIVES.get(FUNCTIONAL_OF.get(op, op))


def _make_gather(params: list[tuple[int, str, bool]]) -> Gather:
    """Straight-line code, one block per Tensor parameter (no loop over the schema per call)."""
    lines = ["def gather(args, kwargs):", "    n = len(args)"]
    for i, (pos, name, is_list) in enumerate(params):
        if pos < 0:
            lines.append(f"    x{i} = kwargs.get({name!r})")
        else:
            lines.append(f"    x{i} = args[{pos}] if n > {pos} else kwargs.get({name!r})")
        if is_list:
            lines.append(
                f"    r{i} = [isinstance(t, T) and bool(t._ekeys & AB) for t in x{i}]"
                f" if x{i} is not None else []"
            )
        else:
            lines.append(f"    r{i} = isinstance(x{i}, T) and bool(x{i}._ekeys & AB)")
    k = len(params)
    if not k:
        lines.append("    return None")
    else:
        any_ = " or ".join(f"any(r{i})" if p[2] else f"r{i}" for i, p in enumerate(params))
        xs = "".join(f"x{i}, " for i in range(k))
        rs = "".join(f"r{i}, " for i in range(k))
        lines += [f"    if {any_}:", f"        return ({xs}), ({rs})", "    return None"]
    scope: dict[str, Any] = {"T": Tensor, "AB": AUTOGRAD_BIT}
    return define(lines, scope, "gather", "autograd inputs")  # type: ignore[return-value]


_INFO: dict[OpOverload, _OpInfo] = {}


def _below(op: OpOverload, ks: int, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """Run ``op`` with the Autograd key excluded."""
    with state.KeyGuard(exclude=AUTOGRAD_BIT):
        return op.redispatch(ks & BELOW, *args, **kwargs)


def autograd_fallback(
    op: OpOverload, ks: int, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> Any:
    info = _INFO.get(op)
    if info is None:
        info = _INFO[op] = _OpInfo(op)
    if not state.local.grad_enabled:
        # nothing records: ops nested below see grad mode off too, so no exclude is needed
        out = op.redispatch(ks & BELOW, *args, **kwargs)
        if info.inplace and args:  # NOTE [view creation meta] in view_rules.py
            view_rules.written_without_grad(args[0])
        elif op.is_view and args and isinstance(args[0], Tensor) and args[0].requires_grad:
            view_rules.nograd_view(out)
        return out
    if op in NONDIFFERENTIABLE:
        return _below(op, ks, args, kwargs)
    found = info.gather(args, kwargs)
    if found is None:
        return op.redispatch(ks & BELOW, *args, **kwargs)
    inputs, needs = found
    if info.is_out:
        raise RuntimeError(
            f"{op.overloadpacket.__name__}(): functions with out=... arguments don't support "
            "automatic differentiation, but one of the arguments requires grad. Call it without "
            "out= or inside ember.no_grad()."
        )
    vjp = info.vjp
    if vjp is None:
        vjp = info.vjp = _lookup_vjp(op)  # registered since the first call, or still none
    inplace = info.inplace
    if inplace:
        _check_inplace(op, args[0])
    if vjp is None:
        out = _below(op, ks, args, kwargs)
        if any(_differentiable(o) for o in _flat_outputs(out)):
            # NOTE [not implemented derivatives]
            ni = _not_implemented(op)
            if inplace and op.overloadpacket is not _SET_:
                ni.formula()  # no history to rebase a written view onto: refuse at once
            _attach(_make_node(ni, info, inputs, needs, args, kwargs, out), out)
        return out
    formula_args = args
    if inplace and "self" in vjp.reads:
        # the formula reads self as it was before the write: a copy, recorded, so a
        # create_graph backward differentiates through it too
        formula_args = (args[0].clone(), *args[1:])  # type: ignore[attr-defined]
    # an integer or bool tensor written in place never gets a history (it cannot require
    # grad), even when what was written into it does
    base = args[0]._base if inplace and _differentiable(args[0]) else None
    base_edge = gradient_edge(base) if base is not None and base.requires_grad else NO_EDGE
    out = _below(op, ks, args, kwargs)
    node = _make_node(vjp, info, inputs, needs, formula_args, kwargs, out)
    _attach(node, out)
    if saved_hooks.STACK:  # NOTE [packed saved tensors]
        saved_hooks.pack_node(node, [info.params[i][:2] for i in _saved_indices(vjp, info)])
    if base is not None:
        view_node = copy_slices.record(base, args[0], node, base_edge)  # NOTE [in-place on a view]
        if vjp.wants_result:  # the result's history is the view's new one, not the op's node
            node._result_node = view_node
    elif inplace and _differentiable(args[0]):  # NOTE [views of a rewritten base]
        copy_slices.regenerate(args[0], None)
    elif op.is_view:
        multi = isinstance(out, (tuple, list))  # NOTE [view creation meta]
        for o in _flat_outputs(out):
            if isinstance(o, Tensor) and o._base is not None:
                copy_slices.track(o, args[0], multi)
    return out


class LeafWriteError(RuntimeError):
    """An in-place op on a leaf that requires grad (or a view of one), which autograd
    refuses; a RuntimeError as PyTorch's. Its own class so that a trace can tell it apart
    (``aot_function``'s inputs are leaves of its trace: NOTE [aot autograd])."""


def _check_inplace(op: OpOverload, self: Any) -> None:
    if not isinstance(self, Tensor):
        return
    base = self._base
    if base is not None:
        view_rules.check(op.__name__, self)  # NOTE [view creation meta]
    if base is not None and base.requires_grad and base.grad_fn is None:
        raise LeafWriteError(
            f"{op.__name__}: a view of a leaf Variable that requires grad is being used in an "
            "in-place operation. Do it inside ember.no_grad(), or on a clone() of the leaf."
        )
    if self.requires_grad and self.grad_fn is None and base is None:
        raise LeafWriteError(
            f"{op.__name__}: a leaf Variable that requires grad is being used in an in-place "
            "operation. Do it inside ember.no_grad(), or on a clone()."
        )


def _flat_outputs(out: Any) -> list[Any]:
    return list(out) if isinstance(out, (tuple, list)) else [out]


# NOTE [not implemented derivatives]
# An op with no derivative formula called on tensors that require grad records a node named
# ``NotImplemented`` whose backward raises, as PyTorch's does: the error comes only if a
# backward reaches it. Double backward through a graph that holds such an op's node (the
# backward of fused attention, of grid sampling) works as long as no gradient flows into it.
# ``set_`` (NOTE [set_ forms] in ember/_tensor_set.py) replaces what it writes rather than
# changing values, so it records its ``NotImplemented`` node as PyTorch's does, not refusing.
_NOT_IMPLEMENTED: dict[OpOverload, VJP] = {}


def _not_implemented(op: OpOverload) -> VJP:
    """The derivative entry of ``op``'s ``NotImplemented`` nodes, made once."""
    vjp = _NOT_IMPLEMENTED.get(op)
    if vjp is None:
        message = (
            f"the derivative for '{op.name()}' is not implemented: add a line for it to "
            "ember/autograd/derivatives.py, or call it on tensors that don't require grad "
            "(detach() them)"
        )

        def formula(*args: Any, **kwargs: Any) -> Any:
            raise RuntimeError(message)

        vjp = _NOT_IMPLEMENTED[op] = VJP(op, formula, "NotImplemented")
    return vjp


def _make_node(
    vjp: VJP,
    info: _OpInfo,
    inputs: tuple[Any, ...],
    needs: tuple[Any, ...],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    out: Any,
) -> Node:
    sizes = None
    if info.has_list:  # flat, as PyTorch's: one edge per element of a Tensor[]
        e_list: list[Any] = []
        m_list: list[Any] = []
        size_list = []
        for x, need, (_, _, is_list) in zip(inputs, needs, info.params, strict=True):
            if is_list:
                items = list(x or ())
                size_list.append(len(items))
                for t, n in zip(items, need, strict=True):
                    e_list.append(gradient_edge(t) if n else NO_EDGE)
                    m_list.append(_meta_of(t))
            else:
                size_list.append(-1)
                e_list.append(gradient_edge(x) if need else NO_EDGE)
                m_list.append(_meta_of(x))
        edges, meta, sizes = tuple(e_list), tuple(m_list), tuple(size_list)
    else:  # the common case, unrolled: no generators, no Size objects
        e_list = []
        m_list = []
        for x, n in zip(inputs, needs, strict=True):
            if n:
                fn = x.grad_fn
                e_list.append((fn, x._output_nr) if fn is not None else gradient_edge(x))
            else:
                e_list.append(NO_EDGE)
            if isinstance(x, Tensor):
                d = x._edata
                m_list.append((d.shape, d.dtype))
            else:
                m_list.append(None)
        edges, meta = tuple(e_list), tuple(m_list)
    saved_indices = _saved_indices(vjp, info)
    unread = info.unread
    if unread:  # tensors the formula never reads are not kept alive by the graph
        kept = list(args)
        for i in unread:
            if i < len(kept):
                kept[i] = None
        args = tuple(kept)
    node = vjp.cls(runner(vjp), edges, meta, ctx=(vjp, args, kwargs))
    if sizes is not None:
        node._sizes = sizes
    if ANOMALY[0] and is_anomaly_enabled():
        node.metadata["trace"] = forward_trace()
    saved = node.saved
    for i in saved_indices:
        # an in-place op's formula reads the copy of self taken before the write: save that
        x = args[0] if i == 0 and info.inplace else inputs[i]
        if x is None:
            continue
        for t in x if info.params[i][2] else (x,):
            if isinstance(t, Tensor):
                saved.append(SavedTensor(t, vjp.name))
    return node


def _meta_of(t: Any) -> tuple[tuple[int, ...], Any] | None:
    """An input's entry of ``input_meta``: its shape and NumPy dtype."""
    return (t._edata.shape, t._edata.dtype) if isinstance(t, Tensor) else None


def _saved_indices(vjp: VJP, info: _OpInfo) -> tuple[int, ...]:
    """Which Tensor parameters the formula reads (saved and version-checked), cached."""
    if info.saved_for is not vjp:
        reads = vjp.reads
        info.saved = tuple(i for i, p in enumerate(info.params) if p[1] in reads)
        info.unread = tuple(p[0] for p in info.params if p[0] >= 0 and p[1] not in reads)
        info.saved_for = vjp
    return info.saved


def _attach(node: Node, out: Any) -> None:
    """Give the op's differentiable outputs their history (``node``) and keep what the
    formula reads of them (NOTE [saved outputs])."""
    vjp: VJP = node.ctx[0]
    if not isinstance(out, (tuple, list)):  # one output: the common case
        if isinstance(out, Tensor):
            if _FROM_NP[out._edata.dtype].category >= 2:
                out._ekeys |= AUTOGRAD_BIT
                out.grad_fn = node
                if out._output_nr:
                    out._output_nr = 0
            if vjp.wants_result:
                kept = node.result = saved_output(out)
                node.saved.append(SavedOutput(kept, vjp.name, 0))
        elif vjp.wants_result:
            node.result = out
        return
    outs = list(out)
    node.n_outputs = len(outs)
    node._sequence = True  # the formula gets a tuple of gradients, even for one output
    flags = vjp.outputs
    # out_meta: what the engine fills a missing gradient with (None: no gradient, no zeros)
    out_meta: list[Any] = []
    for i, o in enumerate(outs):
        if _differentiable(o) and (flags is None or flags[i]):
            o._ekeys |= AUTOGRAD_BIT
            o.grad_fn = node
            o._output_nr = i
            out_meta.append((o.shape, o.dtype))
        else:
            out_meta.append(None)
    node.out_meta = tuple(out_meta)
    if vjp.wants_result:
        reads = vjp.result_reads  # the formula's result[i]: only those are kept
        kept_outs = [
            None if reads is not None and i not in reads
            else saved_output(o) if isinstance(o, Tensor) else o
            for i, o in enumerate(outs)
        ]  # fmt: skip
        node.result = _same_sequence(out, kept_outs)
        for i, o in enumerate(kept_outs):
            if isinstance(o, Tensor):
                node.saved.append(SavedOutput(o, vjp.name, i))


_RUNNERS: dict[VJP, Runner] = {}


def runner(vjp: VJP) -> Runner:
    """The backward function of ``vjp``'s nodes (NOTE [generated recorders]), made once."""
    run = _RUNNERS.get(vjp)
    if run is None:
        run = _RUNNERS[vjp] = make_runner(vjp, _with_meta, _relinked, _unpacked, flatten)
    return run


def _with_meta(args: tuple[Any, ...], where: tuple[tuple[int, int], ...], node: Node) -> Any:
    """The formula's arguments with a ``TensorMeta`` for each shape-only one (NOTE
    [shape-only arguments]): ``where`` holds (argument position, Tensor-parameter index)."""
    out = list(args)
    metas = node.input_meta
    sizes = node._sizes
    for pos, i in where:
        if sizes is not None:  # entries of next_functions before parameter i
            i = sum(1 if n < 0 else n for n in sizes[:i])
        if pos < len(out) and out[pos] is None and i < len(metas) and metas[i] is not None:
            out[pos] = TensorMeta(*metas[i])
    return tuple(out)


def flatten(grads: Any, sizes: tuple[int, ...]) -> list[Any]:
    """A formula's gradients (a list per ``Tensor[]`` parameter) as one per entry of
    ``next_functions``."""
    out: list[Any] = []
    for g, n in zip(grads, sizes, strict=True):
        if n < 0:
            out.append(g)
        elif g is None:
            out += [None] * n
        else:
            if len(g) != n:
                raise RuntimeError(
                    f"a backward formula returned {len(g)} gradients for a list of {n} tensors"
                )
            out += g
    return out


def _relinked(node: Node, result: Any) -> Any:
    """The saved result(s) as differentiable outputs of ``node`` again (create_graph)."""
    if isinstance(result, Tensor):  # one output: differentiable if floating
        if _FROM_NP[result._edata.dtype].category < 2:
            return result
        rn = node._result_node
        return relink(result, node if rn is None else rn, 0)
    meta = node.out_meta
    outs = [
        relink(r, node, i) if isinstance(r, Tensor) and meta[i] is not None else r
        for i, r in enumerate(result)
    ]
    return _same_sequence(result, outs)


def _unpacked(node: Node, result: Any) -> Any:
    """The saved result(s) as backward reads them without create_graph: a ``detach()`` of
    each differentiable one, as PyTorch's SavedVariable unpacks a saved output (NOTE [saved
    outputs]); outputs without history are read as they are."""
    if isinstance(result, Tensor):
        return _detach(result) if _FROM_NP[result._edata.dtype].category >= 2 else result
    meta = node.out_meta
    outs = [
        _detach(r) if isinstance(r, Tensor) and meta[i] is not None else r
        for i, r in enumerate(result)
    ]
    return _same_sequence(result, outs)


def _detach(t: Tensor) -> Tensor:
    """A dispatched ``detach()`` that keeps a dual's tangents (NOTE [saved outputs])."""
    a = _DETACH(t)
    if marks.is_dual(t):
        copy_tangents(t, a)
    return a


def _same_sequence(like: Any, items: list[Any]) -> Any:
    """``items`` as the kind of sequence ``like`` is (a list, tuple or return_types tuple)."""
    if not isinstance(like, tuple):
        return items
    make = getattr(type(like), "_make", None)
    return make(items) if make is not None else tuple(items)


def specialize(op: OpOverload) -> Kernel:
    """The Autograd kernel of ``op``, when its kernel table is built (NOTE [specialized
    fallbacks]): a generated recorder for an op with a formula and plain Tensor parameters,
    otherwise a pass-through that runs it below at once in no-grad mode (NOTE [generated
    recorders])."""
    info = _INFO.get(op)
    if info is None:
        info = _INFO[op] = _OpInfo(op)
    vjp = DERIVATIVES.get(op)
    nondiff = op in NONDIFFERENTIABLE
    made = info.kernel
    if made is not None and made[1] is vjp and made[2] == nondiff:
        return made[0]
    if nondiff:
        fn = make_nondifferentiable(op, BELOW)
    elif vjp is not None and info.simple:
        fn = make_recorder(
            op,
            info.params,
            vjp,
            BELOW,
            gradient_edge,
            _attach,
            runner(vjp),
            saved_output,
            copy_slices.track,
            view_rules.nograd_view,
            autograd_fallback,
        )
    else:
        written = view_rules.written_without_grad if info.inplace else None
        fn = make_passthrough(op, BELOW, autograd_fallback, written)
    info.kernel = (fn, KIND_KEYSET), vjp, nondiff
    return info.kernel[0]


def install() -> None:
    set_fallback(DispatchKey.Autograd, autograd_fallback, specialize=specialize)
