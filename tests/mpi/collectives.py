"""Run under MPI (tests/test_distributed.py launches it on two ranks): every collective, in
every dtype, against a NumPy reference. Every rank can rebuild every rank's inputs (they are
seeded by rank), so each check compares with the expected values computed locally."""

from __future__ import annotations

import os
import sys

import numpy as np

import ember
import ember.distributed as dist
from ember.distributed import ReduceOp

dist.init_process_group("mpi")
RANK, SIZE = dist.get_rank(), dist.get_world_size()
if sys.argv[1:] == ["--launched-as-module"]:  # python -m ember.distributed.run -m ...
    assert __name__ == "__main__" and __spec__.name == "tests.mpi.collectives", __spec__
    assert os.environ["RANK"] == str(RANK) and os.environ["WORLD_SIZE"] == str(SIZE)
    assert "LOCAL_RANK" in os.environ and "OMP_NUM_THREADS" in os.environ
DTYPES = [d for d in ember.dtypes.ALL_DTYPES]
if ember.dtypes.HAS_BFLOAT16:
    DTYPES.append(ember.bfloat16)
checks = 0


def data(rank: int, dtype: ember.dtype, shape: tuple[int, ...], salt: int = 0) -> np.ndarray:
    """Rank ``rank``'s input: small values, exact in every dtype."""
    rng = np.random.default_rng(1000 * rank + 17 * salt + DTYPES.index(dtype))
    if dtype is ember.bool:
        return rng.random(shape) < 0.5
    vals = rng.integers(-3, 4, shape) if dtype.is_signed else rng.integers(0, 4, shape)
    if dtype.is_complex:
        vals = vals + 1j * rng.integers(-3, 4, shape)
    return vals.astype(dtype.np)


def tensor(a: np.ndarray) -> ember.Tensor:
    return ember.from_numpy(a.copy())


def check(got: ember.Tensor, want: np.ndarray, what: str) -> None:
    global checks
    g = got.numpy()
    w = np.asarray(want).astype(g.dtype)
    if g.dtype.name == "bfloat16":
        g, w = g.astype(np.float32), w.astype(np.float32)
    if not np.array_equal(g, w):
        raise AssertionError(f"rank {RANK}: {what}: got {g!r}, want {w!r}")
    checks += 1


def reduce_ref(arrays: list[np.ndarray], op: ReduceOp) -> np.ndarray:
    dt = arrays[0].dtype
    if dt.name in ("float16", "bfloat16"):
        arrays = [a.astype(np.float32) for a in arrays]
    if dt == np.bool_:
        fn = {ReduceOp.SUM: np.logical_or, ReduceOp.MAX: np.logical_or, ReduceOp.BOR: np.logical_or,
              ReduceOp.PRODUCT: np.logical_and, ReduceOp.MIN: np.logical_and,
              ReduceOp.BAND: np.logical_and, ReduceOp.BXOR: np.logical_xor}[op]  # fmt: skip
    else:
        fn = {ReduceOp.SUM: np.add, ReduceOp.AVG: np.add, ReduceOp.PRODUCT: np.multiply,
              ReduceOp.MIN: np.minimum, ReduceOp.MAX: np.maximum, ReduceOp.BAND: np.bitwise_and,
              ReduceOp.BOR: np.bitwise_or, ReduceOp.BXOR: np.bitwise_xor}[op]  # fmt: skip
    out = arrays[0]
    for a in arrays[1:]:
        out = fn(out, a)
    if op is ReduceOp.AVG:
        if dt.kind in "iu":
            q = np.abs(out) // SIZE
            out = np.where(out < 0, -q, q)
        else:
            out = out / SIZE
    return out.astype(dt)


def ops_for(dtype: ember.dtype) -> list[ReduceOp]:
    ops = [ReduceOp.SUM, ReduceOp.PRODUCT]
    if not dtype.is_complex:
        ops += [ReduceOp.MIN, ReduceOp.MAX]
    if dtype is not ember.bool:
        ops.append(ReduceOp.AVG)
    if not (dtype.is_floating_point or dtype.is_complex):
        ops += [ReduceOp.BAND, ReduceOp.BOR, ReduceOp.BXOR]
    return ops


