"""Sharding rules of views: a sharded dimension follows the view while its pieces stay the
pieces of the result (NOTE [view groups]); otherwise it is gathered first. Views are linear,
so Partial passes through."""

from __future__ import annotations

from typing import Any

import ember
from ember.distributed.tensor._dispatch import LOCAL_COPY, Candidate, OpCtx, register_rule
from ember.distributed.tensor._spec import local_shape
from ember.distributed.tensor.placement_types import Partial, Placement, Replicate, Shard

aten = ember.ops.aten

__all__ = ["view_groups"]


def view_groups(a: tuple[int, ...], b: tuple[int, ...]) -> list[tuple[list[int], list[int]]]:
    """The smallest runs of dims of ``a`` and ``b`` with equal products, in order.

    NOTE [view groups]: a view maps each run of input dims onto a run of output dims. In a run,
    a shard of its first non-1 input dim is the shard of its first non-1 output dim when the
    run is one dim to one dim, or when both dims divide evenly by the mesh size (then every
    piece is the same contiguous block of the run); any other shard must be gathered.
    """
    groups: list[tuple[list[int], list[int]]] = []
    i = j = 0
    while i < len(a) or j < len(b):
        ins: list[int] = []
        outs: list[int] = []
        pa = pb = 1
        if i < len(a):
            ins.append(i)
            pa *= a[i]
            i += 1
        if j < len(b):
            outs.append(j)
            pb *= b[j]
            j += 1
        while pa != pb:
            if (pa < pb and i < len(a)) or j >= len(b):
                ins.append(i)
                pa *= a[i]
                i += 1
            else:
                outs.append(j)
                pb *= b[j]
                j += 1
        # trailing size-1 dims join the run they follow
        while i < len(a) and a[i] == 1 and (j >= len(b) or b[j] != 1):
            ins.append(i)
            i += 1
        while j < len(b) and b[j] == 1 and (i >= len(a) or a[i] != 1):
            outs.append(j)
            j += 1
        groups.append((ins, outs))
    return groups


def _shard_map(a: tuple[int, ...], b: tuple[int, ...], k: int) -> dict[int, int]:
    """Input dim -> output dim for every input shard a view keeps."""
    out: dict[int, int] = {}
    for ins, outs in view_groups(a, b):
        big_in = [d for d in ins if a[d] != 1]
        big_out = [d for d in outs if b[d] != 1]
        if not big_in or not big_out:
            continue
        di, do = big_in[0], big_out[0]
        if len(big_in) == 1 and len(big_out) == 1:
            out[di] = do
        elif a[di] % k == 0 and b[do] % k == 0:
            out[di] = do
    return out


def _map_candidates(ctx: OpCtx, dim_map: dict[int, int]) -> list[Candidate]:
    s = ctx.specs[0]
    cands = [Candidate((Shard(i),), (Shard(o),)) for i, o in dim_map.items()]
    cur = ctx.specs[0].placements
    for p in set(cur):
        if isinstance(p, Partial):
            cands.append(Candidate((p,), (p,)))
    cands.append(Candidate((Replicate(),), (Replicate(),)))
    del s
    return cands


def _local_size(ctx: OpCtx, outs: list[tuple[Placement, ...]]) -> list[int]:
    return list(local_shape(ctx.out_meta[0].shape, outs[0], ctx.mesh.get_coordinate(),
                            ctx.mesh.shape))  # fmt: skip


def _view_local(ctx: OpCtx, args: Any, kwargs: Any, outs: list[tuple[Placement, ...]]) -> Any:
    # NOTE [local strides]: a piece need not have the strides of the global tensor (a
    # collective's result is contiguous), so a view the global strides allow may not fit the
    # piece; then the piece is copied first (the values are right; the result aliases a copy).
    size = _local_size(ctx, outs)
    try:
        return ctx.op(args[0], size)
    except RuntimeError:
        if ctx.op is not aten.view.default:
            raise
        LOCAL_COPY[0] = True
        return ctx.op(args[0].contiguous(), size)


@register_rule(aten.view.default, aten._unsafe_view.default, aten.reshape.default,
               local_fn=_view_local)  # fmt: skip
def _view(ctx: OpCtx, m: int) -> list[Candidate]:
    s = ctx.specs[0]
    return _map_candidates(ctx, _shard_map(s.shape, ctx.out_meta[0].shape, ctx.mesh.size(m)))


@register_rule(aten.expand.default, local_fn=_view_local)
def _expand(ctx: OpCtx, m: int) -> list[Candidate]:
    s = ctx.specs[0]
    out = ctx.out_meta[0].shape
    lead = len(out) - s.ndim
    dim_map = {d: d + lead for d in range(s.ndim) if s.shape[d] == out[d + lead]}
    return _map_candidates(ctx, dim_map)


def _perm_candidates(ctx: OpCtx, perm: list[int]) -> list[Candidate]:
    """Output dim ``i`` is input dim ``perm[i]``."""
    return _map_candidates(ctx, {src: i for i, src in enumerate(perm)})


@register_rule(aten.transpose.int)
def _transpose(ctx: OpCtx, m: int) -> list[Candidate]:
    n = ctx.specs[0].ndim
    perm = list(range(n))
    if n:
        d0, d1 = ctx.arg(1, "dim0") % n, ctx.arg(2, "dim1") % n
        perm[d0], perm[d1] = perm[d1], perm[d0]
    return _perm_candidates(ctx, perm)


@register_rule(aten.t.default)
def _t(ctx: OpCtx, m: int) -> list[Candidate]:
    return _perm_candidates(ctx, list(reversed(range(ctx.specs[0].ndim))))


