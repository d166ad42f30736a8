"""Before a collective moves data, the ranks check they agree on what it is.

# NOTE [agreeing before moving data]
A collective whose ranks pass different shapes or dtypes would hang in MPI or write past a
buffer. So each collective first all-reduces a small header (one int64 array: the
collective, dtype, shape, root, op, and whether the local arguments were valid) with MAX over
the header and its negation, which gives every rank the maximum and the minimum of each
field at once. If any field differs, or a rank found its own arguments invalid, every rank
gathers the others' descriptions (a rare, slow path) and raises the same ``ValueError``
naming each rank's arguments, before any tensor is touched. The header costs one small
all-reduce, a few microseconds on two ranks (``benchmarks/distributed.py`` measures it).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ember.distributed._buffers import code
from ember.distributed._mpi import mpi
from ember.distributed.process_group import ProcessGroup
from ember.distributed.work import wait_requests


def agree(
    pg: ProcessGroup, what: str, fields: list[int], describe: Callable[[], str], problem: str = ""
) -> None:
    """Raise on every rank unless every rank of ``pg`` has the same ``fields`` and no rank
    found a ``problem`` with its own arguments. NOTE [agreeing before moving data]"""
    head = [code(what), *fields, 0 if problem else 1]
    buf = np.array(head + [-v for v in head], np.int64)
    MPI = mpi()
    wait_requests([pg.comm.Iallreduce(MPI.IN_PLACE, buf, MPI.MAX)], pg, what, None)
    k = len(head)
    got = buf.tolist()
    if got[:k] == [-v for v in got[k:]] and got[k - 1] == 1:
        return
    mine = describe() + (f" [{problem}]" if problem else "")
    every = pg.comm.allgather(mine)
    lines = "; ".join(f"rank {pg.ranks[i]}: {d}" for i, d in enumerate(every))
    raise ValueError(
        f"ember.distributed.{what}: the ranks' arguments do not match ({lines}). Every rank "
        "of the group must call the same collective, with tensors of the same dtype and "
        "shape, and the same root and op."
    )
