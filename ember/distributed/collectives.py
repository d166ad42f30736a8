"""Collectives on tensors, in place, with PyTorch's names and signatures, over MPI.

Every call resolves its group, checks that the ranks agree (NOTE [agreeing before moving
data]), issues one nonblocking MPI call over the tensors' own memory (NOTE [zero-copy
buffers]) and returns a ``Work`` (``async_op=True``) or waits for it (NOTE [waiting with a
deadline]). A rank outside ``group`` does nothing, as PyTorch's.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ember._tensor import Tensor
from ember.distributed._agree import agree
from ember.distributed._buffers import (
    check_tensor,
    code,
    describe,
    raw,
    shape_code,
    store,
    values,
    writable,
)
from ember.distributed._mpi import mpi
from ember.distributed._reduce import Plan, as_op, problem
from ember.distributed.process_group import ProcessGroup, resolve
from ember.distributed.reduce_op import ReduceOp
from ember.distributed.work import Work, _DoneWork, wait_requests

__all__ = [
    "all_gather",
    "all_gather_into_tensor",
    "all_reduce",
    "all_to_all",
    "all_to_all_single",
    "barrier",
    "broadcast",
    "gather",
    "irecv",
    "isend",
    "monitored_barrier",
    "recv",
    "reduce",
    "reduce_scatter",
    "reduce_scatter_tensor",
    "scatter",
    "send",
]


def _run(work: Work, async_op: bool) -> Work | None:
    if async_op:
        return work
    work.wait()
    return None


def _skip(what: str, async_op: bool) -> Work | None:
    return _DoneWork(what) if async_op else None


def _fields(arr: np.ndarray) -> list[int]:
    return [code(arr.dtype), shape_code(arr.shape)]


def _root(pg: ProcessGroup, rank: int | None, group_rank: int | None, what: str, name: str) -> int:
    """The group rank of a call's root, from ``src``/``dst`` (a global rank) or
    ``group_src``/``group_dst`` (a rank in the group)."""
    if group_rank is not None:
        if rank is not None:
            raise ValueError(f"ember.distributed.{what}: pass {name} or group_{name}, not both")
        if not 0 <= group_rank < pg.size():
            raise ValueError(
                f"ember.distributed.{what}: group_{name}={group_rank} is not a rank of {pg}"
            )
        return group_rank
    if rank is None:
        raise ValueError(f"ember.distributed.{what}: {name} (the root's rank) is required")
    return pg.group_rank(int(rank), what)


# ---------------------------------------------------------------------- reductions


def all_reduce(
    tensor: Tensor, op: ReduceOp = ReduceOp.SUM, group: Any = None, async_op: bool = False
) -> Work | None:
    """Reduce ``tensor`` across the group; every rank gets the result, in place.

    >>> t = ember.ones(3) * (rank + 1)  # doctest: +SKIP
    >>> ember.distributed.all_reduce(t)  # on two ranks: tensor([3., 3., 3.])  # doctest: +SKIP
    """
    pg = resolve(group, "all_reduce")
    if pg is None:
        return _skip("all_reduce", async_op)
    check_tensor(tensor, "all_reduce")
    op = as_op(op, "all_reduce")
    arr, back = writable(tensor, "all_reduce")
    bad = problem(arr.dtype, op)
    agree(pg, "all_reduce", [*_fields(arr), op.value], lambda: f"{describe(tensor)}, {op}", bad)
    plan = Plan(arr, op, pg.size())
    MPI = mpi()
    req = pg.comm.Iallreduce(MPI.IN_PLACE, plan.spec(), plan.op)
    return _run(Work([req], "all_reduce", pg, plan.finish(back), [tensor]), async_op)


def reduce(
    tensor: Tensor,
    dst: int | None = None,
    op: ReduceOp = ReduceOp.SUM,
    group: Any = None,
    async_op: bool = False,
    group_dst: int | None = None,
) -> Work | None:
    """Reduce ``tensor`` across the group into rank ``dst``'s tensor (the others' are left
    as they were)."""
    pg = resolve(group, "reduce")
    if pg is None:
        return _skip("reduce", async_op)
    check_tensor(tensor, "reduce")
    op = as_op(op, "reduce")
    root = _root(pg, dst, group_dst, "reduce", "dst")
    mine = pg.rank() == root
    arr, back = writable(tensor, "reduce") if mine else (values(tensor, "reduce"), None)
    bad = problem(arr.dtype, op)
    agree(pg, "reduce", [*_fields(arr), op.value, root], lambda: describe(tensor), bad)
    plan = Plan(arr, op, pg.size())
    MPI = mpi()
    if mine:
        req = pg.comm.Ireduce(MPI.IN_PLACE, plan.spec(), plan.op, root)
        return _run(Work([req], "reduce", pg, plan.finish(back), [tensor]), async_op)
    req = pg.comm.Ireduce(plan.spec(), None, plan.op, root)
    return _run(Work([req], "reduce", pg, None, [tensor]), async_op)


def reduce_scatter_tensor(
    output: Tensor,
    input: Tensor,
    op: ReduceOp = ReduceOp.SUM,
    group: Any = None,
    async_op: bool = False,
) -> Work | None:
    """Reduce ``input`` across the group and give rank ``i`` the ``i``-th equal part (split
    along dim 0) in ``output``."""
    pg = resolve(group, "reduce_scatter_tensor")
    if pg is None:
        return _skip("reduce_scatter_tensor", async_op)
    check_tensor(output, "reduce_scatter_tensor", "output")
    check_tensor(input, "reduce_scatter_tensor", "input")
    op = as_op(op, "reduce_scatter_tensor")
    src = values(input, "reduce_scatter_tensor")
    out, back = writable(output, "reduce_scatter_tensor")
    bad = problem(src.dtype, op)
    if not bad and (src.dtype != out.dtype or src.size != out.size * pg.size()):
        bad = (
            f"input must have {pg.size()} times output's elements and its dtype: got input "
            f"{describe(input)}, output {describe(output)}"
        )
    agree(
        pg,
        "reduce_scatter_tensor",
        [*_fields(src), op.value],
        lambda: f"input {describe(input)}, output {describe(output)}",
        bad,
    )
    return _reduce_scatter(pg, "reduce_scatter_tensor", src, out, op, back, [output], async_op)


def _reduce_scatter(
    pg: ProcessGroup,
    what: str,
    src: np.ndarray,
    out: np.ndarray,
    op: ReduceOp,
    back: Callable[[], None] | None,
    outputs: list[Tensor],
    async_op: bool,
) -> Work | None:
    plan = Plan(out, op, pg.size())
    send = src.astype(np.float32) if plan.upcast else src
    req = pg.comm.Ireduce_scatter_block(plan.spec(send), plan.spec(), plan.op)
    return _run(Work([req], what, pg, plan.finish(back), outputs), async_op)


def reduce_scatter(
    output: Tensor,
    input_list: Sequence[Tensor],
    op: ReduceOp = ReduceOp.SUM,
    group: Any = None,
    async_op: bool = False,
) -> Work | None:
    """Reduce the lists across the group and give rank ``i`` the reduced ``input_list[i]``
    in ``output``."""
    pg = resolve(group, "reduce_scatter")
    if pg is None:
        return _skip("reduce_scatter", async_op)
    check_tensor(output, "reduce_scatter", "output")
    op = as_op(op, "reduce_scatter")
    out, back = writable(output, "reduce_scatter")
    bad = problem(out.dtype, op)
    parts = list(input_list)
    if len(parts) != pg.size() or any(
        not isinstance(p, Tensor) or p.dtype != output.dtype or p.shape != output.shape
        for p in parts
    ):
        bad = f"input_list must hold {pg.size()} tensors like output ({describe(output)})"
    agree(pg, "reduce_scatter", [*_fields(out), op.value], lambda: describe(output), bad)
    src = np.stack([values(p, "reduce_scatter") for p in parts])
    return _reduce_scatter(pg, "reduce_scatter", src, out, op, back, [output], async_op)


# ---------------------------------------------------------------------- data movement


def broadcast(
    tensor: Tensor,
    src: int | None = None,
    group: Any = None,
    async_op: bool = False,
    group_src: int | None = None,
) -> Work | None:
    """Copy rank ``src``'s ``tensor`` into every other rank's ``tensor``."""
    pg = resolve(group, "broadcast")
    if pg is None:
        return _skip("broadcast", async_op)
    check_tensor(tensor, "broadcast")
    root = _root(pg, src, group_src, "broadcast", "src")
    if pg.rank() == root:
        arr, back = values(tensor, "broadcast"), None
    else:
        arr, back = writable(tensor, "broadcast")
    agree(pg, "broadcast", [*_fields(arr), root], lambda: describe(tensor))
    req = pg.comm.Ibcast(raw(arr), root)
    return _run(Work([req], "broadcast", pg, back, [tensor]), async_op)


def all_gather_into_tensor(
    output_tensor: Tensor, input_tensor: Tensor, group: Any = None, async_op: bool = False
) -> Work | None:
    """Concatenate every rank's ``input_tensor`` (in rank order, along dim 0, or stacked: the
    output's shape says) into ``output_tensor`` on every rank."""
    what = "all_gather_into_tensor"
    pg = resolve(group, what)
    if pg is None:
        return _skip(what, async_op)
    check_tensor(output_tensor, what, "output_tensor")
    check_tensor(input_tensor, what, "input_tensor")
    src = values(input_tensor, what)
    out, back = writable(output_tensor, what)
    bad = ""
    if src.dtype != out.dtype or out.size != src.size * pg.size():
        bad = (
            f"output_tensor must have {pg.size()} times input_tensor's elements and its "
            f"dtype: got input {describe(input_tensor)}, output {describe(output_tensor)}"
        )
    agree(pg, what, _fields(src), lambda: f"input {describe(input_tensor)}", bad)
    req = pg.comm.Iallgather(raw(src), raw(out))
    return _run(Work([req], what, pg, back, [output_tensor]), async_op)


