"""Placements: how a DTensor's data lies along one dimension of its device mesh, as
``torch.distributed.tensor.placement_types`` (``Shard(dim)``, ``Replicate()``, ``Partial()``).

>>> from ember.distributed.tensor import Shard, Replicate, Partial
>>> Shard(0), Replicate(), Partial()
(Shard(dim=0), Replicate(), Partial(sum))
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Partial", "Placement", "Replicate", "Shard"]


class Placement:
    """The base of the three placements."""

    def is_shard(self, dim: int | None = None) -> bool:
        return isinstance(self, Shard) and (dim is None or self.dim == dim)

    def is_replicate(self) -> bool:
        return isinstance(self, Replicate)

    def is_partial(self, reduce_op: str | None = None) -> bool:
        return isinstance(self, Partial) and (reduce_op is None or self.reduce_op == reduce_op)


@dataclass(frozen=True)
class Shard(Placement):
    """The tensor is split along ``dim`` into ``torch.chunk`` pieces, one per mesh rank: piece
    ``i`` has ``ceil(n / k)`` rows (the last ones fewer, possibly none)."""

    dim: int

    def __repr__(self) -> str:
        return f"Shard(dim={self.dim})"

    def __str__(self) -> str:
        return f"S({self.dim})"


@dataclass(frozen=True)
class Replicate(Placement):
    """Every rank holds the whole tensor."""

    def __repr__(self) -> str:
        return "Replicate()"

    def __str__(self) -> str:
        return "R"


@dataclass(frozen=True)
class Partial(Placement):
    """Every rank holds a same-shaped part; the tensor is their reduction by ``reduce_op``
    ("sum", "avg", "max" or "min")."""

    reduce_op: str = "sum"

    def __post_init__(self) -> None:
        if self.reduce_op not in ("sum", "avg", "max", "min"):
            raise ValueError(
                f"Partial(reduce_op={self.reduce_op!r}): reduce_op must be one of "
                "'sum', 'avg', 'max', 'min'"
            )

    def __repr__(self) -> str:
        return f"Partial({self.reduce_op})"

    def __str__(self) -> str:
        return f"P({self.reduce_op})"
