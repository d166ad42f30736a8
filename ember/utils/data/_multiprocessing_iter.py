"""The main-process side of ``DataLoader(num_workers > 0)``: starts the worker processes,
hands them tasks round-robin, keeps ``prefetch_factor`` tasks per worker in flight, and
yields the batches in sampler order (or as they come, with ``in_order=False``).

# NOTE [DataLoader workers]
As PyTorch's ``_MultiProcessingDataLoaderIter``. Each worker has its own index queue and
its own result pipe. Task ``i`` goes to the next live worker in turn; ``task_info[i]`` holds
its worker and, once it has come back out of order, its batch. ``__next__`` returns
task ``rcvd_idx`` as soon as it is there, skipping tasks of workers whose iterable dataset
ended. Batches travel pickled, the worker pickling them itself so an unpicklable batch
becomes an error here instead of a hang.

Tasks go out and results come back through two pipes per worker (NOTE [worker pipes]),
each message framed with its length (``_wire.frame``, its tensors' data as raw buffers:
NOTE [batches as buffers]), so one read takes all that a pipe holds; in order, only the
pipe of the worker whose batch is due is waited on (NOTE [waiting on one worker]). Every
``STATUS_CHECK_INTERVAL`` seconds of waiting the main process checks that its workers live
and raises naming any that died; ``timeout`` bounds the wait for one batch. Workers stop
when the iterator is exhausted (unless persistent), deleted, or garbage collected at exit.
"""

from __future__ import annotations

import collections
import itertools
import math
import multiprocessing as mp
import os
import select
import time
from multiprocessing.connection import wait
from typing import Any

from ember.utils.data._wire import READ_CHUNK, frame_plain, unframe
from ember.utils.data._worker import (
    ExceptionWrapper,
    IterableDatasetStopIteration,
    ResumeIteration,
    worker_loop,
)

__all__ = ["MultiProcessingIter"]

#: seconds between the main process's checks, while it waits for a batch, that its workers live
STATUS_CHECK_INTERVAL = 1.0
#: seconds the workers get, together, to exit after being asked before they are terminated
#: (one still inside a slow ``__getitem__`` would otherwise hold up the main process)
JOIN_TIMEOUT = 1.0


def _context(ctx: Any) -> Any:
    if ctx is None:
        return mp.get_context()
    if isinstance(ctx, str):
        if ctx not in mp.get_all_start_methods():
            raise ValueError(
                "multiprocessing_context option should specify a valid start method in "
                f"{mp.get_all_start_methods()!r}, but got multiprocessing_context={ctx!r}"
            )
        return mp.get_context(ctx)
    if not isinstance(ctx, mp.context.BaseContext):
        raise TypeError(
            "multiprocessing_context option should be a valid context object or a string "
            f"specifying the start method, but got multiprocessing_context={ctx}"
        )
    return ctx


