"""DTensor on 2-d meshes as one MPI job of 4 ranks (tests/test_dtensor.py): every pair of
2-d layouts redistributes, a matmul on each layout equals the dense one, sub-meshes by name."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

import ember
import ember.distributed as dist
from ember.distributed.tensor import Replicate, Shard, distribute_tensor, init_device_mesh

dist.init_process_group(backend="mpi")
rank, world = dist.get_rank(), dist.get_world_size()
ember.manual_seed(0)
_RNG = np.random.default_rng(0)


def randn(*shape: Any) -> ember.Tensor:
    """Normal samples from NumPy (ember's PyTorch-exact stream costs a second to start)."""
    if len(shape) == 1 and not isinstance(shape[0], int):
        shape = tuple(shape[0])
    return ember.tensor(_RNG.standard_normal(shape), dtype=ember.float32)


CHECKS = [0]


def close(a: ember.Tensor, b: ember.Tensor, what: str) -> None:
    assert tuple(a.shape) == tuple(b.shape), f"{what}: shape {list(a.shape)} vs {list(b.shape)}"
    assert ember.allclose(a, b, atol=1e-5), f"{what}:\n{a}\nvs\n{b}"
    CHECKS[0] += 1


m2 = init_device_mesh("cpu", (world // 2, 2), mesh_dim_names=("dp", "tp"))
x = randn(5, 6)
ps2 = [Shard(0), Shard(1), Replicate()]
for a2 in itertools.product(ps2, ps2):
    for b2 in itertools.product(ps2, ps2):
        d = distribute_tensor(x, m2, list(a2))
        close(d.redistribute(m2, list(b2)).full_tensor(), x, f"2-d {a2} -> {b2}")
w = randn(6, 3)
for a2 in itertools.product(ps2, ps2):
    y = distribute_tensor(x, m2, list(a2)) @ distribute_tensor(w, m2, [Replicate(), Shard(1)])
    close(y.full_tensor(), x @ w, f"2-d mm {a2}")
for a2 in itertools.product(ps2, ps2):
    close(distribute_tensor(x, m2, list(a2)).sum().full_tensor(), x.sum(), f"2-d sum {a2}")
# nested shards: mesh dim 0 splits first, mesh dim 1 splits its piece
i, j = m2.get_coordinate()
piece = distribute_tensor(ember.arange(8.0), m2, [Shard(0), Shard(0)]).to_local()
close(piece, ember.arange(8.0).chunk(2)[i].chunk(2)[j], "nested pieces")
sub = m2["tp"]
assert sub.size() == 2 and sub.mesh_dim_names == ("tp",)
y = distribute_tensor(x, sub, [Shard(0)])
close((y * 2).full_tensor(), x * 2, "sub-mesh")


assert m2["dp"].size() == world // 2
print(f"rank {rank}: dtensor 2-d mesh OK ({CHECKS[0]} checks)")
