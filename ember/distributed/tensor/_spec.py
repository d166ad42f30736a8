"""``DTensorSpec``: a DTensor's mesh, placements (one per mesh dimension) and global shape,
stride and dtype; and the local shape each rank holds (NOTE [uneven shards])."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ember.distributed.tensor._collectives import piece_range
from ember.distributed.tensor.placement_types import Placement, Replicate, Shard

__all__ = ["DTensorSpec", "TensorMeta", "local_shape", "normalize_placements"]


@dataclass(frozen=True)
class TensorMeta:
    shape: tuple[int, ...]
    stride: tuple[int, ...]
    dtype: Any


@dataclass(frozen=True)
class DTensorSpec:
    mesh: Any
    placements: tuple[Placement, ...]
    tensor_meta: TensorMeta

    @property
    def shape(self) -> tuple[int, ...]:
        return self.tensor_meta.shape

    @property
    def ndim(self) -> int:
        return len(self.tensor_meta.shape)

    def __repr__(self) -> str:
        p = ", ".join(str(x) for x in self.placements)
        return f"Spec({p} on {self.mesh.shape}, {list(self.shape)})"


def normalize_placements(placements: Any, mesh: Any, ndim: int, who: str) -> tuple[Placement, ...]:
    """``placements`` as a tuple with one entry per mesh dimension (missing ones Replicate)
    and each Shard's dim non-negative; a clear error for anything else."""
    if placements is None:
        return tuple(Replicate() for _ in range(mesh.ndim))
    ps = list(placements)
    if len(ps) > mesh.ndim:
        raise ValueError(
            f"{who}: {len(ps)} placements {ps} for a {mesh.ndim}-d mesh; give one per mesh dim"
        )
    ps += [Replicate()] * (mesh.ndim - len(ps))
    out: list[Placement] = []
    for p in ps:
        if not isinstance(p, Placement):
            raise TypeError(f"{who}: {p!r} is not a Placement (Shard(d), Replicate(), Partial())")
        if isinstance(p, Shard):
            if not -ndim <= p.dim < max(ndim, 1) or ndim == 0:
                raise IndexError(f"{who}: {p!r} of a {ndim}-d tensor")
            p = Shard(p.dim % ndim)
        out.append(p)
    return tuple(out)


def local_shape(shape: tuple[int, ...], placements: tuple[Placement, ...], coord: list[int],
                mesh_shape: tuple[int, ...]) -> tuple[int, ...]:  # fmt: skip
    """The shape of this rank's piece: each Shard applied in mesh-dimension order."""
    out = list(shape)
    for i, p in enumerate(placements):
        if isinstance(p, Shard):
            out[p.dim] = piece_range(out[p.dim], mesh_shape[i], coord[i])[1]
    return tuple(out)


def local_offset(shape: tuple[int, ...], placements: tuple[Placement, ...], coord: list[int],
                 mesh_shape: tuple[int, ...]) -> tuple[int, ...]:  # fmt: skip
    """Where this rank's piece starts in the global tensor."""
    size, off = list(shape), [0] * len(shape)
    for i, p in enumerate(placements):
        if isinstance(p, Shard):
            start, length = piece_range(size[p.dim], mesh_shape[i], coord[i])
            off[p.dim] += start
            size[p.dim] = length
    return tuple(off)
