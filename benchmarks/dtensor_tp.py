"""A tensor-parallel MLP training step on DTensor against the dense step on one rank.

    python -m ember.distributed.run -n 1 benchmarks/dtensor_tp.py   # dense, one rank
    python -m ember.distributed.run -n 2 benchmarks/dtensor_tp.py   # TP on 2 ranks

One step: zero_grad, forward (Linear d->4d, ReLU, Linear 4d->d; ColwiseParallel then
RowwiseParallel on 2 ranks), MSE loss, backward, SGD. On one rank it times the dense step
and the TP module on a mesh of one rank (DTensor's dispatch cost, no communication); on more
than one rank it also times
the same step written by hand on plain local pieces with two ``all_reduce`` calls (what
DTensor's dispatch would cost nothing above), so the table shows DTensor's own overhead.
Median of 15 steps after 3 warm-up steps; rank 0 prints. Each rank computes with
``ember.set_num_threads(THREADS)`` (environment variable, default 1): a dense run with
``THREADS=2`` uses the two cores two TP ranks use.
"""

from __future__ import annotations

import copy
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import ember
import ember.distributed as dist
import ember.nn as nn
import ember.nn.functional as F
from ember.distributed.tensor import init_device_mesh
from ember.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, parallelize_module


class MLP(nn.Module):
    def __init__(self, d: int) -> None:
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def forward(self, x: ember.Tensor) -> ember.Tensor:
        return self.fc2(F.relu(self.fc1(x)))


def median_ms(step: Callable[[], object], n: int = 15) -> float:
    for _ in range(3):
        step()
    times = []
    for _ in range(n):
        dist.barrier()
        t = time.perf_counter()
        step()
        times.append(time.perf_counter() - t)
    return 1000 * statistics.median(times)


def trainer(model: nn.Module, x: ember.Tensor, y: ember.Tensor) -> Callable[[], object]:
    opt = ember.optim.SGD(model.parameters(), lr=1e-3)

    def step() -> object:
        opt.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        return loss

    return step


class _AllReduce(ember.autograd.Function):
    @staticmethod
    def forward(ctx: object, t: ember.Tensor) -> ember.Tensor:
        t = t.clone()
        dist.all_reduce(t)
        return t

    @staticmethod
    def backward(ctx: object, g: ember.Tensor) -> ember.Tensor:
        return g


class _Identity(ember.autograd.Function):  # forward identity, backward all-reduce
    @staticmethod
    def forward(ctx: object, t: ember.Tensor) -> ember.Tensor:
        return t.view_as(t)

    @staticmethod
    def backward(ctx: object, g: ember.Tensor) -> ember.Tensor:
        g = g.clone()
        dist.all_reduce(g)
        return g


class HandTP(nn.Module):
    """The TP step on plain local pieces (Megatron's f/g operators)."""

    def __init__(self, dense: MLP, rank: int, world: int) -> None:
        super().__init__()
        h = dense.fc1.out_features // world
        sl = slice(rank * h, (rank + 1) * h)
        self.w1 = nn.Parameter(dense.fc1.weight.detach()[sl].clone())
        self.b1 = nn.Parameter(dense.fc1.bias.detach()[sl].clone())
        self.w2 = nn.Parameter(dense.fc2.weight.detach()[:, sl].clone())
        self.b2 = nn.Parameter(dense.fc2.bias.detach().clone())

    def forward(self, x: ember.Tensor) -> ember.Tensor:
        h = F.relu(F.linear(_Identity.apply(x), self.w1, self.b1))
        return _AllReduce.apply(F.linear(h, self.w2)) + self.b2


def main() -> None:
    dist.init_process_group("mpi")
    ember.set_num_threads(int(os.environ.get("THREADS", "1")))
    rank, world = dist.get_rank(), dist.get_world_size()
    rng = np.random.default_rng(0)
    rows = []
    for d, batch in [(256, 64), (512, 64), (1024, 128)]:
        ember.manual_seed(0)
        dense = MLP(d)
        x = ember.tensor(rng.standard_normal((batch, d)), dtype=ember.float32)
        y = ember.tensor(rng.standard_normal((batch, d)), dtype=ember.float32)
        mesh = init_device_mesh("cpu", (world,))
        tp = parallelize_module(
            copy.deepcopy(dense), mesh, {"fc1": ColwiseParallel(), "fc2": RowwiseParallel()}
        )
        if world == 1:  # the dense step, and DTensor's own cost on a mesh of one rank
            rows.append((d, batch, median_ms(trainer(dense, x, y)), median_ms(trainer(tp, x, y))))
            continue
        hand = HandTP(dense, rank, world)
        rows.append((d, batch, median_ms(trainer(tp, x, y)), median_ms(trainer(hand, x, y))))
    if rank == 0:
        what = "dense, 1 rank" if world == 1 else f"DTensor TP, {world} ranks"
        what += f", {ember.get_num_threads()} thread(s) per rank"
        print(f"MLP d->4d->d training step, median ms ({what})")
        if world == 1:
            print(f"{'d':>6} {'batch':>6} {'dense ms':>9} {'DTensor ms':>11} {'DTensor/dense':>14}")
        else:
            print(f"{'d':>6} {'batch':>6} {'TP ms':>9} {'by hand ms':>11} {'DTensor/hand':>14}")
        for d, b, t, h in rows:
            ratio = h / t if world == 1 else t / h
            print(f"{d:6d} {b:6d} {t:9.2f} {h:11.2f} {ratio:14.2f}")


if __name__ == "__main__":
    main()
