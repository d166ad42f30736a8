"""DTensor on 2-d meshes as one MPI job of 4 ranks (tests/test_dtensor.py): every pair of
2-d layouts redistributes, a matmul on each layout equals the dense one, sub-meshes by name."""

from __future__ import annotations

import itertools

import ember
from ember.distributed.tensor import Replicate, Shard, distribute_tensor, init_device_mesh
from tests.mpi._dtensor_job import CHECKS, randn, rank, world
from tests.mpi._dtensor_job import close as _close


def close(a: ember.Tensor, b: ember.Tensor, what: str) -> None:
    """``_dtensor_job.close`` at this job's tolerance."""
    _close(a, b, what, tol=1e-5)


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
