"""The data movements of DTensor along one mesh dimension, on local tensors: torch.chunk
pieces, and all-gather / reduce-scatter / all-reduce / all-to-all through the functional
collectives of ``ember.distributed._functional_collectives`` (ops a tracer records; uneven
pieces are padded to the chunk size for the collective and trimmed after).

NOTE [uneven shards]: ``Shard(d)`` of a size-``n`` dimension over ``k`` ranks gives rank ``i``
rows ``[i*c, min((i+1)*c, n))`` with ``c = ceil(n / k)``: ``torch.chunk``'s pieces, the last
ones shorter or empty, as PyTorch's DTensor.
"""

from __future__ import annotations

from typing import Any

import ember
import ember.distributed._functional_collectives as fc
from ember._tensor import Tensor

__all__ = [
    "all_gather",
    "all_reduce",
    "all_to_all",
    "chunk_size",
    "local_piece",
    "piece_range",
    "reduce_scatter",
]


def chunk_size(n: int, k: int) -> int:
    """The rows of the largest piece when ``n`` rows are chunked over ``k`` ranks."""
    return -(-n // k)


def piece_range(n: int, k: int, i: int) -> tuple[int, int]:
    """(start, length) of rank ``i``'s piece of ``n`` rows over ``k`` ranks."""
    c = chunk_size(n, k)
    start = min(i * c, n)
    return start, max(0, min(c, n - start))


def local_piece(t: Tensor, dim: int, k: int, i: int) -> Tensor:
    """Rank ``i``'s piece of ``t`` along ``dim`` (a fresh contiguous tensor)."""
    start, length = piece_range(t.shape[dim], k, i)
    return t.narrow(dim, start, length).contiguous()


def _pad(t: Tensor, dim: int, size: int) -> Tensor:
    if t.shape[dim] == size:
        return t
    shape = list(t.shape)
    shape[dim] = size - t.shape[dim]
    return ember.cat([t, t.new_zeros(tuple(shape))], dim)


def _group(mesh: Any, mesh_dim: int) -> Any:
    return mesh.get_group(mesh_dim)


def all_reduce(t: Tensor, mesh: Any, mesh_dim: int, reduce_op: str = "sum") -> Tensor:
    """The reduction of every rank's ``t`` along ``mesh_dim`` (a new tensor)."""
    if mesh.size(mesh_dim) == 1:
        return t.contiguous().clone()
    return fc.all_reduce(t, reduce_op, _group(mesh, mesh_dim))


def all_gather(t: Tensor, dim: int, full: int, mesh: Any, mesh_dim: int) -> Tensor:
    """The concatenation along ``dim`` of every rank's piece ``t`` of a size-``full``
    dimension."""
    k = mesh.size(mesh_dim)
    if k == 1:
        return t.contiguous()
    c = chunk_size(full, k)
    moved = ember.movedim(_pad(t, dim, c), dim, 0).contiguous()
    out = fc.all_gather_tensor(moved, k, _group(mesh, mesh_dim))
    return ember.movedim(out.narrow(0, 0, full), 0, dim).contiguous()


def reduce_scatter(t: Tensor, dim: int, mesh: Any, mesh_dim: int, reduce_op: str = "sum") -> Tensor:
    """This rank's piece along ``dim`` of the reduction of every rank's ``t``."""
    k = mesh.size(mesh_dim)
    i = mesh.get_local_rank(mesh_dim)
    full = t.shape[dim]
    if k == 1:
        return t.contiguous().clone()
    c = chunk_size(full, k)
    moved = ember.movedim(_pad(t, dim, k * c), dim, 0).contiguous()
    out = fc.reduce_scatter_tensor(moved, reduce_op, k, _group(mesh, mesh_dim))
    return ember.movedim(out.narrow(0, 0, piece_range(full, k, i)[1]), 0, dim).contiguous()


def all_to_all(
    t: Tensor, src_dim: int, dst_dim: int, full_src: int, mesh: Any, mesh_dim: int
) -> Tensor:
    """``Shard(src_dim)`` to ``Shard(dst_dim)``: this rank's piece along ``dst_dim`` of the
    whole ``src_dim`` (of size ``full_src``), from every rank's piece ``t`` along ``src_dim``."""
    k = mesh.size(mesh_dim)
    if k == 1:
        return t.contiguous()
    i = mesh.get_local_rank(mesh_dim)
    cs, full_dst = chunk_size(full_src, k), t.shape[dst_dim]
    cd = chunk_size(full_dst, k)
    x = _pad(_pad(t, src_dim, cs), dst_dim, k * cd)
    # k blocks along a new leading dim: block j is rank j's dst piece of my src piece
    blocks = ember.stack(list(x.chunk(k, dst_dim)), 0).contiguous()
    out = fc.all_to_all_single(blocks, k, _group(mesh, mesh_dim))
    # out[j] is my dst piece of rank j's src piece; glue the src pieces, trim the padding
    parts = [out[j].narrow(src_dim, 0, piece_range(full_src, k, j)[1]) for j in range(k)]
    glued = ember.cat(parts, src_dim)
    return glued.narrow(dst_dim, 0, piece_range(full_dst, k, i)[1]).contiguous()