class MultiProcessingIter:
    """An iterator over ``loader``'s batches, loaded by ``loader.num_workers`` processes."""

    def __init__(self, loader: Any, base_seed: int) -> None:
        self._loader = loader
        self._num_workers = loader.num_workers
        self._iterable = loader._iterable
        self._in_order = loader.in_order
        self._prefetch = loader.prefetch_factor
        self._persistent = loader.persistent_workers
        self._timeout = loader.timeout
        self._shutdown = True  # until every worker has started
        self._owner = os.getpid()  # a forked worker inherits this object: it must not act on it
        ctx = _context(loader.multiprocessing_context)
        self._done_event = ctx.Event()
        self._index_queues: list[Any] = []
        self._workers: list[Any] = []
        # NOTE [worker pipes]: each worker reads its tasks from a pipe of its own and sends
        # its pickled results down another, which the main process waits on with
        # connection.wait. multiprocessing Queues (PyTorch's) cost a feeder thread per queue
        # and a lock per batch; on two cores their thread switches cost more than loading a
        # small batch (benchmarks/data.py). The main process writes tasks without blocking:
        # what a full pipe does not take waits in _pending and is written while the main
        # process waits for results, so a worker blocked sending a large batch and the main
        # process sending it a large task cannot wait on each other
        self._readers: list[Any] = []
        # one poll object for the epoch's lifetime, where the platform has poll:
        # connection.wait builds and fills a selector on every call, which costs more than
        # receiving a small batch (None: connection.wait it is)
        self._poller = select.poll() if hasattr(select, "poll") else None
        self._fd_worker: dict[int, int] = {}
        #: per worker, a poll object for its result pipe alone, and the worker whose batch
        #: ``__next__`` waits for (None: any), NOTE [waiting on one worker]
        self._worker_pollers: list[Any] = []
        self._want: int | None = None
        self._task_fds: list[int] = []
        self._pending: list[bytearray] = []
        #: per worker, the bytes read from its result pipe that do not make a whole message yet
        self._rbufs: list[bytearray] = []
        #: (worker id, (task index, data)) as they came, not yet handed on
        self._received: collections.deque[tuple[int, Any]] = collections.deque()
        #: per worker, the ResumeIteration answers still to come: a pass restarted before
        #: the last restart's answers came has two in flight, and only the last one's
        #: answer ends the skipping of that worker's results
        self._resuming: collections.Counter[int] = collections.Counter()
        auto_collation = loader.batch_sampler is not None or (
            self._iterable and loader.batch_size is not None
        )
        for worker_id in range(self._num_workers):
            index_queue, task_writer = ctx.Pipe(duplex=False)
            reader, writer = ctx.Pipe(duplex=False)
            w = ctx.Process(
                target=worker_loop,
                args=(
                    loader.dataset, self._iterable, auto_collation, loader.collate_fn,
                    loader.batch_size, loader.drop_last, index_queue, writer,
                    self._done_event, base_seed, loader.worker_init_fn, worker_id,
                    self._num_workers,
                ),
                daemon=True,
            )  # fmt: skip
            w.start()
            writer.close()  # the worker's ends: closed here, so its exit reads as EOF
            index_queue.close()
            os.set_blocking(task_writer.fileno(), False)
            self._index_queues.append(task_writer)
            self._task_fds.append(task_writer.fileno())
            self._pending.append(bytearray())
            self._workers.append(w)
            os.set_blocking(reader.fileno(), False)
            self._readers.append(reader)
            self._rbufs.append(bytearray())
            if self._poller is not None:
                self._poller.register(reader.fileno(), select.POLLIN)
                self._worker_pollers.append(select.poll())
                self._worker_pollers[-1].register(reader.fileno(), select.POLLIN)
                self._fd_worker[reader.fileno()] = worker_id
        self._shutdown = False
        self._reset(first=True)

    # ------------------------------------------------------------------ tasks

    def _reset(self, first: bool = False) -> None:
        """Start an epoch: a fresh pass of the sampler, every worker live, tasks prefetched."""
        loader = self._loader
        if self._iterable:
            self._sampler_iter: Any = itertools.repeat(None)
        elif loader.batch_sampler is not None:
            self._sampler_iter = iter(loader.batch_sampler)
        else:
            self._sampler_iter = iter(loader.sampler)
        self._send_idx = 0
        self._rcvd_idx = 0
        self._task_info: dict[int, tuple[Any, ...]] = {}
        self._workers_live = [True] * self._num_workers
        self._worker_cycle = itertools.cycle(range(self._num_workers))
        if not first:
            # persistent workers: restart each one's fetcher. PyTorch waits for every
            # worker's answer before sending the new pass's tasks; a worker's pipe keeps its
            # messages in order, so ember sends them at once and drops what a worker sent
            # before its answer (a result of the last pass nobody asked for any more)
            for worker_id in range(self._num_workers):
                self._send(worker_id, ResumeIteration(), flush=False)
            self._resuming.update(range(self._num_workers))
        # the pass's first tasks go out in one write per worker: a write that wakes a
        # waiting worker costs the main process several times what the write itself does
        for _ in range(self._prefetch * self._num_workers):
            self._try_put_index(flush=False)
        self._flush_all()

    def _try_put_index(self, flush: bool = True) -> None:
        try:
            index = next(self._sampler_iter)
        except StopIteration:
            return
        for _ in range(self._num_workers):
            worker_id = next(self._worker_cycle)
            if self._workers_live[worker_id]:
                break
        else:
            return  # every worker's iterable dataset has ended
        self._send(worker_id, (self._send_idx, index), flush)
        self._task_info[self._send_idx] = (worker_id,)
        self._send_idx += 1

    def _send(self, worker_id: int, task: Any, flush: bool = True) -> None:
        """Queue ``task`` for a worker and (if ``flush``) write what its pipe takes now
        (NOTE [worker pipes])."""
        self._pending[worker_id] += frame_plain(task)
        if flush:
            self._flush(worker_id)

    def _flush(self, worker_id: int) -> bool:
        """Write a worker's pending tasks as far as its pipe takes them; True when all went."""
        pending = self._pending[worker_id]
        while pending:
            try:
                n = os.write(self._task_fds[worker_id], pending)
            except BlockingIOError:
                return False
            except OSError:  # the worker is gone: the liveness check reports it
                pending.clear()
                return True
            del pending[:n]
        return True

    def _flush_all(self) -> bool:
        return all([self._flush(w) for w in range(self._num_workers)])

    # ------------------------------------------------------------------ results

    def _try_get_data(self, timeout: float) -> tuple[bool, Any]:
        if not self._received:
            if not self._flush_all():  # tasks still to write: look again soon
                timeout = min(timeout, 0.005)
            for worker_id in self._ready(timeout):
                self._drain(worker_id)
        if not self._received:
            dead = [w for w, live in zip(self._workers, self._workers_live, strict=True)
                    if live and not w.is_alive()]  # fmt: skip
            if dead:
                pids = ", ".join(str(w.pid) for w in dead)
                self._shutdown_workers()
                raise RuntimeError(
                    f"DataLoader worker (pid(s) {pids}) exited unexpectedly (exit codes "
                    f"{[w.exitcode for w in dead]}); run with num_workers=0 to see the error "
                    "in the main process"
                ) from None
            return False, None
        return True, self._received.popleft()

    def _ready(self, timeout: float) -> list[int]:
        """The workers whose result pipes have something to read (or were closed), waiting
        up to ``timeout`` seconds for one."""
        if self._poller is None:
            live = [r for r in self._readers if not r.closed]
            return [self._readers.index(r) for r in wait(live, timeout)]
        want, ms = self._want, math.ceil(timeout * 1000)
        if want is not None and not self._readers[want].closed:
            return [want] if self._worker_pollers[want].poll(ms) else []
        return [self._fd_worker[fd] for fd, _ in self._poller.poll(ms)]

    def _drain(self, worker_id: int, keep: bool = True) -> None:
        """Read all that a worker's result pipe holds, in as few reads as it takes, and
        queue each whole message in it (NOTE [worker pipes]); drop it all if not ``keep``
        (shutting down, the reads only keep a worker from blocking on a full pipe)."""
        r, buf = self._readers[worker_id], self._rbufs[worker_id]
        if r.closed:
            return
        while True:
            try:
                chunk = os.read(r.fileno(), READ_CHUNK)
            except BlockingIOError:
                break
            except OSError:
                chunk = b""
            if not chunk:  # that worker exited: only the liveness check can tell why
                self._close_reader(worker_id)
                break
            buf += chunk
            if len(chunk) < READ_CHUNK:
                break
        if not keep:
            buf.clear()
            return
        self._received.extend((worker_id, got) for got in unframe(buf))

    def _close_reader(self, worker_id: int) -> None:
        r = self._readers[worker_id]
        if r.closed:
            return
        if self._poller is not None:
            self._poller.unregister(r.fileno())
        r.close()

    def _next_received(self, timeout: float) -> tuple[bool, Any]:
        """The next result of this pass, skipping what a resuming worker sent before its
        answer (NOTE [worker pipes])."""
        while True:
            ok, got = self._try_get_data(timeout)
            if not ok:
                return False, None
            worker_id, (idx, data) = got
            if not self._resuming:
                return True, (idx, data)
            if isinstance(data, ResumeIteration):
                self._resuming[worker_id] -= 1
                if self._resuming[worker_id] <= 0:
                    del self._resuming[worker_id]
            elif worker_id not in self._resuming:
                return True, (idx, data)

    def _waited(self, timeout: float) -> tuple[bool, Any]:
        """``_try_get_data`` over ``timeout`` seconds, however often pending tasks cut its
        waits short."""
        deadline = time.monotonic() + timeout
        while True:
            ok, data = self._next_received(max(0.0, deadline - time.monotonic()))
            if ok or time.monotonic() >= deadline:
                return ok, data

    def _get_data(self) -> tuple[Any, Any]:
        if self._received and not self._resuming:  # read already: _try_get_data's answer
            return self._received.popleft()[1]
        if self._timeout > 0:
            ok, data = self._waited(self._timeout)
            if not ok:
                raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds")
            return data
        while True:
            ok, data = self._waited(STATUS_CHECK_INTERVAL)
            if ok:
                return data

    def __iter__(self) -> MultiProcessingIter:
        return self

    def __next__(self) -> Any:
        while True:
            while self._rcvd_idx < self._send_idx:
                info = self._task_info.get(self._rcvd_idx)
                if info is not None and (len(info) == 2 or self._workers_live[info[0]]):
                    break
                # returned already (in_order=False), or its worker's dataset ended: skip
                self._task_info.pop(self._rcvd_idx, None)
                self._rcvd_idx += 1
            else:
                if not self._persistent:
                    self._shutdown_workers()
                raise StopIteration
            info = self._task_info[self._rcvd_idx]
            if len(info) == 2:  # it came back earlier, out of order
                del self._task_info[self._rcvd_idx]
                self._rcvd_idx += 1
                return self._process(info[1])
            if self._shutdown:
                raise StopIteration
            # NOTE [waiting on one worker]: in order, only the batch of task rcvd_idx can be
            # handed on, so only its worker's pipe is waited on; a batch another worker
            # finishes meanwhile waits in that worker's pipe (it has room for the batches
            # prefetched) instead of waking this process once for itself and again for
            # the batch it wants. Each wake-up costs a context switch, which on two cores
            # costs the workers more than reading the batches together later
            self._want = info[0] if self._in_order else None
            idx, data = self._get_data()
            if isinstance(data, IterableDatasetStopIteration):
                self._workers_live[data.worker_id] = False
                if not self._persistent:
                    self._send(data.worker_id, None)
                self._try_put_index()
                continue
            if idx != self._rcvd_idx:
                if self._in_order:
                    self._task_info[idx] += (data,)
                    continue
                del self._task_info[idx]
                return self._process(data)
            del self._task_info[idx]
            self._rcvd_idx += 1
            return self._process(data)

    def _process(self, data: Any) -> Any:
        self._try_put_index()
        if isinstance(data, ExceptionWrapper):
            data.reraise()
        return data

    # ------------------------------------------------------------------ shutdown

    def _shutdown_workers(self) -> None:
        if self._shutdown or os.getpid() != self._owner:
            return
        self._shutdown = True
        self._want = None  # drain every worker's pipe
        self._done_event.set()
        for worker_id in range(self._num_workers):
            self._send(worker_id, None)
        deadline = time.monotonic() + JOIN_TIMEOUT
        while time.monotonic() < deadline and any(w.is_alive() for w in self._workers):
            self._flush_all()
            # read what the workers still send, so none stays blocked on a full pipe
            for worker_id in self._ready(0.01):
                self._drain(worker_id, keep=False)
        for q in self._index_queues:
            q.close()
        for w in self._workers:
            if w.is_alive():
                w.terminate()
            w.join(timeout=max(0.0, deadline - time.monotonic()))
        for worker_id in range(self._num_workers):
            self._close_reader(worker_id)
        self._received.clear()

    def __del__(self) -> None:
        try:
            self._shutdown_workers()
        except Exception:  # at interpreter exit the queues may already be gone
            pass

    def __len__(self) -> int:
        return len(self._loader)
