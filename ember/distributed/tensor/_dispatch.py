"""How DTensor runs an op: the op's sharding rule (``_ops``) lists, per mesh dimension, the
layouts it can compute in; the cheapest one given the inputs' current layouts is chosen; the
inputs are redistributed to it; the op runs on the local pieces; the results are wrapped with
the global shapes a Meta run of the op gave.

NOTE [replicate fallback]: an op with no rule runs on replicated inputs (all-gathered,
partial sums reduced), densely, and its results are Replicate: slow but never wrong. It warns
once per op, naming it, so a missing rule shows up.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import ember
from ember._tensor import Tensor
from ember._warn import warn_user
from ember.distributed.tensor._api import DTensor
from ember.distributed.tensor._redistribute import redistribute_local
from ember.distributed.tensor._spec import DTensorSpec, TensorMeta, local_shape
from ember.distributed.tensor.placement_types import Partial, Placement, Replicate, Shard
from ember.utils._python_dispatch import return_and_correct_aliasing
from ember.utils._pytree import tree_flatten, tree_unflatten

__all__ = ["Candidate", "OpCtx", "dispatch", "register_rule", "RULES"]


@dataclass
class Candidate:
    """One way to run an op along one mesh dimension: a placement per DTensor input (None:
    as it is) and one per tensor output."""

    inputs: tuple[Placement | None, ...]
    outputs: tuple[Placement, ...]


@dataclass
class OpCtx:
    """What a rule sees: the op, its arguments with each DTensor replaced by its spec, the
    specs in argument order, the outputs' global metadata, and the mesh."""

    op: Any
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    specs: list[DTensorSpec]
    out_meta: list[TensorMeta]
    mesh: Any
    extra: dict[str, Any] = field(default_factory=dict)

    def arg(self, i: int, name: str, default: Any = None) -> Any:
        """Argument ``i`` (or keyword ``name``)."""
        if i < len(self.args):
            return self.args[i]
        return self.kwargs.get(name, default)


# a rule: (ctx, mesh dim) -> candidates; local_fn: (ctx, local args, kwargs, chosen
# output placements per output) -> local results, for ops whose pieces need different
# arguments or a different computation than the dense op.
Rule = Callable[[OpCtx, int], list[Candidate]]
RULES: dict[Any, Rule] = {}
LOCAL_FNS: dict[Any, Callable[..., Any]] = {}
_WARNED: set[str] = set()
LOCAL_COPY = [False]  # set by a view's local_fn that had to copy (NOTE [local strides])
# reading a value is no missing rule: no warning (NOTE [data-dependent results])
_QUIET = {"aten._local_scalar_dense.default", "aten.equal.default", "aten.is_nonzero.default"}


def register_rule(*ops: Any, local_fn: Callable[..., Any] | None = None) -> Callable[[Rule], Rule]:
    def deco(rule: Rule) -> Rule:
        for op in ops:
            RULES[op] = rule
            if local_fn is not None:
                LOCAL_FNS[op] = local_fn
        return rule

    return deco


def _cost(cur: Placement, req: Placement | None, numel: int) -> float:
    if req is None or cur == req:
        return 0.0
    if isinstance(cur, Replicate):
        return 0.01 * numel  # local chunking or zeroing
    if isinstance(cur, Shard):
        return (0.5 if isinstance(req, Shard) else 1.0) * numel
    return (1.0 if isinstance(req, Shard) else 2.0) * numel  # a partial reduction


def _numel(spec: DTensorSpec) -> int:
    n = 1
    for s in spec.shape:
        n *= s
    return n


def _to_meta(x: Any, spec: DTensorSpec) -> Tensor:
    tm = spec.tensor_meta
    return ember.empty_strided(tm.shape, tm.stride, dtype=tm.dtype, device="meta")


_IMPLICIT = [False]  # inside implicit_replication()


@contextlib.contextmanager
def implicit_replication() -> Iterator[None]:
    """Within this block, plain tensors in an op with DTensors count as Replicate DTensors
    (every rank must hold the same values), as
    ``torch.distributed.tensor.experimental.implicit_replication``."""
    old = _IMPLICIT[0]
    _IMPLICIT[0] = True
    try:
        yield
    finally:
        _IMPLICIT[0] = old


_FLAT = object()  # the tree of a call whose arguments are all leaves and has no kwargs