shape = (3, 4)
for dt in DTYPES:
    every = [data(r, dt, shape) for r in range(SIZE)]
    name = dt.name
    for op in ops_for(dt):
        t = tensor(every[RANK])
        dist.all_reduce(t, op)
        check(t, reduce_ref(every, op), f"all_reduce {name} {op}")
        t = tensor(every[RANK])
        dist.reduce(t, dst=SIZE - 1, op=op)
        check(t, reduce_ref(every, op) if RANK == SIZE - 1 else every[RANK], f"reduce {name} {op}")
    # non-contiguous, in place: a transposed view of a larger tensor
    base = tensor(np.stack([every[RANK], every[RANK]]))
    view = base[1].t()
    assert not view.is_contiguous()
    dist.all_reduce(view, ReduceOp.MAX if not dt.is_complex else ReduceOp.SUM)
    want = reduce_ref([e.T for e in every], ReduceOp.MAX if not dt.is_complex else ReduceOp.SUM)
    check(base[1].t().contiguous(), want, f"all_reduce non-contiguous {name}")
    check(base[0], every[RANK], f"all_reduce non-contiguous {name} leaves the rest")
    # async
    t = tensor(every[RANK])
    work = dist.all_reduce(t, async_op=True)
    assert work is not None and work.wait() and work.is_completed()
    check(t, reduce_ref(every, ReduceOp.SUM), f"async all_reduce {name}")
    # broadcast from each root
    for root in range(SIZE):
        t = tensor(every[RANK])
        dist.broadcast(t, src=root)
        check(t, every[root], f"broadcast {name} src={root}")
    # all_gather (list) and all_gather_into_tensor (concatenated and stacked)
    outs = [ember.empty(shape, dtype=dt) for _ in range(SIZE)]
    dist.all_gather(outs, tensor(every[RANK]))
    for r in range(SIZE):
        check(outs[r], every[r], f"all_gather {name} [{r}]")
    out = ember.empty((SIZE * 3, 4), dtype=dt)
    dist.all_gather_into_tensor(out, tensor(every[RANK]))
    check(out, np.concatenate(every), f"all_gather_into_tensor {name}")
    out = ember.empty((SIZE, 3, 4), dtype=dt)
    dist.all_gather_into_tensor(out, tensor(every[RANK]))
    check(out, np.stack(every), f"all_gather_into_tensor stacked {name}")
    # reduce_scatter_tensor and reduce_scatter
    big = [data(r, dt, (SIZE * 2, 3), 1) for r in range(SIZE)]
    for op in ops_for(dt)[:2]:
        out = ember.empty((2, 3), dtype=dt)
        dist.reduce_scatter_tensor(out, tensor(big[RANK]), op=op)
        check(out, reduce_ref(big, op)[2 * RANK : 2 * RANK + 2], f"reduce_scatter_tensor {name}")
    out = ember.empty((2, 3), dtype=dt)
    dist.reduce_scatter(out, [tensor(big[RANK][2 * i : 2 * i + 2]) for i in range(SIZE)])
    check(out, reduce_ref(big, ReduceOp.SUM)[2 * RANK : 2 * RANK + 2], f"reduce_scatter {name}")
    # gather and scatter
    root = SIZE - 1
    lst = [ember.empty(shape, dtype=dt) for _ in range(SIZE)] if RANK == root else None
    dist.gather(tensor(every[RANK]), lst, dst=root)
    if lst is not None:
        for r in range(SIZE):
            check(lst[r], every[r], f"gather {name}")
    out = ember.empty(shape, dtype=dt)
    parts = [tensor(data(r, dt, shape, 2)) for r in range(SIZE)] if RANK == 0 else None
    dist.scatter(out, parts, src=0)
    check(out, data(RANK, dt, shape, 2), f"scatter {name}")
    # all_to_all_single, equal and uneven splits
    src = data(RANK, dt, (2 * SIZE, 3), 3)
    out = ember.empty((2 * SIZE, 3), dtype=dt)
    dist.all_to_all_single(out, tensor(src))
    want = np.concatenate(
        [data(r, dt, (2 * SIZE, 3), 3)[2 * RANK : 2 * RANK + 2] for r in range(SIZE)]
    )
    check(out, want, f"all_to_all_single {name}")
    # rank r sends r + 1 + i rows to rank i
    sends = [[r + 1 + i for i in range(SIZE)] for r in range(SIZE)]
    srcs = [data(r, dt, (sum(sends[r]), 2), 4) for r in range(SIZE)]
    recv_sizes = [sends[r][RANK] for r in range(SIZE)]
    out = ember.empty((sum(recv_sizes), 2), dtype=dt)
    dist.all_to_all_single(out, tensor(srcs[RANK]), recv_sizes, sends[RANK])
    pieces = []
    for r in range(SIZE):
        start = sum(sends[r][:RANK])
        pieces.append(srcs[r][start : start + sends[r][RANK]])
    check(out, np.concatenate(pieces), f"all_to_all_single uneven {name}")
    # all_to_all (lists)
    ins = [tensor(data(RANK, dt, (i + 1,), 5 + i)) for i in range(SIZE)]
    outs = [ember.empty((RANK + 1,), dtype=dt) for _ in range(SIZE)]
    dist.all_to_all(outs, ins)
    for r in range(SIZE):
        check(outs[r], data(r, dt, (RANK + 1,), 5 + RANK), f"all_to_all {name}")
    # send / recv / isend / irecv around a ring
    nxt, prv = (RANK + 1) % SIZE, (RANK - 1) % SIZE
    out = ember.empty(shape, dtype=dt)
    w = dist.isend(tensor(every[RANK]), dst=nxt, tag=7)
    sender = dist.recv(out, src=prv, tag=7)
    w.wait()
    check(out, every[prv], f"send/recv {name}")
    assert sender == prv
    out = ember.empty(shape, dtype=dt)
    r_work = dist.irecv(out, tag=3)
    dist.send(tensor(every[RANK]), dst=nxt, tag=3)
    r_work.wait()
    check(out, every[prv], f"isend/irecv {name}")

