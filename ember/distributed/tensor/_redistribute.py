"""Moving a DTensor's local data from one list of placements to another, one mesh dimension at a
time, through the collectives of ``_collectives``.

NOTE [redistribute order]: with several mesh dimensions, mesh dimension ``i`` shards the piece
that dimensions ``< i`` left. So gathers and reductions run from the last mesh dimension to the
first (a dimension is gathered only once no later one shards the same tensor dimension), then
local chunking runs from the first to the last. A later mesh dimension that shards a tensor
dimension an earlier one changes is gathered first and chunked again after.
"""

from __future__ import annotations

from ember._tensor import Tensor
from ember.distributed.tensor import _collectives as C
from ember.distributed.tensor._spec import DTensorSpec
from ember.distributed.tensor.placement_types import Partial, Placement, Replicate, Shard

__all__ = ["redistribute_local"]


def _full_size(spec: DTensorSpec, cur: list[Placement], i: int, d: int) -> int:
    """The size of tensor dim ``d`` in the piece that mesh dims ``< i`` leave."""
    n = spec.shape[d]
    coord = spec.mesh.get_coordinate()
    for j in range(i):
        if cur[j] == Shard(d):
            n = C.piece_range(n, spec.mesh.size(j), coord[j])[1]
    return n


def redistribute_local(local: Tensor, spec: DTensorSpec, target: tuple[Placement, ...]) -> Tensor:
    """This rank's piece of the tensor ``spec`` describes, laid out as ``target``."""
    mesh = spec.mesh
    cur = list(spec.placements)
    tgt = list(target)
    if cur == tgt:
        return local
    n = len(cur)

    def dims_of(p: Placement) -> set[int]:
        return {p.dim} if isinstance(p, Shard) else set()

    # later mesh dims that shard a tensor dim an earlier change touches are redone
    phase_a = list(tgt)
    for i in range(n):
        if cur[i] != tgt[i]:
            touched = dims_of(cur[i]) | dims_of(tgt[i])
            for j in range(i + 1, n):
                if (dims_of(cur[j]) | dims_of(tgt[j])) & touched:
                    phase_a[j] = Replicate()
    for i in reversed(range(n)):
        src, dst = cur[i], phase_a[i]
        if src == dst:
            continue
        if isinstance(src, Shard):
            later = [cur[j] for j in range(i + 1, n)]
            if (
                isinstance(dst, Shard)
                and src not in later
                and dst not in later
                and all(cur[j] != dst for j in range(i))
            ):
                full = _full_size(spec, cur, i, src.dim)
                local = C.all_to_all(local, src.dim, dst.dim, full, mesh, i)
                cur[i] = dst
                continue
            full = _full_size(spec, cur, i, src.dim)
            local = C.all_gather(local, src.dim, full, mesh, i)
            cur[i] = Replicate()
        elif isinstance(src, Partial):
            if isinstance(dst, Shard) and all(cur[j] != dst for j in range(n) if j != i):
                local = C.reduce_scatter(local, dst.dim, mesh, i, src.reduce_op)
                cur[i] = dst
            else:
                local = C.all_reduce(local, mesh, i, src.reduce_op)
                cur[i] = Replicate()
    for i in range(n):
        src, dst = cur[i], tgt[i]
        if src == dst:
            continue
        assert isinstance(src, Replicate), (src, dst)
        k, me = mesh.size(i), mesh.get_local_rank(i)
        if isinstance(dst, Shard):
            local = C.local_piece(local, dst.dim, k, me)
        elif isinstance(dst, Partial):
            if dst.reduce_op == "sum" and me != 0:
                local = local.new_zeros(tuple(local.shape))
            else:
                local = local.clone()
        cur[i] = dst
    return local
