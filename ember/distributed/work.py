"""``Work``: a collective in flight (``async_op=True``, ``isend``/``irecv``), and the one
loop every wait goes through, which honours the group's timeout.

# NOTE [waiting with a deadline]
Every collective is issued as a nonblocking MPI call (``Iallreduce``, ``Ibcast``...) and
completed by polling ``Test`` until it finishes or the group's timeout passes; then it raises
``DistBackendError`` on this rank rather than hang. MPICH's blocking calls spin the same way,
and its nonblocking collectives are as fast (``benchmarks/distributed.py``); after 0.1 ms
of polling a waiting rank yields its core between polls, so more ranks than cores still run
(the collectives test on 4 ranks on 2 cores: 29 s of spinning, 17 s yielding). MPI has no way to
cancel a collective, so the job cannot go on after a timeout: the error, uncaught, ends the
whole job through the abort hook ``init_process_group`` installs.
"""

from __future__ import annotations

import datetime
import os
import time
from collections.abc import Callable, Sequence
from typing import Any

from ember.distributed._mpi import mpi
from ember.distributed.process_group import DistBackendError, ProcessGroup

_clock = time.perf_counter
_yield = os.sched_yield if hasattr(os, "sched_yield") else lambda: time.sleep(0)
#: how long a wait polls without yielding the core (then it yields between polls, as MPICH's
#: own blocking calls do, so ranks sharing cores with the one they wait for let it run)
SPIN_SECONDS = 1e-4


def wait_requests(
    requests: Sequence[Any],
    pg: ProcessGroup,
    what: str,
    timeout: datetime.timedelta | None,
    status: Any = None,
) -> None:
    """Poll ``requests`` until all finish, or raise once ``timeout`` (the group's when None)
    has passed. NOTE [waiting with a deadline]"""
    if len(requests) == 1:
        req = requests[0]
        if req.Test(status):
            return
        test = lambda: req.Test(status)  # noqa: E731
    else:
        testall = mpi().Request.Testall
        reqs = list(requests)
        if testall(reqs):
            return
        test = lambda: testall(reqs)  # noqa: E731
    limit = (pg.timeout if timeout is None else timeout).total_seconds()
    start = _clock()
    deadline = start + limit
    spin = start + SPIN_SECONDS
    while not test():
        now = _clock()
        if now > spin:  # waiting long: let the ranks we wait for have the core
            _yield()
        if now > deadline:
            raise DistBackendError(
                f"ember.distributed.{what}: the other ranks of {pg} did not answer within the "
                f"timeout ({datetime.timedelta(seconds=limit)}, set by init_process_group or "
                "new_group): a rank died, is stuck, or called a different collective. MPI "
                "cannot cancel the pending call, so the job must end."
            )


class Work:
    """A collective or point-to-point transfer in flight, as PyTorch's ``Work``.

    >>> work = ember.distributed.all_reduce(t, async_op=True)  # doctest: +SKIP
    >>> work.wait()  # doctest: +SKIP
    True

    ``wait()`` blocks until it is done (raising after the group's timeout); the tensors are
    written only then: reading them before ``wait()`` or ``is_completed()`` is True gives
    unspecified values, as PyTorch's.
    """

    def __init__(
        self,
        requests: Sequence[Any],
        what: str,
        pg: ProcessGroup,
        finish: Callable[[], Any] | None = None,
        outputs: Sequence[Any] = (),
        status: Any = None,
    ) -> None:
        self._status = status
        self._requests = list(requests)
        self._what = what
        self._pg = pg
        self._finish = finish
        self._outputs = list(outputs)
        self._done = False
        self._value: Any = None

    def _complete(self) -> None:
        self._done = True
        finish, self._finish = self._finish, None
        self._requests = []
        if finish is not None:
            self._value = finish()

    def is_completed(self) -> bool:
        """Whether the transfer has finished (this call also drives MPI's progress)."""
        if self._done:
            return True
        reqs = self._requests
        done = reqs[0].Test(self._status) if len(reqs) == 1 else mpi().Request.Testall(reqs)
        if done:
            self._complete()
        return done  # type: ignore[no-any-return]

    def wait(self, timeout: datetime.timedelta | None = None) -> bool:
        """Block until done; raise ``DistBackendError`` after ``timeout`` (the group's when
        None). NOTE [waiting with a deadline]"""
        if not self._done:
            wait_requests(self._requests, self._pg, self._what, timeout, self._status)
            self._complete()
        return True

    def synchronize(self) -> None:
        self.wait()

    def is_success(self) -> bool:
        return self._done

    def exception(self) -> None:
        return None

    def result(self) -> list[Any]:
        """The output tensors (after ``wait()``)."""
        return list(self._outputs)

    def _source_rank(self) -> int:
        self.wait()
        return self._value  # type: ignore[no-any-return]

    def __repr__(self) -> str:
        return f"Work({self._what}, {'completed' if self._done else 'pending'})"


class _DoneWork(Work):
    """What a collective returns on a rank outside its group: nothing to do."""

    def __init__(self, what: str) -> None:
        self._done = True
        self._what = what
        self._outputs = []
        self._value = -1
