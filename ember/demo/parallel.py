"""The demo as a data-parallel job: ``python -m ember.distributed.run -n 2 -m ember``.

Each rank trains the same model wrapped in ``DistributedDataParallel`` on its share of every
batch (rows ``rank::world``). Each rank's loss is weighted by its share of the batch, so the
averaged gradient is the whole batch's mean gradient even when a batch does not split
evenly: the run trains as one process does, to float rounding. Only rank 0 prints.
"""

from __future__ import annotations

import os
import sys

import ember
import ember.distributed as dist
from ember import nn
from ember._tensor import Tensor
from ember.nn.parallel import DistributedDataParallel


class Parallel:
    """This process's place in the job, and what the training loop asks of it."""

    def __init__(self) -> None:
        self.rank = dist.get_rank()
        self.world = dist.get_world_size()

    def wrap(self, model: nn.Module) -> nn.Module:
        return DistributedDataParallel(model)

    def shard(self, x: Tensor, y: Tensor) -> tuple[Tensor, Tensor, float]:
        """This rank's rows of a batch, and the weight of its loss: its share of the batch
        times the number of ranks (1 when the batch splits evenly)."""
        xs, ys = x[self.rank :: self.world], y[self.rank :: self.world]
        return xs, ys, len(ys) * self.world / len(y)

    def total(self, *numbers: float) -> list[float]:
        """The sums over every rank."""
        t = ember.tensor(list(numbers), dtype=ember.float64)
        dist.all_reduce(t)
        return t.tolist()  # type: ignore[no-any-return]


def start() -> Parallel | None:
    """Join the job when the demo was launched as more than one process (rank 0 keeps the
    output; the others are silenced); None when it runs alone."""
    env = os.environ
    size = int(env.get("WORLD_SIZE") or env.get("PMI_SIZE") or env.get("OMPI_COMM_WORLD_SIZE") or 1)
    if size <= 1:
        return None
    if not dist.is_initialized():
        dist.init_process_group("mpi")
    job = Parallel()
    if job.rank != 0:
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115  (for the rest of the process)
    return job