def _list_problem(tensors: Any, like: Tensor, n: int, name: str) -> str:
    if tensors is None or len(tensors) != n:
        return f"{name} must be a list of {n} tensors (one per rank)"
    for t in tensors:
        if not isinstance(t, Tensor) or t.dtype != like.dtype or t.shape != like.shape:
            got = describe(t) if isinstance(t, Tensor) else type(t).__name__
            return f"every tensor of {name} must be a {describe(like)}, got a {got}"
    return ""


def _store_all(tensors: Sequence[Tensor], stacked: np.ndarray) -> Callable[[], None]:
    def done() -> None:
        for t, v in zip(tensors, stacked, strict=True):
            t._bump_version()
            store(t, v)

    return done


def all_gather(
    tensor_list: list[Tensor], tensor: Tensor, group: Any = None, async_op: bool = False
) -> Work | None:
    """Every rank's ``tensor`` into ``tensor_list[rank]``, on every rank."""
    pg = resolve(group, "all_gather")
    if pg is None:
        return _skip("all_gather", async_op)
    check_tensor(tensor, "all_gather")
    src = values(tensor, "all_gather")
    bad = _list_problem(tensor_list, tensor, pg.size(), "tensor_list")
    agree(pg, "all_gather", _fields(src), lambda: describe(tensor), bad)
    tmp = np.empty((pg.size(), *src.shape), src.dtype)
    req = pg.comm.Iallgather(raw(src), raw(tmp))
    done = _store_all(tensor_list, tmp)
    return _run(Work([req], "all_gather", pg, done, tensor_list), async_op)