# a 0-dim tensor and an empty one
t = ember.tensor(float(RANK + 1))
dist.all_reduce(t)
check(t, np.float32(sum(range(1, SIZE + 1))), "all_reduce 0-dim")
t = ember.empty(0, 3)
dist.all_reduce(t)
check(t, np.empty((0, 3), np.float32), "all_reduce empty")

# a lazy tensor: synced first, the result copied back into it
x = ember.ones(4, device="lazy") * (RANK + 1)
dist.all_reduce(x)
check(x.cpu(), np.full(4, sum(range(1, SIZE + 1)), np.float32), "all_reduce lazy")
y = x + 1
check(y.cpu(), np.full(4, sum(range(1, SIZE + 1)) + 1, np.float32), "lazy after all_reduce")

# objects
objs = [None, None] if RANK else [{"a": 1}, "two"]
dist.broadcast_object_list(objs, src=0)
assert objs == [{"a": 1}, "two"], objs
got: list = [None] * SIZE
dist.all_gather_object(got, {"rank": RANK, "x": "y" * RANK})
assert got == [{"rank": r, "x": "y" * r} for r in range(SIZE)], got
gl = [None] * SIZE if RANK == 0 else None
dist.gather_object(("g", RANK), gl, dst=0)
assert RANK or gl == [("g", r) for r in range(SIZE)], gl
so = [None]
dist.scatter_object_list(so, [f"s{r}" for r in range(SIZE)] if RANK == 0 else None, src=0)
assert so == [f"s{RANK}"], so
checks += 4

# groups: a group of rank 0 alone, and the world as a group
solo = dist.new_group([0])
if RANK == 0:
    assert dist.get_world_size(solo) == 1 and dist.get_rank(solo) == 0
    t = ember.ones(2)
    dist.all_reduce(t, group=solo)
    check(t, np.ones(2, np.float32), "all_reduce in a group of one")
else:
    assert solo is dist.GroupMember.NON_GROUP_MEMBER and dist.get_rank(solo) == -1
    assert dist.all_reduce(ember.ones(2), group=solo) is None
everyone = dist.new_group(list(range(SIZE)))
t = ember.ones(2)
dist.all_reduce(t, group=everyone)
check(t, np.full(2, SIZE, np.float32), "all_reduce in new_group(all)")
assert dist.get_process_group_ranks(everyone) == list(range(SIZE))
assert dist.group.WORLD is not None and dist.get_backend() == "mpi"
dist.barrier()
assert dist.barrier(async_op=True).wait()
dist.destroy_process_group()
assert not dist.is_initialized()
if RANK == 0:
    print(f"collectives OK: {checks} checks on {SIZE} ranks")
sys.exit(0)