@register_rule(aten.permute.default)
def _permute(ctx: OpCtx, m: int) -> list[Candidate]:
    n = ctx.specs[0].ndim
    return _perm_candidates(ctx, [d % n for d in ctx.arg(1, "dims")])


@register_rule(aten.unsqueeze.default)
def _unsqueeze(ctx: OpCtx, m: int) -> list[Candidate]:
    n = ctx.specs[0].ndim
    d = ctx.arg(1, "dim") % (n + 1)
    return _map_candidates(ctx, {i: (i if i < d else i + 1) for i in range(n)})


def _squeeze_local(ctx: OpCtx, args: Any, kwargs: Any, outs: Any) -> Any:
    # the global size-1 dims: a piece may have size 1 where the whole tensor does not
    shape = ctx.specs[0].shape
    return aten.squeeze.dims(args[0], [d for d in range(len(shape)) if shape[d] == 1
                                       and d in _squeezed(ctx)])  # fmt: skip


def _squeezed(ctx: OpCtx) -> set[int]:
    n = ctx.specs[0].ndim
    if str(ctx.op).endswith(".default"):
        return set(range(n))
    dim = ctx.arg(1, "dim")
    dims = [dim] if isinstance(dim, int) else list(dim)
    return {d % max(n, 1) for d in dims}


@register_rule(aten.squeeze.default, aten.squeeze.dim, aten.squeeze.dims,
               local_fn=_squeeze_local)  # fmt: skip
def _squeeze(ctx: OpCtx, m: int) -> list[Candidate]:
    shape = ctx.specs[0].shape
    gone = {d for d in _squeezed(ctx) if shape[d] == 1}
    dim_map = {d: d - sum(1 for g in gone if g < d) for d in range(len(shape)) if d not in gone}
    return _map_candidates(ctx, dim_map)


def _not_on(ctx: OpCtx, dim: int, shift: int) -> list[Candidate]:
    """Ops that index along ``dim`` (which must not be sharded); dims after it move by
    ``shift``."""
    n = ctx.specs[0].ndim
    dim_map = {d: (d if d < dim else d + shift) for d in range(n) if d != dim}
    n_out = len(ctx.out_meta)
    cands = []
    for c in _map_candidates(ctx, dim_map):
        cands.append(Candidate(c.inputs, c.outputs * n_out))
    return cands


@register_rule(aten.select.int, aten.unbind.int)
def _select(ctx: OpCtx, m: int) -> list[Candidate]:
    return _not_on(ctx, ctx.arg(1, "dim", 0) % ctx.specs[0].ndim, -1)


@register_rule(aten.slice.Tensor, aten.narrow.default)
def _slice(ctx: OpCtx, m: int) -> list[Candidate]:
    return _not_on(ctx, ctx.arg(1, "dim", 0) % ctx.specs[0].ndim, 0)


@register_rule(aten.split.Tensor, aten.split_with_sizes.default)
def _split(ctx: OpCtx, m: int) -> list[Candidate]:
    return _not_on(ctx, ctx.arg(2, "dim", 0) % ctx.specs[0].ndim, 0)


@register_rule(aten.cat.default)
def _cat(ctx: OpCtx, m: int) -> list[Candidate]:
    """Concatenation keeps a shard of any other dimension (every input sharded alike)."""
    out_nd = len(ctx.out_meta[0].shape)
    dim = ctx.arg(1, "dim", 0) % out_nd
    n = len(ctx.specs)
    cands = [
        Candidate(tuple(Shard(d) for _ in range(n)), (Shard(d),))
        for d in range(out_nd)
        if d != dim and all(s.ndim == out_nd for s in ctx.specs)
    ]
    partial = [s.placements[m] for s in ctx.specs]
    if all(isinstance(p, Partial) for p in partial) and len(set(partial)) == 1:
        cands.append(Candidate(tuple(partial), (partial[0],)))
    cands.append(Candidate(tuple(Replicate() for _ in range(n)), (Replicate(),)))
    return cands


@register_rule(aten.stack.default)
def _stack(ctx: OpCtx, m: int) -> list[Candidate]:
    """Stacking keeps a shard of any dimension (renumbered past the new one)."""
    nd = ctx.specs[0].ndim
    dim = ctx.arg(1, "dim", 0) % (nd + 1)
    n = len(ctx.specs)
    cands = [
        Candidate(tuple(Shard(d) for _ in range(n)), (Shard(d if d < dim else d + 1),))
        for d in range(nd)
    ]
    cands.append(Candidate(tuple(Replicate() for _ in range(n)), (Replicate(),)))
    return cands


def _sizes_local(ctx: OpCtx, args: Any, kwargs: Any, outs: Any) -> Any:
    """The op with its ``input_sizes`` argument (the global result's size) made the piece's."""
    return ctx.op(args[0], _local_size(ctx, outs), *args[2:], **kwargs)


@register_rule(aten.slice_backward.default, local_fn=_sizes_local)
def _slice_backward(ctx: OpCtx, m: int) -> list[Candidate]:
    n = len(ctx.out_meta[0].shape)
    dim = ctx.arg(2, "dim") % n
    return _map_candidates(ctx, {d: d for d in range(n) if d != dim})


@register_rule(aten.select_backward.default, local_fn=_sizes_local)
def _select_backward(ctx: OpCtx, m: int) -> list[Candidate]:
    n = len(ctx.out_meta[0].shape)
    dim = ctx.arg(2, "dim") % n
    return _map_candidates(ctx, {d: (d if d < dim else d + 1) for d in range(n - 1)})