def gather(
    tensor: Tensor,
    gather_list: list[Tensor] | None = None,
    dst: int | None = None,
    group: Any = None,
    async_op: bool = False,
    group_dst: int | None = None,
) -> Work | None:
    """Every rank's ``tensor`` into ``gather_list`` on rank ``dst`` (``gather_list`` is given
    on ``dst`` only)."""
    pg = resolve(group, "gather")
    if pg is None:
        return _skip("gather", async_op)
    check_tensor(tensor, "gather")
    root = _root(pg, dst, group_dst, "gather", "dst")
    src = values(tensor, "gather")
    mine = pg.rank() == root
    if mine:
        bad = _list_problem(gather_list, tensor, pg.size(), "gather_list")
    else:
        bad = "gather_list must not be given on a rank other than dst" if gather_list else ""
    agree(pg, "gather", [*_fields(src), root], lambda: describe(tensor), bad)
    if not mine:
        return _run(Work([pg.comm.Igather(raw(src), None, root)], "gather", pg), async_op)
    tmp = np.empty((pg.size(), *src.shape), src.dtype)
    req = pg.comm.Igather(raw(src), raw(tmp), root)
    assert gather_list is not None
    return _run(Work([req], "gather", pg, _store_all(gather_list, tmp), gather_list), async_op)


