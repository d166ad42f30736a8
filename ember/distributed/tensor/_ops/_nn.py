"""Sharding rules of embedding, softmax, layer norm and the negative log-likelihood loss, and
of the backward ops autograd calls for them."""

from __future__ import annotations

from typing import Any

import ember
from ember.distributed.tensor._dispatch import Candidate, OpCtx, register_rule
from ember.distributed.tensor._spec import local_offset, local_shape
from ember.distributed.tensor.placement_types import Partial, Placement, Replicate, Shard

aten = ember.ops.aten

__all__: list[str] = []

R, P = Replicate(), Partial("sum")


def _embedding_local(ctx: OpCtx, args: Any, kwargs: Any, outs: Any) -> Any:
    """A weight sharded by rows looks up only its rows; other indices give zeros there
    (the Partial(sum) of all ranks is the lookup)."""
    w_spec = ctx.specs[0]
    weight, indices = args[0], args[1]
    rest = list(args[2:])
    rows = [i for i, p in enumerate(ctx.extra["weight_ps"]) if p == Shard(0)]
    if not rows:
        return aten.embedding.default(weight, indices, *rest, **kwargs)
    coord, shape = ctx.mesh.get_coordinate(), ctx.mesh.shape
    start = local_offset(w_spec.shape, ctx.extra["weight_ps"], coord, shape)[0]
    n = local_shape(w_spec.shape, ctx.extra["weight_ps"], coord, shape)[0]
    inside = (indices >= start) & (indices < start + n)
    local_idx = ember.where(inside, indices - start, ember.zeros_like(indices))
    out = aten.embedding.default(weight, local_idx, *rest, **kwargs)
    return out * inside.unsqueeze(-1).to(out.dtype)


def _embedding_rule(ctx: OpCtx, m: int) -> list[Candidate]:
    w, idx = ctx.specs[0], ctx.specs[1]
    nd = len(ctx.out_meta[0].shape)
    cands = [Candidate((Shard(1), R), (Shard(nd - 1),))]
    cands += [Candidate((R, Shard(d)), (Shard(d),)) for d in range(idx.ndim)]
    cands.append(Candidate((Shard(0), R), (P,)))
    cands.append(Candidate((R, R), (R,)))
    del w
    return cands


def _embedding_local_entry(ctx: OpCtx, args: Any, kwargs: Any, outs: Any) -> Any:
    # the weight's chosen layout is the one it was redistributed to; read it back from outs:
    # Partial output <=> the weight is sharded by rows on that mesh dim
    ctx.extra["weight_ps"] = tuple(Shard(0) if o == P else R for o in outs[0])
    return _embedding_local(ctx, args, kwargs, outs)


register_rule(aten.embedding.default, local_fn=_embedding_local_entry)(_embedding_rule)


@register_rule(aten.embedding_dense_backward.default)
def _embedding_backward(ctx: OpCtx, m: int) -> list[Candidate]:
    g, idx = ctx.specs[0], ctx.specs[1]
    cands = [Candidate((Shard(g.ndim - 1), R), (Shard(1),))]
    cands += [Candidate((Shard(d), Shard(d)), (P,)) for d in range(idx.ndim)]
    if g.placements[m] == P:
        cands.append(Candidate((P, R), (P,)))
    cands.append(Candidate((R, R), (R,)))
    return cands


def _other_dims(ctx: OpCtx, m: int, dim: int, n_in: int, linear_first: bool) -> list[Candidate]:
    nd = ctx.specs[0].ndim
    dim %= max(nd, 1)
    cands = [Candidate((Shard(d),) * n_in, (Shard(d),)) for d in range(nd) if d != dim]
    if linear_first and ctx.specs[0].placements[m] == P:
        cands.append(Candidate((P,) + (R,) * (n_in - 1), (P,)))
    cands.append(Candidate((R,) * n_in, (R,)))
    return cands


@register_rule(aten._softmax.default, aten._log_softmax.default)
def _softmax(ctx: OpCtx, m: int) -> list[Candidate]:
    return _other_dims(ctx, m, ctx.arg(1, "dim"), 1, False)


@register_rule(aten._softmax_backward_data.default, aten._log_softmax_backward_data.default)
def _softmax_backward(ctx: OpCtx, m: int) -> list[Candidate]:
    return _other_dims(ctx, m, ctx.arg(2, "dim"), len(ctx.specs), True)


def _batch_dims(ctx: OpCtx, input_pos: int, shape_pos: int) -> int:
    inp = ctx.arg(input_pos, "input")
    return inp.ndim - len(ctx.arg(shape_pos, "normalized_shape"))


@register_rule(aten.native_layer_norm.default)
def _layer_norm(ctx: OpCtx, m: int) -> list[Candidate]:
    inp = ctx.arg(0, "input")
    axis = _batch_dims(ctx, 0, 1)
    ins = lambda p: tuple(p if s is inp else R for s in ctx.specs)  # noqa: E731
    cands = [Candidate(ins(Shard(d)), (Shard(d),) * 3) for d in range(axis)]
    cands.append(Candidate(ins(R), (R,) * 3))
    return cands


