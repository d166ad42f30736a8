"""Placeholder process groups over mpi4py (branch dtensor), replaced by the dist helper's
``ember.distributed`` when it merges: only the names DTensor calls, PyTorch's signatures."""

from __future__ import annotations

import enum
from typing import Any

import numpy as np

from ember._tensor import Tensor

__all__ = [
    "ProcessGroup",
    "ReduceOp",
    "all_gather_into_tensor",
    "all_reduce",
    "all_to_all_single",
    "broadcast",
    "get_rank",
    "get_world_size",
    "init_process_group",
    "is_available",
    "is_initialized",
    "new_group",
    "reduce_scatter_tensor",
]


class ReduceOp(enum.Enum):
    SUM = "sum"
    AVG = "avg"
    PRODUCT = "product"
    MIN = "min"
    MAX = "max"


class ProcessGroup:
    def __init__(self, comm: Any, ranks: list[int]) -> None:
        self.comm, self.ranks = comm, ranks


_WORLD: ProcessGroup | None = None


def is_available() -> bool:
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        return False
    return True


def is_initialized() -> bool:
    return _WORLD is not None


def init_process_group(backend: str = "mpi", **kwargs: Any) -> None:
    global _WORLD
    from mpi4py import MPI

    _WORLD = ProcessGroup(MPI.COMM_WORLD, list(range(MPI.COMM_WORLD.Get_size())))


def _g(group: ProcessGroup | None) -> ProcessGroup:
    if _WORLD is None:
        raise RuntimeError("call init_process_group() first")
    return _WORLD if group is None else group


def get_rank(group: ProcessGroup | None = None) -> int:
    return int(_g(group).comm.Get_rank())


def get_world_size(group: ProcessGroup | None = None) -> int:
    return int(_g(group).comm.Get_size())


def new_group(ranks: list[int] | None = None, **kwargs: Any) -> ProcessGroup:
    w = _g(None)
    ranks = list(range(w.comm.Get_size())) if ranks is None else sorted(ranks)
    grp = w.comm.Get_group().Incl(ranks)
    return ProcessGroup(w.comm.Create(grp), ranks)


def _arr(t: Tensor) -> np.ndarray:
    return np.ascontiguousarray(t.numpy())


def _op(op: ReduceOp) -> Any:
    from mpi4py import MPI

    return {"sum": MPI.SUM, "avg": MPI.SUM, "product": MPI.PROD, "min": MPI.MIN, "max": MPI.MAX}[
        op.value
    ]


def _put(t: Tensor, a: np.ndarray) -> None:
    import ember

    with ember.no_grad():
        t.copy_(ember.from_numpy(a.reshape(tuple(t.shape))))


def all_reduce(t: Tensor, op: ReduceOp = ReduceOp.SUM, group: ProcessGroup | None = None) -> None:
    g = _g(group)
    a = _arr(t)
    out = np.empty_like(a)
    g.comm.Allreduce(a, out, op=_op(op))
    if op is ReduceOp.AVG:
        out = out / g.comm.Get_size()
    _put(t, out.astype(a.dtype))


def all_gather_into_tensor(out: Tensor, inp: Tensor, group: ProcessGroup | None = None) -> None:
    g = _g(group)
    a = _arr(inp)
    res = np.empty((g.comm.Get_size(),) + a.shape, a.dtype)
    g.comm.Allgather(a, res)
    _put(out, res)


def reduce_scatter_tensor(
    out: Tensor, inp: Tensor, op: ReduceOp = ReduceOp.SUM, group: ProcessGroup | None = None
) -> None:
    g = _g(group)
    a = _arr(inp)
    n = g.comm.Get_size()
    res = np.empty(a.size // n, a.dtype)
    g.comm.Reduce_scatter_block(a, res, op=_op(op))
    if op is ReduceOp.AVG:
        res = res / n
    _put(out, res.astype(a.dtype))


def all_to_all_single(out: Tensor, inp: Tensor, group: ProcessGroup | None = None) -> None:
    g = _g(group)
    a = _arr(inp)
    res = np.empty_like(a)
    g.comm.Alltoall(a, res)
    _put(out, res)


def broadcast(t: Tensor, src: int, group: ProcessGroup | None = None) -> None:
    g = _g(group)
    a = _arr(t)
    g.comm.Bcast(a, root=g.ranks.index(src))
    _put(t, a)