def scatter(
    tensor: Tensor,
    scatter_list: list[Tensor] | None = None,
    src: int | None = None,
    group: Any = None,
    async_op: bool = False,
    group_src: int | None = None,
) -> Work | None:
    """Rank ``src``'s ``scatter_list[i]`` into rank ``i``'s ``tensor``."""
    pg = resolve(group, "scatter")
    if pg is None:
        return _skip("scatter", async_op)
    check_tensor(tensor, "scatter")
    root = _root(pg, src, group_src, "scatter", "src")
    out, back = writable(tensor, "scatter")
    mine = pg.rank() == root
    if mine:
        bad = _list_problem(scatter_list, tensor, pg.size(), "scatter_list")
    else:
        bad = "scatter_list must not be given on a rank other than src" if scatter_list else ""
    agree(pg, "scatter", [*_fields(out), root], lambda: describe(tensor), bad)
    packed = None
    if mine:
        assert scatter_list is not None
        packed = raw(np.stack([values(t, "scatter") for t in scatter_list]))
    req = pg.comm.Iscatter(packed, raw(out), root)
    return _run(Work([req], "scatter", pg, back, [tensor]), async_op)


def _splits(sizes: Sequence[int] | None, rows: int, n: int, name: str) -> tuple[list[int], str]:
    if sizes is None or len(sizes) == 0:
        if rows % n:
            return [0] * n, f"dim 0 ({rows}) is not divisible by the group's size {n}"
        return [rows // n] * n, ""
    sizes = [int(s) for s in sizes]
    if len(sizes) != n or sum(sizes) != rows or min(sizes) < 0:
        return [0] * n, f"{name} {sizes} must be {n} sizes summing to dim 0 ({rows})"
    return sizes, ""


def _alltoallv(
    pg: ProcessGroup,
    what: str,
    src: np.ndarray,
    send_counts: list[int],
    out: np.ndarray,
    recv_counts: list[int],
    fields: list[int],
    describe_args: Callable[[], str],
    bad: str,
) -> Any:
    """Check that what each rank sends is what its peer expects, then issue the exchange
    (counts in bytes)."""
    MPI = mpi()
    sent = np.array(send_counts, np.int64)
    told = np.empty_like(sent)

    wait_requests([pg.comm.Ialltoall(sent, told)], pg, what, None)
    if not bad and told.tolist() != list(recv_counts):
        bad = (
            f"the ranks send {told.tolist()} bytes to this rank, which expects {list(recv_counts)}"
        )
    agree(pg, what, fields, describe_args, bad)
    sdisp = np.concatenate([[0], np.cumsum(send_counts)[:-1]]).astype(np.int64).tolist()
    rdisp = np.concatenate([[0], np.cumsum(recv_counts)[:-1]]).astype(np.int64).tolist()
    return pg.comm.Ialltoallv(
        [raw(src), (list(send_counts), sdisp), MPI.BYTE],
        [raw(out), (list(recv_counts), rdisp), MPI.BYTE],
    )


def all_to_all_single(
    output: Tensor,
    input: Tensor,
    output_split_sizes: Sequence[int] | None = None,
    input_split_sizes: Sequence[int] | None = None,
    group: Any = None,
    async_op: bool = False,
) -> Work | None:
    """Split ``input`` along dim 0 and send part ``i`` to rank ``i``; the parts received, in
    rank order, fill ``output`` (equal parts unless split sizes are given)."""
    what = "all_to_all_single"
    pg = resolve(group, what)
    if pg is None:
        return _skip(what, async_op)
    check_tensor(output, what, "output")
    check_tensor(input, what, "input")
    src = values(input, what)
    out, back = writable(output, what)
    n = pg.size()
    src2 = src.reshape(src.shape[0] if src.ndim else 1, -1) if src.size else src.reshape(0, 0)
    out2 = out.reshape(out.shape[0] if out.ndim else 1, -1) if out.size else out.reshape(0, 0)
    s_rows, bad = _splits(input_split_sizes, src2.shape[0], n, "input_split_sizes")
    r_rows, bad2 = _splits(output_split_sizes, out2.shape[0], n, "output_split_sizes")
    bad = bad or bad2
    if not bad and (src.dtype != out.dtype or tuple(src.shape[1:]) != tuple(out.shape[1:])):
        bad = f"input {describe(input)} and output {describe(output)} differ past dim 0"
    row = math.prod(src.shape[1:]) * src.itemsize
    req = _alltoallv(
        pg,
        what,
        src,
        [r * row for r in s_rows],
        out,
        [r * row for r in r_rows],
        [code(src.dtype), shape_code(tuple(src.shape[1:]))],
        lambda: f"input {describe(input)}, output {describe(output)}",
        bad,
    )
    return _run(Work([req], what, pg, back, [output]), async_op)


def all_to_all(
    output_tensor_list: list[Tensor],
    input_tensor_list: list[Tensor],
    group: Any = None,
    async_op: bool = False,
) -> Work | None:
    """Send ``input_tensor_list[i]`` to rank ``i``; rank ``j``'s arrives in
    ``output_tensor_list[j]``."""
    what = "all_to_all"
    pg = resolve(group, what)
    if pg is None:
        return _skip(what, async_op)
    n = pg.size()
    bad = ""
    if len(output_tensor_list) != n or len(input_tensor_list) != n:
        bad = f"both lists must hold {n} tensors (one per rank)"
    ins = [values(t, what) for t in input_tensor_list]
    dtypes = {a.dtype for a in ins} | {t.dtype.np for t in output_tensor_list}
    if not bad and len(dtypes) > 1:
        bad = "every tensor of both lists must have one dtype"
    src = np.concatenate([raw(a) for a in ins]) if ins else np.empty(0, np.uint8)
    sizes = [t.numel() * t.element_size() for t in output_tensor_list]
    out = np.empty(sum(sizes), np.uint8)
    dtype = code(next(iter(dtypes))) if len(dtypes) == 1 else 0

    def done() -> None:
        start = 0
        for t, size in zip(output_tensor_list, sizes, strict=True):
            t._bump_version()
            store(t, out[start : start + size].view(t.dtype.np))
            start += size

    req = _alltoallv(
        pg,
        what,
        src,
        [a.nbytes for a in ins],
        out,
        sizes,
        [dtype],
        lambda: f"{len(input_tensor_list)} inputs, {len(output_tensor_list)} outputs",
        bad,
    )
    return _run(Work([req], what, pg, done, output_tensor_list), async_op)


# ---------------------------------------------------------------------- point to point


def _peer(pg: ProcessGroup, rank: int | None, group_rank: int | None, what: str, name: str) -> int:
    if rank is None and group_rank is None:
        return -1
    return _root(pg, rank, group_rank, what, name)


def isend(
    tensor: Tensor,
    dst: int | None = None,
    group: Any = None,
    tag: int = 0,
    group_dst: int | None = None,
) -> Work | None:
    """Send ``tensor`` to rank ``dst`` without waiting; ``wait()`` the returned work."""
    pg = resolve(group, "isend")
    if pg is None:
        return None
    check_tensor(tensor, "isend")
    peer = _peer(pg, dst, group_dst, "isend", "dst")
    if peer < 0:
        raise ValueError("ember.distributed.isend: dst (the receiver's rank) is required")
    arr = values(tensor, "isend")
    req = pg.comm.Isend(raw(arr), peer, tag)
    return Work([req], "isend", pg, lambda: arr, [tensor])  # keeps arr alive until done


def irecv(
    tensor: Tensor,
    src: int | None = None,
    group: Any = None,
    tag: int = 0,
    group_src: int | None = None,
) -> Work | None:
    """Receive into ``tensor`` from rank ``src`` (any rank when None) without waiting."""
    pg = resolve(group, "irecv")
    if pg is None:
        return None
    check_tensor(tensor, "irecv")
    MPI = mpi()
    peer = _peer(pg, src, group_src, "irecv", "src")
    out, back = writable(tensor, "irecv")
    status = MPI.Status()
    req = pg.comm.Irecv(raw(out), MPI.ANY_SOURCE if peer < 0 else peer, tag)
    nbytes = out.nbytes

    def done() -> int:
        got = status.Get_count(MPI.BYTE)
        sender = pg.ranks[status.Get_source()]
        if got != nbytes:
            raise ValueError(
                f"ember.distributed.recv: rank {sender} sent {got} bytes, but the receiving "
                f"{describe(tensor)} holds {nbytes}; send and recv tensors must match"
            )
        if back is not None:
            back()
        return sender

    return Work([req], "recv", pg, done, [tensor], status)


def send(
    tensor: Tensor,
    dst: int | None = None,
    group: Any = None,
    tag: int = 0,
    group_dst: int | None = None,
) -> None:
    """Send ``tensor`` to rank ``dst`` (returns once the data is on its way)."""
    work = isend(tensor, dst, group, tag, group_dst)
    if work is not None:
        work.wait()


def recv(
    tensor: Tensor,
    src: int | None = None,
    group: Any = None,
    tag: int = 0,
    group_src: int | None = None,
) -> int:
    """Receive into ``tensor`` from rank ``src`` (any rank when None); returns the sender's
    rank (-1 outside ``group``)."""
    work = irecv(tensor, src, group, tag, group_src)
    if work is None:
        return -1
    try:
        return work._source_rank()
    except Exception as e:
        if type(e).__module__.startswith("mpi4py"):  # a longer message: MPI_ERR_TRUNCATE
            raise ValueError(
                f"ember.distributed.recv: the message is larger than the receiving "
                f"{describe(tensor)}; send and recv tensors must match ({e})"
            ) from e
        raise


# ---------------------------------------------------------------------- barriers


def barrier(group: Any = None, async_op: bool = False, device_ids: Any = None) -> Work | None:
    """Wait until every rank of the group has reached this call."""
    pg = resolve(group, "barrier")
    if pg is None:
        return _skip("barrier", async_op)
    return _run(Work([pg.comm.Ibarrier()], "barrier", pg), async_op)


def monitored_barrier(group: Any = None, timeout: Any = None, wait_all_ranks: bool = False) -> None:
    """A barrier that raises after ``timeout`` (the group's when None)."""
    pg = resolve(group, "monitored_barrier")
    if pg is None:
        return
    Work([pg.comm.Ibarrier()], "monitored_barrier", pg).wait(timeout)