@register_rule(aten.native_layer_norm_backward.default)
def _layer_norm_backward(ctx: OpCtx, m: int) -> list[Candidate]:
    grad, inp, _, mean, rstd = (ctx.arg(i, "") for i in range(5))
    axis = _batch_dims(ctx, 1, 2)
    mask = list(ctx.arg(7, "output_mask"))
    batch_args = [grad, inp, mean, rstd]

    def ins(p: Placement) -> tuple[Placement, ...]:
        return tuple(p if any(s is a for a in batch_args) else R for s in ctx.specs)

    def outs(p: Placement, q: Placement) -> tuple[Placement, ...]:
        return tuple(x for x, on in zip((p, q, q), mask, strict=True) if on)

    cands = [Candidate(ins(Shard(d)), outs(Shard(d), P)) for d in range(axis)]
    cands.append(Candidate(ins(R), outs(R, R)))
    return cands


@register_rule(aten.nll_loss_forward.default)
def _nll_loss(ctx: OpCtx, m: int) -> list[Candidate]:
    inp, target = ctx.arg(0, "self"), ctx.arg(1, "target")
    reduction = ctx.arg(3, "reduction", 1)
    batch = [inp, target]

    def ins(p: Placement) -> tuple[Placement, ...]:
        return tuple(p if any(s is a for a in batch) else R for s in ctx.specs)

    cands = []
    if inp.ndim == 2 and reduction == 0:
        cands.append(Candidate(ins(Shard(0)), (Shard(0), R)))
    if inp.ndim == 2 and reduction == 2:
        cands.append(Candidate(ins(Shard(0)), (P, P)))
    cands.append(Candidate(ins(R), (R, R)))
    return cands


@register_rule(aten.nll_loss_backward.default)
def _nll_loss_backward(ctx: OpCtx, m: int) -> list[Candidate]:
    grad, inp, target = ctx.arg(0, "grad_output"), ctx.arg(1, "self"), ctx.arg(2, "target")
    reduction = ctx.arg(4, "reduction", 1)

    def ins(pg: Placement, pb: Placement) -> tuple[Placement, ...]:
        return tuple(pg if s is grad else pb if (s is inp or s is target) else R for s in ctx.specs)

    cands = []
    if inp.ndim == 2:
        g = Shard(0) if reduction == 0 else R
        cands.append(Candidate(ins(g, Shard(0)), (Shard(0),)))
    if grad.placements[m] == P:
        cands.append(Candidate(ins(P, R), (P,)))
    cands.append(Candidate(ins(R, R), (R,)))
    return cands


def _mse_candidates(ctx: OpCtx, m: int, reduction: int, n_batch: int) -> list[Candidate]:
    """mse_loss's layouts: both tensors sharded alike on any dim (the losses summed, or
    averaged when the pieces are even, across ranks), or Replicate."""
    x = ctx.specs[-1]  # target (or self when the target is plain)
    k = ctx.mesh.size(m)
    pre = len(ctx.specs) - n_batch
    cands = []
    for d in range(x.ndim):
        if reduction == 0:
            out: Placement = Shard(d)
        elif reduction == 2:
            out = P
        elif x.shape[d] % k == 0:
            out = Partial("avg")
        else:
            continue
        cands.append(Candidate((R,) * pre + (Shard(d),) * n_batch, (out,)))
    cands.append(Candidate((R,) * len(ctx.specs), (R,)))
    return cands


@register_rule(aten.mse_loss.default)
def _mse_loss(ctx: OpCtx, m: int) -> list[Candidate]:
    return _mse_candidates(ctx, m, ctx.arg(2, "reduction", 1), len(ctx.specs))


def _attention(ctx: OpCtx, m: int, outputs: int) -> list[Candidate]:
    """The fused attention ops (forward and backward): every tensor but the mask sharded
    along the batch dim, or the heads dim when query and key have as many heads; the mask
    replicated."""
    mask = ctx.kwargs.get("attn_mask")
    q = ctx.arg(1 if outputs == 3 else 0, "query")
    k = ctx.arg(2 if outputs == 3 else 1, "key")
    dims = [0, 1] if q.shape[1] == k.shape[1] else [0]

    def ins(p: Placement) -> tuple[Placement, ...]:
        return tuple(R if s is mask else p for s in ctx.specs)

    cands = [Candidate(ins(Shard(d)), (Shard(d),) * outputs) for d in dims]
    cands.append(Candidate(ins(R), (R,) * outputs))
    return cands


register_rule(aten._scaled_dot_product_flash_attention_for_cpu.default)(
    lambda ctx, m: _attention(ctx, m, 2)
)
register_rule(aten._scaled_dot_product_flash_attention_for_cpu_backward.default)(
    lambda ctx, m: _attention(ctx, m, 3)
)
