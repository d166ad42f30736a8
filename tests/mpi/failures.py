"""Run under MPI on two ranks; ``argv[1]`` says how the job fails. The test expects a
nonzero exit, within seconds, with a message naming the failing rank:

- ``timeout``: rank 1 never joins rank 0's all_reduce; rank 0 raises after the 1 s timeout;
- ``raise``: rank 1 raises before a collective rank 0 waits in (timeout 30 min);
- ``exit``: rank 1 exits with code 3 while rank 0 waits.
"""

from __future__ import annotations

import datetime
import os
import sys
import time

import ember
import ember.distributed as dist

case = sys.argv[1]
dist.init_process_group("mpi", timeout=datetime.timedelta(seconds=1 if case == "timeout" else 1800))
rank = dist.get_rank()
dist.barrier()
if rank == 1:
    if case == "raise":
        raise RuntimeError("rank 1 broke down")
    if case == "exit":
        sys.stdout.flush()
        os._exit(3)
    time.sleep(30)  # never reached in a passing test: the job ends before
dist.all_reduce(ember.ones(2))
print("rank 0 finished: the failure went unnoticed")
