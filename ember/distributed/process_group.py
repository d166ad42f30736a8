"""Process groups over MPI communicators: the default group (every process the MPI launcher
started), ``new_group(ranks)``, and the calls that ask about them, as ``torch.distributed``.

# NOTE [ranks come from MPI]
There is no rendezvous of ember's own: ``init_process_group`` takes rank and size from
``MPI.COMM_WORLD`` (``mpiexec -n 4 python script.py``, or ``python -m ember.distributed.run``),
and a group is an MPI communicator over some of those ranks. A script run without a launcher
is a world of one process (MPI's singleton start).
"""

from __future__ import annotations

import datetime
import os
import sys
import time
import traceback
from types import TracebackType
from typing import Any

from ember.distributed._mpi import available, mpi

#: PyTorch's default for the CPU backends (gloo, mpi): 30 minutes
default_pg_timeout = datetime.timedelta(minutes=30)


class DistBackendError(RuntimeError):
    """A collective failed or timed out in the transport (PyTorch's ``DistBackendError``)."""


class ProcessGroup:
    """A set of ranks that run collectives together: an MPI communicator, the global ranks of
    its members in group order, and the timeout its collectives wait for."""

    def __init__(self, comm: Any, ranks: list[int], timeout: datetime.timedelta) -> None:
        self.comm = comm
        self.ranks = ranks
        self.timeout = timeout
        self._rank = comm.Get_rank()
        self._size = comm.Get_size()
        self._global = {g: i for i, g in enumerate(ranks)}

    def rank(self) -> int:
        return self._rank  # type: ignore[no-any-return]

    def size(self) -> int:
        return self._size  # type: ignore[no-any-return]

    def name(self) -> str:
        return "mpi"

    def group_rank(self, global_rank: int, what: str) -> int:
        """The rank in this group of a global rank (an error naming ``what`` if not a member)."""
        r = self._global.get(global_rank)
        if r is None:
            raise ValueError(
                f"ember.distributed.{what}: global rank {global_rank} is not in the group "
                f"(its ranks are {self.ranks})"
            )
        return r

    def __repr__(self) -> str:
        return f"ProcessGroup(backend='mpi', ranks={self.ranks})"


class _NonMember:
    def __repr__(self) -> str:
        return "GroupMember.NON_GROUP_MEMBER"


class _State:
    world: ProcessGroup | None = None
    groups: list[ProcessGroup] = []
    hook: Any = None


_STATE = _State()


class GroupMember:
    """``GroupMember.WORLD`` (the default group, or None) and ``NON_GROUP_MEMBER`` (what
    ``new_group`` returns on a rank outside the group), as PyTorch's."""

    NON_GROUP_MEMBER: Any = _NonMember()

    class _World:
        def __get__(self, obj: Any, owner: Any) -> ProcessGroup | None:
            return _STATE.world

    WORLD = _World()


class group:  # noqa: N801  (PyTorch's name)
    """``group.WORLD``: the default process group (None before ``init_process_group``)."""

    WORLD = GroupMember._World()


def is_available() -> bool:
    """Whether ``ember.distributed`` can run: mpi4py (and an MPI library) is installed."""
    return available()


def is_mpi_available() -> bool:
    return available()


def is_gloo_available() -> bool:
    return False


def is_nccl_available() -> bool:
    return False


def is_initialized() -> bool:
    """Whether ``init_process_group`` has run (and ``destroy_process_group`` not since)."""
    return _STATE.world is not None


def is_torchelastic_launched() -> bool:
    return False


def _world(what: str) -> ProcessGroup:
    world = _STATE.world
    if world is None:
        raise ValueError(
            f"ember.distributed.{what}: Default process group has not been initialized, "
            "please make sure to call init_process_group."
        )
    return world


def resolve(group: Any, what: str) -> ProcessGroup | None:
    """The group a call runs in (``None``: the default group); None when this rank is not a
    member (the call then does nothing, as PyTorch's)."""
    if group is None or group is GroupMember.WORLD:
        return _world(what)
    if group is GroupMember.NON_GROUP_MEMBER:
        return None
    if not isinstance(group, ProcessGroup):
        raise TypeError(f"ember.distributed.{what}: group must be a ProcessGroup, got {group!r}")
    return group


def init_process_group(
    backend: str | None = None,
    init_method: str | None = None,
    timeout: datetime.timedelta | None = None,
    world_size: int = -1,
    rank: int = -1,
    store: Any = None,
    group_name: str = "",
    pg_options: Any = None,
    device_id: Any = None,
) -> None:
    """Join the default process group: every process the MPI launcher started.

    >>> ember.distributed.init_process_group("mpi")  # doctest: +SKIP

    ``backend`` is ``"mpi"`` (``None``, ``"gloo"`` and ``"cpu:gloo"`` are taken as MPI too, so
    scripts written for PyTorch's CPU backend run unchanged). ``timeout`` bounds how long any
    collective waits for the other ranks. ``world_size`` and ``rank``, when given, must be
    the launcher's. NOTE [ranks come from MPI]
    """
    if _STATE.world is not None:
        raise ValueError("trying to initialize the default process group twice!")
    name = (backend or "mpi").lower()
    if name not in ("mpi", "gloo", "cpu:gloo", "cpu:mpi"):
        raise ValueError(
            f"ember.distributed.init_process_group: backend {backend!r} is not available; "
            "ember moves data through MPI only: use backend='mpi' (or leave it out)"
        )
    if timeout is None:
        timeout = default_pg_timeout
    if not isinstance(timeout, datetime.timedelta):
        raise TypeError(
            f"ember.distributed.init_process_group: timeout must be a datetime.timedelta, got "
            f"{type(timeout).__name__}"
        )
    MPI = mpi()
    comm = MPI.COMM_WORLD
    size, me = comm.Get_size(), comm.Get_rank()
    if world_size not in (-1, size) or rank not in (-1, me):
        raise ValueError(
            f"ember.distributed.init_process_group: world_size={world_size}, rank={rank} "
            f"disagree with the MPI launcher's (size {size}, rank {me}); leave them out, "
            "they come from mpiexec"
        )
    _STATE.world = ProcessGroup(comm, list(range(size)), timeout)
    _STATE.groups = []
    os.environ.setdefault("RANK", str(me))
    os.environ.setdefault("WORLD_SIZE", str(size))
    if size > 1:
        _install_abort_hook(me, size)


