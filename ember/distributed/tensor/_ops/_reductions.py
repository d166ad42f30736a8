"""Sharding rules of reductions: a sharded reduced dimension leaves partial results (sums:
Partial(sum); means of even pieces: Partial(avg); amax/amin: Partial(max/min)); a kept
sharded dimension stays sharded (renumbered without keepdim)."""

from __future__ import annotations

import ember
from ember.distributed.tensor._dispatch import Candidate, OpCtx, register_rule
from ember.distributed.tensor.placement_types import Partial, Placement, Replicate, Shard

aten = ember.ops.aten

__all__: list[str] = []


def _reduced(ctx: OpCtx, ndim: int) -> tuple[set[int], bool]:
    name = str(ctx.op).split(".")[1]
    overload = str(ctx.op).split(".")[-1]
    if overload == "default" and name in ("sum", "mean"):
        return set(range(ndim)), False
    dim = ctx.arg(1, "dim")
    keepdim = bool(ctx.arg(2, "keepdim", False))
    if dim is None or (isinstance(dim, (list, tuple)) and len(dim) == 0):
        return set(range(ndim)), keepdim
    dims = [dim] if isinstance(dim, int) else list(dim)
    return {d % max(ndim, 1) for d in dims}, keepdim


def _candidates(ctx: OpCtx, m: int, kind: str) -> list[Candidate]:
    s = ctx.specs[0]
    k = ctx.mesh.size(m)
    red, keepdim = _reduced(ctx, s.ndim)
    n_out = len(ctx.out_meta)
    cands = []
    for d in range(s.ndim):
        if d in red:
            if kind == "sum":
                out: Placement = Partial("sum")
            elif kind == "mean":
                if s.shape[d] % k:
                    continue  # uneven pieces: their means do not average to the mean
                out = Partial("avg")
            elif kind in ("max", "min"):
                out = Partial(kind)
            else:
                continue
        else:
            out = Shard(d if keepdim else d - sum(1 for r in red if r < d))
        cands.append(Candidate((Shard(d),), (out,) * n_out))
    cur = s.placements[m]
    if isinstance(cur, Partial) and (
        (kind in ("sum", "mean") and cur.reduce_op in ("sum", "avg"))
        or (kind in ("max", "min") and cur.reduce_op == kind)
    ):
        cands.append(Candidate((cur,), (cur,) * n_out))
    cands.append(Candidate((Replicate(),), (Replicate(),) * n_out))
    return cands


@register_rule(aten.sum.default, aten.sum.dim_IntList)
def _sum(ctx: OpCtx, m: int) -> list[Candidate]:
    return _candidates(ctx, m, "sum")


@register_rule(aten.mean.default, aten.mean.dim)
def _mean(ctx: OpCtx, m: int) -> list[Candidate]:
    return _candidates(ctx, m, "mean")


@register_rule(aten.amax.default)
def _amax(ctx: OpCtx, m: int) -> list[Candidate]:
    return _candidates(ctx, m, "max")


@register_rule(aten.amin.default)
def _amin(ctx: OpCtx, m: int) -> list[Candidate]:
    return _candidates(ctx, m, "min")


@register_rule(
    aten.var.correction, aten.var.dim, aten.std.correction, aten.std.dim, aten.max.dim,
    aten.min.dim, aten.argmax.default, aten.argmin.default, aten.prod.dim_int,
    aten.logsumexp.default, aten.all.dim, aten.any.dim,
)  # fmt: skip
def _kept_dims_only(ctx: OpCtx, m: int) -> list[Candidate]:
    """Reductions that are not a sum of pieces: only a kept dimension may be sharded."""
    return _candidates(ctx, m, "other")
