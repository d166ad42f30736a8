"""The main-process side of ``DataLoader(num_workers > 0)``: starts the worker processes,
hands them tasks round-robin, keeps ``prefetch_factor`` tasks per worker in flight, and
yields the batches in sampler order (or as they come, with ``in_order=False``).

# NOTE [DataLoader workers]
As PyTorch's ``_MultiProcessingDataLoaderIter``. Each worker has its own index queue; all
share one result queue. Task ``i`` goes to the next live worker in turn; ``task_info[i]``
holds its worker and, once it has come back out of order, its batch. ``__next__`` returns
task ``rcvd_idx`` as soon as it is there, skipping tasks of workers whose iterable dataset
ended. Batches travel pickled (a tensor pickles as its NumPy array), the worker pickling
them itself so an unpicklable batch becomes an error here instead of a hang. Every
``STATUS_CHECK_INTERVAL`` seconds of waiting the main process checks that its workers live
and raises naming any that died; ``timeout`` bounds the wait for one batch. Workers stop
when the iterator is exhausted (unless persistent), deleted, or garbage collected at exit.
"""

from __future__ import annotations

import itertools
import multiprocessing as mp
import os
import pickle
import queue
import time
from typing import Any

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
        self._result_queue = ctx.Queue()
        self._done_event = ctx.Event()
        self._index_queues: list[Any] = []
        self._workers: list[Any] = []
        auto_collation = loader.batch_sampler is not None or (
            self._iterable and loader.batch_size is not None
        )
        for worker_id in range(self._num_workers):
            index_queue = ctx.Queue()
            index_queue.cancel_join_thread()  # never block exit on tasks no worker will read
            w = ctx.Process(
                target=worker_loop,
                args=(
                    loader.dataset, self._iterable, auto_collation, loader.collate_fn,
                    loader.batch_size, loader.drop_last, index_queue, self._result_queue,
                    self._done_event, base_seed, loader.worker_init_fn, worker_id,
                    self._num_workers,
                ),
                daemon=True,
            )  # fmt: skip
            w.start()
            self._index_queues.append(index_queue)
            self._workers.append(w)
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
        if not first:  # persistent workers: restart each one's fetcher, and wait for them
            for q in self._index_queues:
                q.put(ResumeIteration())
            acks = 0
            while acks < self._num_workers:
                _, data = self._get_data()
                if isinstance(data, ResumeIteration):
                    acks += 1
        for _ in range(self._prefetch * self._num_workers):
            self._try_put_index()

    def _try_put_index(self) -> None:
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
        self._index_queues[worker_id].put((self._send_idx, index))
        self._task_info[self._send_idx] = (worker_id,)
        self._send_idx += 1

    # ------------------------------------------------------------------ results

    def _try_get_data(self, timeout: float) -> tuple[bool, Any]:
        try:
            idx, payload = self._result_queue.get(timeout=timeout)
        except queue.Empty:
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
        if payload is None or isinstance(idx, ResumeIteration):
            return True, (idx, idx)
        return True, (idx, pickle.loads(payload))

    def _get_data(self) -> tuple[Any, Any]:
        if self._timeout > 0:
            ok, data = self._try_get_data(self._timeout)
            if not ok:
                raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds")
            return data
        while True:
            ok, data = self._try_get_data(STATUS_CHECK_INTERVAL)
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
            idx, data = self._get_data()
            if isinstance(data, IterableDatasetStopIteration):
                self._workers_live[data.worker_id] = False
                if not self._persistent:
                    self._index_queues[data.worker_id].put(None)
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
        self._done_event.set()
        for q in self._index_queues:
            try:
                q.put(None)
            except (ValueError, OSError):  # already closed
                pass
        deadline = time.monotonic() + JOIN_TIMEOUT
        for w in self._workers:
            w.join(timeout=max(0.0, deadline - time.monotonic()))
        for q in self._index_queues:
            q.cancel_join_thread()
            q.close()
        for w in self._workers:
            if w.is_alive():
                w.terminate()
        self._result_queue.cancel_join_thread()
        self._result_queue.close()

    def __del__(self) -> None:
        try:
            self._shutdown_workers()
        except Exception:  # at interpreter exit the queues may already be gone
            pass

    def __len__(self) -> int:
        return len(self._loader)