def destroy_process_group(group: Any = None) -> None:
    """Leave the default group (and free every group made by ``new_group``), or free one."""
    if group is not None and group is not GroupMember.WORLD:
        if isinstance(group, ProcessGroup) and group in _STATE.groups:
            _STATE.groups.remove(group)
            group.comm.Free()
        return
    _world("destroy_process_group")
    for g in _STATE.groups:
        g.comm.Free()
    _STATE.groups = []
    _STATE.world = None
    if _STATE.hook is not None:
        sys.excepthook = _STATE.hook
        _STATE.hook = None


def new_group(
    ranks: list[int] | None = None,
    timeout: datetime.timedelta | None = None,
    backend: str | None = None,
    pg_options: Any = None,
    use_local_synchronization: bool = False,
    group_desc: str | None = None,
    device_id: Any = None,
) -> Any:
    """A group of some ranks (every rank of the world must call it, in the same order).

    On a rank outside ``ranks`` it returns ``GroupMember.NON_GROUP_MEMBER``, and collectives
    called with that group do nothing there, as PyTorch's.
    """
    world = _world("new_group")
    ranks = list(range(world.size())) if ranks is None else sorted(int(r) for r in ranks)
    bad = [r for r in ranks if not 0 <= r < world.size()]
    if bad or len(set(ranks)) != len(ranks):
        raise ValueError(
            f"ember.distributed.new_group: ranks {ranks} must be distinct ranks of the world "
            f"(0..{world.size() - 1})"
        )
    comm = world.comm.Create(world.comm.Get_group().Incl(ranks))
    if comm == mpi().COMM_NULL:
        return GroupMember.NON_GROUP_MEMBER
    pg = ProcessGroup(comm, ranks, world.timeout if timeout is None else timeout)
    _STATE.groups.append(pg)
    return pg


def get_rank(group: Any = None) -> int:
    """This process's rank in ``group`` (the default group: 0 .. world size - 1); -1 when not
    a member."""
    pg = resolve(group, "get_rank")
    return -1 if pg is None else pg.rank()


def get_world_size(group: Any = None) -> int:
    """How many ranks ``group`` has (-1 when this rank is not a member)."""
    pg = resolve(group, "get_world_size")
    return -1 if pg is None else pg.size()


def get_backend(group: Any = None) -> str:
    """The backend's name: always ``"mpi"``."""
    resolve(group, "get_backend")
    return "mpi"


def get_process_group_ranks(group: Any) -> list[int]:
    """The global ranks of ``group``'s members, in group order."""
    pg = resolve(group, "get_process_group_ranks")
    return [] if pg is None else list(pg.ranks)


def get_global_rank(group: Any, group_rank: int) -> int:
    """The global rank of rank ``group_rank`` of ``group``."""
    pg = resolve(group, "get_global_rank")
    if pg is None or not 0 <= group_rank < pg.size():
        raise ValueError(f"ember.distributed.get_global_rank: no rank {group_rank} in {pg}")
    return pg.ranks[group_rank]


def get_group_rank(group: Any, global_rank: int) -> int:
    """The rank within ``group`` of global rank ``global_rank``."""
    pg = resolve(group, "get_group_rank")
    if pg is None:
        raise ValueError("ember.distributed.get_group_rank: this rank is not in the group")
    return pg.group_rank(global_rank, "get_group_rank")


def _install_abort_hook(me: int, size: int) -> None:
    """An uncaught exception on one rank ends the whole job (MPI Abort) with a message naming
    the rank, instead of leaving the other ranks waiting in a collective forever."""
    previous = sys.excepthook

    def hook(tp: type[BaseException], value: BaseException, tb: TracebackType | None) -> None:
        text = "".join(traceback.format_exception(tp, value, tb))
        sys.stderr.write(f"[rank {me}] {text}")
        sys.stderr.write(
            f"ember.distributed: rank {me} of {size} failed ({tp.__name__}: {value}); "
            "aborting the job\n"
        )
        sys.stderr.flush()
        sys.stdout.flush()
        # MPI's process manager tears the job down at Abort and may drop what it has not
        # yet forwarded from this rank's pipes: a moment first, so the message arrives
        time.sleep(0.25)
        mpi().COMM_WORLD.Abort(1)

    _STATE.hook = previous
    sys.excepthook = hook
