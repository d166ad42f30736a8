"""Run under MPI on two ranks: mismatched calls raise the same clear error on every rank,
and the job goes on afterwards (the check runs before any data moves)."""

from __future__ import annotations

import numpy as np

import ember
import ember.distributed as dist

dist.init_process_group("mpi")
RANK = dist.get_rank()
assert dist.get_world_size() == 2, "run on two ranks"
raised = 0


def expect(fn, *words: str) -> None:
    global raised
    try:
        fn()
    except (ValueError, TypeError) as e:
        for w in words:
            assert w in str(e), f"rank {RANK}: {w!r} not in {e}"
        raised += 1
        return
    raise AssertionError(f"rank {RANK}: no error from {fn}")


# shapes differ: every rank hears both ranks' shapes
shape = (3,) if RANK == 0 else (4,)
expect(lambda: dist.all_reduce(ember.ones(shape)), "all_reduce", "rank 0: float32 tensor of "
       "shape (3,)", "rank 1: float32 tensor of shape (4,)")  # fmt: skip
# dtypes differ
dt = ember.float32 if RANK == 0 else ember.int64
expect(lambda: dist.broadcast(ember.ones(3, dtype=dt), src=0), "broadcast", "int64", "float32")
# different collectives at once
if RANK == 0:
    expect(lambda: dist.all_reduce(ember.ones(3)), "do not match")
else:
    expect(lambda: dist.broadcast(ember.ones(3), src=0), "do not match")
# a problem on one rank only (dst's gather_list too short): both ranks raise
lst = [ember.empty(2)] if RANK == 0 else None
expect(lambda: dist.gather(ember.ones(2), lst, dst=0), "gather_list must be a list of 2")
# roots differ
expect(lambda: dist.broadcast(ember.ones(2), src=RANK), "broadcast")
# ops no dtype has
expect(lambda: dist.all_reduce(ember.ones(2, dtype=ember.complex64), dist.ReduceOp.MAX), "complex")
expect(lambda: dist.all_reduce(ember.ones(2), dist.ReduceOp.BAND), "integer or bool")
# all_gather_into_tensor with a wrong output size
expect(lambda: dist.all_gather_into_tensor(ember.empty(3), ember.ones(2)), "2 times")
# all_to_all_single whose split sizes disagree between sender and receiver
out_sizes = [1, 1] if RANK == 0 else [2, 0]
expect(
    lambda: dist.all_to_all_single(ember.empty(2), ember.ones(2), out_sizes, [1, 1]),
    "all_to_all_single",
)
# recv into a tensor of another size: the receiver raises
if RANK == 0:
    dist.send(ember.ones(3), dst=1)
    dist.send(ember.ones(5), dst=1)
else:
    expect(lambda: dist.recv(ember.empty(4), src=0), "sent 12 bytes", "holds 16")
    expect(lambda: dist.recv(ember.empty(4), src=0), "larger")
    raised -= 2
# not a tensor; no root
expect(lambda: dist.all_reduce(np.ones(2)), "must be an ember Tensor")
expect(lambda: dist.broadcast(ember.ones(2)), "src")
# after all that the job still works
t = ember.ones(2) * (RANK + 1)
dist.all_reduce(t)
assert t.tolist() == [3.0, 3.0], t
dist.destroy_process_group()
if RANK == 0:
    print(f"errors OK: {raised} errors raised on every rank")
