"""Collectives on picklable Python objects (``broadcast_object_list``, ``all_gather_object``,
``gather_object``, ``scatter_object_list``), as PyTorch's.

Objects are pickled and unpickled only between the job's own processes; as with PyTorch's,
unpickling runs code, so never use these with data from elsewhere.
"""

from __future__ import annotations

import pickle
from typing import Any

import numpy as np

from ember.distributed._agree import agree
from ember.distributed._mpi import mpi
from ember.distributed.collectives import _root
from ember.distributed.process_group import ProcessGroup, resolve
from ember.distributed.work import wait_requests

__all__ = ["all_gather_object", "broadcast_object_list", "gather_object", "scatter_object_list"]


def _wait(pg: ProcessGroup, req: Any, what: str) -> None:
    wait_requests([req], pg, what, None)


def _bytes(obj: Any) -> np.ndarray:
    return np.frombuffer(pickle.dumps(obj), np.uint8)


def _gatherv(pg: ProcessGroup, what: str, mine: np.ndarray, root: int | None) -> list[Any]:
    """Every rank's pickled bytes, unpickled (at ``root`` only, or everywhere when None)."""
    n = pg.size()
    sizes = np.empty(n, np.int64)
    here = np.array([mine.size], np.int64)
    comm = pg.comm
    MPI = mpi()
    _wait(pg, comm.Iallgather(here, sizes), what)
    offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]]).tolist()
    counts = sizes.tolist()
    if root is not None and pg.rank() != root:
        _wait(pg, comm.Igatherv(mine, None, root), what)
        return []
    out = np.empty(int(sizes.sum()), np.uint8)
    spec = [out, (counts, offsets), MPI.BYTE]
    req = comm.Iallgatherv(mine, spec) if root is None else comm.Igatherv(mine, spec, root)
    _wait(pg, req, what)
    return [pickle.loads(out[o : o + c].tobytes()) for o, c in zip(offsets, counts, strict=True)]


def all_gather_object(object_list: list[Any], obj: Any, group: Any = None) -> None:
    """Every rank's ``obj`` into ``object_list[rank]`` (a list of the group's size)."""
    pg = resolve(group, "all_gather_object")
    if pg is None:
        return
    bad = "" if len(object_list) == pg.size() else f"object_list must have {pg.size()} entries"
    agree(pg, "all_gather_object", [], lambda: f"object_list of {len(object_list)}", bad)
    object_list[:] = _gatherv(pg, "all_gather_object", _bytes(obj), None)


def gather_object(
    obj: Any,
    object_gather_list: list[Any] | None = None,
    dst: int | None = None,
    group: Any = None,
    group_dst: int | None = None,
) -> None:
    """Every rank's ``obj`` into ``object_gather_list`` on rank ``dst``."""
    pg = resolve(group, "gather_object")
    if pg is None:
        return
    root = _root(
        pg, 0 if dst is None and group_dst is None else dst, group_dst, "gather_object", "dst"
    )
    bad = ""
    if pg.rank() == root and (object_gather_list is None or len(object_gather_list) != pg.size()):
        bad = f"object_gather_list must have {pg.size()} entries on dst"
    agree(pg, "gather_object", [root], lambda: "gather_object", bad)
    got = _gatherv(pg, "gather_object", _bytes(obj), root)
    if pg.rank() == root:
        assert object_gather_list is not None
        object_gather_list[:] = got


def broadcast_object_list(
    object_list: list[Any],
    src: int | None = None,
    group: Any = None,
    device: Any = None,
    group_src: int | None = None,
) -> None:
    """Rank ``src``'s ``object_list`` entries into every rank's ``object_list`` (of the same
    length), in place."""
    what = "broadcast_object_list"
    pg = resolve(group, what)
    if pg is None:
        return
    root = _root(pg, 0 if src is None and group_src is None else src, group_src, what, "src")
    agree(pg, what, [root, len(object_list)], lambda: f"object_list of {len(object_list)}")
    comm = pg.comm
    payload = _bytes(list(object_list)) if pg.rank() == root else np.empty(0, np.uint8)
    size = np.array([payload.size], np.int64)
    _wait(pg, comm.Ibcast(size, root), what)
    if pg.rank() != root:
        payload = np.empty(int(size[0]), np.uint8)
    _wait(pg, comm.Ibcast(payload, root), what)
    if pg.rank() != root:
        object_list[:] = pickle.loads(payload.tobytes())


def scatter_object_list(
    scatter_object_output_list: list[Any],
    scatter_object_input_list: list[Any] | None = None,
    src: int | None = None,
    group: Any = None,
    group_src: int | None = None,
) -> None:
    """Rank ``src``'s ``scatter_object_input_list[i]`` into rank ``i``'s
    ``scatter_object_output_list[0]``."""
    what = "scatter_object_list"
    pg = resolve(group, what)
    if pg is None:
        return
    root = _root(pg, 0 if src is None and group_src is None else src, group_src, what, "src")
    bad = ""
    if not scatter_object_output_list:
        bad = "scatter_object_output_list must have at least one entry"
    elif pg.rank() == root and (
        scatter_object_input_list is None or len(scatter_object_input_list) != pg.size()
    ):
        bad = f"scatter_object_input_list must have {pg.size()} entries on src"
    agree(pg, what, [root], lambda: what, bad)
    box = [list(scatter_object_input_list or [])]
    broadcast_object_list(box, group_src=root, group=pg)
    scatter_object_output_list[0] = box[0][pg.rank()]
