"""``ember.distributed``: process groups and collectives over MPI, as ``torch.distributed``.

>>> import ember.distributed as dist
>>> dist.is_available()  # mpi4py installed
True

Launch with ``python -m ember.distributed.run -n 2 script.py`` (or ``mpiexec -n 2 python
script.py``); in the script, ``dist.init_process_group("mpi")`` joins the job. Importing this
package does not import mpi4py: MPI starts at ``init_process_group`` (or the first call that
needs it). docs/distributed.md is the guide.
"""

from __future__ import annotations

from ember.distributed.collectives import (
    all_gather,
    all_gather_into_tensor,
    all_reduce,
    all_to_all,
    all_to_all_single,
    barrier,
    broadcast,
    gather,
    irecv,
    isend,
    monitored_barrier,
    recv,
    reduce,
    reduce_scatter,
    reduce_scatter_tensor,
    scatter,
    send,
)
from ember.distributed.objects import (
    all_gather_object,
    broadcast_object_list,
    gather_object,
    scatter_object_list,
)
from ember.distributed.process_group import (
    DistBackendError,
    GroupMember,
    ProcessGroup,
    default_pg_timeout,
    destroy_process_group,
    get_backend,
    get_global_rank,
    get_group_rank,
    get_process_group_ranks,
    get_rank,
    get_world_size,
    group,
    init_process_group,
    is_available,
    is_gloo_available,
    is_initialized,
    is_mpi_available,
    is_nccl_available,
    is_torchelastic_launched,
    new_group,
)
from ember.distributed.reduce_op import ReduceOp, reduce_op
from ember.distributed.work import Work

Backend = str  # PyTorch's Backend names a string; ember's is always "mpi"
DistError = RuntimeError

__all__ = [
    "Backend",
    "DistBackendError",
    "GroupMember",
    "ProcessGroup",
    "ReduceOp",
    "Work",
    "all_gather",
    "all_gather_into_tensor",
    "all_gather_object",
    "all_reduce",
    "all_to_all",
    "all_to_all_single",
    "barrier",
    "broadcast",
    "broadcast_object_list",
    "default_pg_timeout",
    "destroy_process_group",
    "gather",
    "gather_object",
    "get_backend",
    "get_global_rank",
    "get_group_rank",
    "get_process_group_ranks",
    "get_rank",
    "get_world_size",
    "group",
    "init_process_group",
    "irecv",
    "is_available",
    "is_gloo_available",
    "is_initialized",
    "is_mpi_available",
    "is_nccl_available",
    "is_torchelastic_launched",
    "isend",
    "monitored_barrier",
    "new_group",
    "recv",
    "reduce",
    "reduce_op",
    "reduce_scatter",
    "reduce_scatter_tensor",
    "scatter",
    "scatter_object_list",
    "send",
]
