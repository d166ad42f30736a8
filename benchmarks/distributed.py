"""``python -m benchmarks.distributed [--quick]``: ember.distributed on two processes of this
machine (it launches them itself; not part of ``python -m benchmarks``, which runs in one
process).

- "all_reduce 1MB" / "all_reduce 100MB": ``dist.all_reduce`` of a float32 tensor against raw
  mpi4py ``Allreduce(IN_PLACE)`` on the same buffer (goal <= 1.1x), and against PyTorch's
  gloo backend (``torch.distributed`` on two processes, the same sizes);
- "all_reduce 4B": the fixed cost of a call (the agreement header, NOTE [agreeing before
  moving data], plus Python) against raw ``Allreduce`` of one float;
- "DDP step": one SGD step of the 784-512-512-10 MLP at a global batch of 64: one process
  without DDP, and two processes with DDP (batch 32 each);
- "overlap": per DDP step, the time backward's final callback waits for the all-reduces it
  did not overlap, against one blocking all_reduce of all the gradients.

Each time is the minimum over repeats, every repeat starting at a barrier.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
SIZES = {"all_reduce 4B": 1, "all_reduce 1MB": 1 << 18, "all_reduce 100MB": 25 << 20}


def _best(fn: Any, barrier: Any, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        barrier()
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def _repeats(n: int, quick: bool) -> int:
    if n > 1 << 20:
        return 3 if quick else 10
    return 20 if quick else 200


def ember_worker(quick: bool) -> dict[str, float]:
    """Run under MPI on two ranks: the collectives, then DDP."""
    import ember
    import ember.distributed as dist
    from ember.distributed._mpi import mpi

    dist.init_process_group("mpi")
    MPI = mpi()
    comm = MPI.COMM_WORLD
    out: dict[str, float] = {}
    for name, n in SIZES.items():
        t = ember.ones(n)
        arr = t.numpy()
        reps = _repeats(n, quick)
        raw = lambda arr=arr: comm.Allreduce(MPI.IN_PLACE, arr, MPI.SUM)  # noqa: E731
        ours = lambda t=t: dist.all_reduce(t)  # noqa: E731
        out[f"{name} raw"] = _best(raw, comm.Barrier, reps)
        out[f"{name} ember"] = _best(ours, comm.Barrier, reps)
    if dist.get_world_size() == 2:
        out.update(_ddp(quick, comm))
    dist.destroy_process_group()
    return out


def _mlp(ember: Any) -> Any:
    ember.manual_seed(0)
    nn = ember.nn
    return nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                         nn.Linear(512, 10))  # fmt: skip


def _ddp(quick: bool, comm: Any) -> dict[str, float]:
    import ember
    import ember.distributed as dist
    from ember.nn.parallel import DistributedDataParallel

    rng = np.random.default_rng(0)
    x = ember.from_numpy(rng.standard_normal((64, 784)).astype(np.float32))
    y = ember.from_numpy(rng.integers(0, 10, 64))
    loss_fn = ember.nn.CrossEntropyLoss()
    steps = 5 if quick else 30
    out = {}
    # one process, the whole batch, no DDP (rank 0 measures; rank 1 waits at the barrier)
    if dist.get_rank() == 0:
        model = _mlp(ember)
        opt = ember.optim.SGD(model.parameters(), lr=0.01)

        def single() -> None:
            opt.zero_grad()
            loss_fn(model(x), y).backward()
            opt.step()

        single()
        out["DDP step 1 process"] = _best(single, lambda: None, steps)
    comm.Barrier()
    rank = dist.get_rank()
    xs, ys = x[rank * 32 : (rank + 1) * 32], y[rank * 32 : (rank + 1) * 32]
    ddp = DistributedDataParallel(_mlp(ember))
    opt = ember.optim.SGD(ddp.parameters(), lr=0.01)

    def step() -> None:
        opt.zero_grad()
        loss_fn(ddp(xs), ys).backward()
        opt.step()

    step()
    ddp._comm_wait_seconds = 0.0
    times = []
    for _ in range(steps):
        comm.Barrier()
        start = time.perf_counter()
        step()
        times.append(time.perf_counter() - start)
    out["DDP step 2 processes"] = min(times)
    out["DDP step 2 processes median"] = float(np.median(times))
    out["overlap wait per step"] = ddp._comm_wait_seconds / steps
    flat = ember.zeros(sum(p.numel() for p in ddp.parameters()))
    out["overlap one all_reduce"] = _best(lambda: dist.all_reduce(flat), comm.Barrier, steps)
    out["buckets"] = float(len(ddp._buckets))
    return out


def gloo_worker(rank: int, port: int, quick: bool) -> dict[str, float]:
    import torch
    import torch.distributed as tdist

    torch.set_num_threads(1)
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    tdist.init_process_group("gloo", rank=rank, world_size=2)
    out = {}
    for name, n in SIZES.items():
        t = torch.ones(n)
        ours = lambda t=t: tdist.all_reduce(t)  # noqa: E731
        out[f"{name} gloo"] = _best(ours, tdist.barrier, _repeats(n, quick))
    tdist.destroy_process_group()
    return out


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _collect(procs: list[subprocess.Popen[str]]) -> dict[str, float]:
    found: dict[str, float] = {}
    for p in procs:
        stdout, stderr = p.communicate(timeout=900)
        if p.returncode:
            raise RuntimeError(f"a benchmark process failed:\n{stderr}")
        for line in stdout.splitlines():
            if line.startswith("RESULT "):
                found.update(json.loads(line[7:]))
    return found


def _ms(t: float | None) -> str:
    return "-" if t is None else f"{t * 1e3:.3f} ms" if t < 1 else f"{t:.2f} s"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.distributed")
    p.add_argument("--quick", action="store_true")
    p.add_argument("--worker", choices=("ember", "gloo"))
    p.add_argument("--rank", type=int, default=0)
    p.add_argument("--port", type=int, default=0)
    args = p.parse_args(argv)
    flag = ["--quick"] if args.quick else []
    if args.worker == "ember":
        res = ember_worker(args.quick)
        if int(os.environ.get("RANK", "0")) == 0:
            sys.stdout.write("RESULT " + json.dumps(res) + "\n")
        return 0
    if args.worker == "gloo":
        res = gloo_worker(args.rank, args.port, args.quick)
        if args.rank == 0:
            sys.stdout.write("RESULT " + json.dumps(res) + "\n")
        return 0
    env = dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1")
    me = [sys.executable, "-m", "benchmarks.distributed"]
    run = [sys.executable, "-m", "ember.distributed.run", "-n", "2", "-m", "benchmarks.distributed"]
    kw: dict[str, Any] = dict(
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    res = _collect([subprocess.Popen([*run, "--worker", "ember", *flag], **kw)])
    try:
        import torch.distributed  # noqa: F401

        port = _free_port()
        gloo = [
            subprocess.Popen(
                [*me, "--worker", "gloo", "--rank", str(r), "--port", str(port), *flag], **kw
            )
            for r in range(2)
        ]
        res.update(_collect(gloo))
    except ImportError:
        pass
    print("ember.distributed on 2 processes (MPI: mpi4py + mpich), min of repeats\n")
    head = (
        f"{'case':<18}{'ember':>11}{'raw MPI':>11}{'gloo':>11}{'e/MPI':>7}{'e/gloo':>7}{'goal':>11}"
    )
    print(head)
    print("-" * len(head))
    for name in SIZES:
        e, r, g = res.get(f"{name} ember"), res.get(f"{name} raw"), res.get(f"{name} gloo")
        em = f"{e / r:.2f}x" if e and r else "-"
        eg = f"{e / g:.2f}x" if e and g else "-"
        goal = "" if name.endswith("4B") else "<= 1.1x MPI"
        print(f"{name:<18}{_ms(e):>11}{_ms(r):>11}{_ms(g):>11}{em:>7}{eg:>7}{goal:>11}")
    one, two = res.get("DDP step 1 process"), res.get("DDP step 2 processes")
    print(f"\nMLP 784-512-512-10, global batch 64, SGD step ({int(res.get('buckets', 0))} buckets)")
    print(f"  1 process, no DDP:        {_ms(one)}")
    median = _ms(res.get("DDP step 2 processes median"))
    print(f"  2 processes, DDP (b32):   {_ms(two)} (median {median})")
    if one and two:
        print(f"  speed-up: {one / two:.2f}x")
    wait, whole = res.get("overlap wait per step"), res.get("overlap one all_reduce")
    print(f"  backward waits for communication: {_ms(wait)} per step")
    print(f"  one blocking all_reduce of all gradients: {_ms(whole)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
