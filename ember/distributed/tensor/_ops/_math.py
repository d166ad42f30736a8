"""Sharding rules of matrix products: rows of the left factor or columns of the right one stay
sharded; a sharded contraction dimension gives Partial(sum); Partial factors times
Replicate ones stay Partial."""

from __future__ import annotations

import ember
from ember.distributed.tensor._dispatch import Candidate, OpCtx, register_rule
from ember.distributed.tensor.placement_types import Partial, Placement, Replicate, Shard

aten = ember.ops.aten

__all__: list[str] = []

R, P = Replicate(), Partial("sum")


def _with_partials(ctx: OpCtx, m: int, base: list[Candidate], n_factors: int) -> list[Candidate]:
    """``base`` plus, when a factor is Partial(sum) now, that factor Partial and the other
    Replicate."""
    cur = [s.placements[m] for s in ctx.specs][-n_factors:]
    lead = len(ctx.specs) - n_factors
    out = list(base)
    for j, p in enumerate(cur):
        if p == P:
            ins = [R] * n_factors
            ins[j] = P
            out.append(Candidate(tuple([P] * lead + ins), (P,)))
    out.append(Candidate(tuple([R] * len(ctx.specs)), (R,)))
    return out


@register_rule(aten.mm.default)
def _mm(ctx: OpCtx, m: int) -> list[Candidate]:
    base = [
        Candidate((Shard(0), R), (Shard(0),)),
        Candidate((R, Shard(1)), (Shard(1),)),
        Candidate((Shard(1), Shard(0)), (P,)),
    ]
    return _with_partials(ctx, m, base, 2)


@register_rule(aten.bmm.default)
def _bmm(ctx: OpCtx, m: int) -> list[Candidate]:
    base = [
        Candidate((Shard(0), Shard(0)), (Shard(0),)),
        Candidate((Shard(1), R), (Shard(1),)),
        Candidate((R, Shard(2)), (Shard(2),)),
        Candidate((Shard(2), Shard(1)), (P,)),
    ]
    return _with_partials(ctx, m, base, 2)


def _bias(bias_shape: tuple[int, ...], out_shape: tuple[int, ...], out_dim: int) -> Placement:
    """The placement of a broadcast bias for an output sharded on ``out_dim``."""
    d = out_dim - (len(out_shape) - len(bias_shape))
    return Shard(d) if d >= 0 and bias_shape[d] == out_shape[out_dim] else R


@register_rule(aten.addmm.default)
def _addmm(ctx: OpCtx, m: int) -> list[Candidate]:
    out = ctx.out_meta[0].shape
    if len(ctx.specs) != 3:  # a plain bias: only layouts that need none of its pieces
        return [Candidate((R, R), (R,))]
    b = ctx.specs[0].shape
    base = [
        Candidate((_bias(b, out, 0), Shard(0), R), (Shard(0),)),
        Candidate((_bias(b, out, 1), R, Shard(1)), (Shard(1),)),
        Candidate((P, Shard(1), Shard(0)), (P,)),
    ]
    return _with_partials(ctx, m, base, 2)