def _flatten(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[list[Any], Any]:
    if not kwargs and not any(isinstance(a, (list, tuple, dict)) for a in args):
        return list(args), _FLAT
    return tree_flatten((args, kwargs))


def _unflatten(flat: list[Any], tree: Any) -> tuple[tuple[Any, ...], dict[str, Any]]:
    if tree is _FLAT:
        return tuple(flat), {}
    return tree_unflatten(flat, tree)  # type: ignore[no-any-return]


def _key_of(x: Any) -> Any:
    if isinstance(x, DTensor):
        s = x._spec
        return ("D", s.placements, s.tensor_meta)
    if isinstance(x, Tensor):
        return ("T", tuple(x.shape), x.dtype)
    if isinstance(x, (list, tuple)):
        return tuple(_key_of(y) for y in x)
    return (type(x), x)


# NOTE [plan cache]: an op's plan (the chosen layouts, the outputs' global metadata) depends
# only on the op, the DTensor arguments' specs, the plain tensors' shapes and dtypes and the
# other arguments' values, so it is computed once per such key: the Meta run and the rule
# cost about a millisecond, the lookup microseconds.
_PLANS: dict[Any, Any] = {}
_PLAN_CACHE_SIZE = 4096


def dispatch(func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    if str(func).startswith("aten._foreach_"):
        return _foreach(func, args, kwargs)
    flat, tree = _flatten(args, kwargs)
    idx = [i for i, x in enumerate(flat) if isinstance(x, DTensor)]
    dts: list[DTensor] = [flat[i] for i in idx]
    mesh = dts[0]._spec.mesh
    if _IMPLICIT[0]:
        rep = tuple(Replicate() for _ in range(mesh.ndim))
        for i, x in enumerate(flat):
            if isinstance(x, Tensor) and not isinstance(x, DTensor) and x.ndim:
                meta = TensorMeta(tuple(x.shape), tuple(x.stride()), x.dtype)
                flat[i] = DTensor(x, DTensorSpec(mesh, rep, meta), requires_grad=False)
        args, kwargs = _unflatten(flat, tree)
        idx = [i for i, x in enumerate(flat) if isinstance(x, DTensor)]
        dts = [flat[i] for i in idx]
    try:
        key: Any = (
            func,
            id(mesh),
            _key_of(args),
            tuple((k, _key_of(v)) for k, v in kwargs.items()),
        )
        hash(key)
    except TypeError:  # an unhashable argument: plan every call
        key = None
    plan = _PLANS.get(key) if key is not None else None
    if plan is None:
        plan = _plan(func, flat, tree, idx, dts, mesh)
        if key is not None:
            if len(_PLANS) >= _PLAN_CACHE_SIZE:
                _PLANS.clear()
            _PLANS[key] = plan
    ctx, out_tree, need, outs, local_fn = plan
    out_meta = ctx.out_meta
    inplace = func._schema.is_mutable
    # redistribute the inputs; an in-place op's written input keeps the new layout
    local_flat = list(flat)
    for n, (i, d) in enumerate(zip(idx, dts, strict=True)):
        local_flat[i] = redistribute_local(d._local_tensor, d._spec, need[n])
        if inplace and _is_written(func, flat, i, tree):
            if d._view_copied or (need[n] != d._spec.placements and d._base is not None):
                raise NotImplementedError(
                    f"DTensor: {func} writes a view of a DTensor whose pieces are not views "
                    f"of the base's pieces ({d._spec.placements} -> {need[n]}); write the "
                    "base, or redistribute it first so the view needs no data movement "
                    "(NOTE [views of DTensors])"
                )
            if need[n] != d._spec.placements:
                d._local_tensor = local_flat[i]
                d._spec = DTensorSpec(d._spec.mesh, need[n], d._spec.tensor_meta)
    largs, lkwargs = _unflatten(local_flat, tree)
    LOCAL_COPY[0] = False
    if local_fn is not None:
        local_out = local_fn(ctx, largs, lkwargs, outs)
    else:
        local_out = func(*largs, **lkwargs)
    if inplace:
        return return_and_correct_aliasing(func, args, kwargs, _wrap_inplace(func, args, kwargs))
    if outs is None:  # NOTE [data-dependent results]
        lflat, out_tree = tree_flatten(local_out)
        rep = tuple(Replicate() for _ in range(mesh.ndim))
        out_meta = [
            TensorMeta(tuple(o.shape), tuple(o.stride()), o.dtype)
            for o in lflat
            if isinstance(o, Tensor)
        ]
        outs = [rep for _ in out_meta]
    lflat = [local_out] if isinstance(local_out, Tensor) else tree_flatten(local_out)[0]
    copied = False
    if func.is_view:
        # NOTE [views of DTensors]: a view's piece must be a view of its base's piece for
        # writes through it to reach the base; a view that needed data moved (or a copy,
        # NOTE [local strides]) is marked, and writing it raises instead of writing a copy
        src = dts[0]
        copied = src._view_copied or local_flat[idx[0]] is not src._local_tensor or LOCAL_COPY[0]
    wrapped, k = [], 0
    for o in lflat:
        if isinstance(o, Tensor):
            tm = out_meta[k]
            spec = DTensorSpec(mesh, outs[k], TensorMeta(tm.shape, tm.stride, o.dtype))
            want = local_shape(tm.shape, outs[k], mesh.get_coordinate(), mesh.shape)
            if tuple(o.shape) != want:
                raise RuntimeError(
                    f"DTensor internal error: {func} gave a local result of shape "
                    f"{list(o.shape)} where {outs[k]} of {list(tm.shape)} needs {list(want)}"
                )
            w = DTensor(o, spec, requires_grad=False)
            if func.is_view:
                w._view_copied = copied
            wrapped.append(w)
            k += 1
        else:
            wrapped.append(o)
    out = wrapped[0] if isinstance(local_out, Tensor) else tree_unflatten(wrapped, out_tree)
    return return_and_correct_aliasing(func, args, kwargs, out)


def _plan(func: Any, flat: list[Any], tree: Any, idx: list[int], dts: list[Any], mesh: Any) -> Any:
    """What ``dispatch`` caches for one call signature (NOTE [plan cache])."""
    for x in flat:
        if isinstance(x, DTensor):
            if x._spec.mesh != mesh:
                raise RuntimeError(
                    f"{func}: DTensor arguments on different meshes ({mesh} and "
                    f"{x._spec.mesh}); redistribute them onto one"
                )
        elif isinstance(x, Tensor) and x.ndim != 0:
            raise RuntimeError(
                f"{func}: got mixed ember.Tensor (shape {list(x.shape)}) and DTensor "
                "arguments; make every tensor a DTensor first (distribute_tensor or "
                "DTensor.from_local, or implicit_replication() for tensors every rank holds "
                "alike)"
            )
    specs = [d._spec for d in dts]
    # global output metadata from the Meta kernel (a 0-d plain tensor is a replicated scalar)
    meta_flat = list(flat)
    for i, d in zip(idx, dts, strict=True):
        meta_flat[i] = _to_meta(d, d._spec)
    for i, x in enumerate(flat):
        if isinstance(x, Tensor) and not isinstance(x, DTensor):
            meta_flat[i] = ember.empty_strided(
                tuple(x.shape), x.stride(), dtype=x.dtype, device="meta"
            )
    margs, mkwargs = _unflatten(meta_flat, tree)
    try:
        meta_out = func(*margs, **mkwargs)
    except (NotImplementedError, RuntimeError):
        # NOTE [data-dependent results]: an op whose result depends on the values (item(),
        # nonzero, unique...) has no Meta answer: it runs on the replicated inputs and its
        # results are Replicate, shaped as they come out
        if str(func) not in _QUIET and str(func) not in _WARNED:
            _WARNED.add(str(func))
            warn_user(
                f"DTensor: {func} has a data-dependent result; it runs on replicated inputs "
                "(all-gathered) and returns Replicate results"
            )
        rep = tuple(Replicate() for _ in range(mesh.ndim))
        ctx = OpCtx(func, (), {}, [d._spec for d in dts], [], mesh)
        return ctx, None, [rep for _ in dts], None, None
    out_flat, out_tree = tree_flatten(meta_out)
    out_meta = [
        TensorMeta(tuple(o.shape), tuple(o.stride()), o.dtype)
        for o in out_flat
        if isinstance(o, Tensor)
    ]
    spec_flat = list(flat)
    for i, d in zip(idx, dts, strict=True):
        spec_flat[i] = d._spec
    sargs, skwargs = _unflatten(spec_flat, tree)
    ctx = OpCtx(func, sargs, skwargs, specs, out_meta, mesh)
    rule = RULES.get(func)
    if rule is None:
        if any(a.is_write and a.type.is_list for a in func._schema.arguments):
            raise NotImplementedError(
                f"DTensor: {func} writes a list of tensors and has no sharding rule; "
                "call the op on each tensor instead"
            )
        if str(func) not in _WARNED:
            _WARNED.add(str(func))
            warn_user(
                f"DTensor: {func} has no sharding rule yet; it runs on replicated inputs "
                "(all-gathered) and returns Replicate results"
            )
        need = [tuple(Replicate() for _ in range(mesh.ndim)) for _ in dts]
        outs = [tuple(Replicate() for _ in range(mesh.ndim)) for _ in out_meta]
        return ctx, out_tree, need, outs, None
    need, outs = _choose(ctx, rule, dts, func._schema.is_mutable)
    return ctx, out_tree, need, outs, LOCAL_FNS.get(func)


def _foreach(func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """A ``_foreach_*`` op as the same op on each tensor of its lists (each dispatching
    through its own rule)."""
    name = str(func).split(".")[1][len("_foreach_") :]
    packet = getattr(ember.ops.aten, name)
    n = len(args[0])
    results = []
    for i in range(n):
        a_i = [a[i] if isinstance(a, (list, tuple)) else a for a in args]
        kw = dict(kwargs)
        if name.startswith(("addcmul", "addcdiv")) and len(a_i) == 4:
            kw["value"] = a_i.pop()  # positional in the foreach op, keyword in addcmul
        results.append(packet(*a_i, **kw))
    return None if func._schema.is_mutable else results


def _is_written(func: Any, flat: list[Any], i: int, tree: Any) -> bool:
    args, kwargs = _unflatten(list(range(len(flat))), tree)
    pos = 0
    for a in func._schema.arguments:
        x = kwargs.get(a.name) if a.kwarg_only else (args[pos] if pos < len(args) else None)
        if not a.kwarg_only:
            pos += 1
        if a.is_write and x == i:
            return True
    return False


def _wrap_inplace(func: Any, args: Any, kwargs: Any) -> Any:
    written = []
    pos = 0
    for a in func._schema.arguments:
        x = kwargs.get(a.name) if a.kwarg_only else (args[pos] if pos < len(args) else None)
        if not a.kwarg_only:
            pos += 1
        if a.is_write and isinstance(x, DTensor):
            written.append(x)
    return written[0] if len(written) == 1 else tuple(written)


def _choose(
    ctx: OpCtx, rule: Rule, dts: list[Any], inplace: bool
) -> tuple[list[tuple[Placement, ...]], list[tuple[Placement, ...]]]:
    """Per mesh dimension, the cheapest candidate of ``rule`` given the inputs' layouts."""
    mesh = ctx.mesh
    n_out = len(ctx.out_meta)
    need: list[list[Placement]] = [list(d._spec.placements) for d in dts]
    outs: list[list[Placement]] = [[Replicate()] * mesh.ndim for _ in range(n_out)]
    sizes = [_numel(d._spec) for d in dts]
    written = 0 if inplace else None
    for m in range(mesh.ndim):
        cands = rule(ctx, m)
        cur = [d._spec.placements[m] for d in dts]
        if written is not None:
            # an in-place op keeps the written input's layout when a candidate can
            keep = [c for c in cands if c.outputs[0] == cur[written] and
                    c.inputs[written] in (None, cur[written])]  # fmt: skip
            cands = keep or cands
        best, best_cost = None, float("inf")
        for c in cands:
            cost = sum(_cost(p, q, s) for p, q, s in zip(cur, c.inputs, sizes, strict=True))
            if cost < best_cost:
                best, best_cost = c, cost
        if best is None:
            raise RuntimeError(f"DTensor: the rule of {ctx.op} gave no candidate")
        for n, q in enumerate(best.inputs):
            if q is not None:
                need[n][m] = q
        for k, q in enumerate(best.outputs):
            outs[k][m] = q
    return [tuple(x) for x in need], [tuple(x) for x in outs]


def replicate_all(ctx: OpCtx) -> Candidate:
    """Every input and output Replicate."""
    return Candidate(
        tuple(Replicate() for _ in ctx.specs), tuple(Replicate() for _ in ctx.out_meta)
    )


def partial_of(ctx: OpCtx, m_placements: list[Placement]) -> Partial | None:
    for p in m_placements:
        if isinstance(p, Partial):
            return p
    return None


__all__ += ["replicate_all", "partial_of"]
