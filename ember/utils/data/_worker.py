"""The loop a ``DataLoader`` worker process runs, and what it knows about itself
(``get_worker_info``), as ``torch.utils.data._utils.worker``.

A worker takes ``(task index, sample indices)`` from its index queue, fetches and collates
the batch, and sends ``(task index, batch)`` down its result pipe; an exception is sent
back wrapped (``ExceptionWrapper``) and re-raised in the main process naming the worker.
"""

from __future__ import annotations

import collections
import os
import random
import select
import sys
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

import ember
from ember.utils.data._wire import READ_CHUNK, frame, frame_plain, unframe, write_all

__all__ = ["ExceptionWrapper", "WorkerInfo", "get_worker_info"]

#: seconds between a waiting worker's (or main process's) checks that its peer is alive
STATUS_CHECK_INTERVAL = 5.0


class WorkerInfo:
    """Which worker this process is: ``id``, ``num_workers``, ``seed`` and its copy of
    ``dataset`` (read-only once made).

    >>> from ember.utils.data._worker import WorkerInfo
    >>> WorkerInfo(id=0, num_workers=2, seed=7, dataset=None)
    WorkerInfo(id=0, num_workers=2, seed=7, dataset=None)
    """

    id: int
    num_workers: int
    seed: int
    dataset: Any

    def __init__(self, **kwargs: Any) -> None:
        for k, v in kwargs.items():
            object.__setattr__(self, k, v)
        object.__setattr__(self, "_keys", tuple(kwargs))

    def __setattr__(self, key: str, val: Any) -> None:
        raise RuntimeError(f"Cannot assign attributes to {type(self).__name__} objects")

    def __repr__(self) -> str:
        fields = ", ".join(f"{k}={getattr(self, k)!r}" for k in self._keys)  # type: ignore[attr-defined]
        return f"{type(self).__name__}({fields})"


_worker_info: WorkerInfo | None = None


def get_worker_info() -> WorkerInfo | None:
    """In a ``DataLoader`` worker process, its ``WorkerInfo``; in the main process, None.

    >>> ember.utils.data.get_worker_info() is None
    True
    """
    return _worker_info


class ExceptionWrapper:
    """An exception caught in a worker, carried to the main process as its type and its
    formatted traceback, and re-raised there by ``reraise()``.

    >>> from ember.utils.data._worker import ExceptionWrapper
    >>> try:
    ...     raise ValueError("bad sample")
    ... except ValueError:
    ...     w = ExceptionWrapper(where="in DataLoader worker process 0")
    >>> w.exc_type.__name__
    'ValueError'
    """

    def __init__(self, exc_info: Any = None, where: str = "in background") -> None:
        if exc_info is None:
            exc_info = sys.exc_info()
        self.exc_type = exc_info[0]
        self.exc_msg = "".join(traceback.format_exception(*exc_info))
        self.where = where

    def reraise(self) -> None:
        """Raise the worker's exception again, its message naming the worker and holding
        the worker's traceback (a ``RuntimeError`` if the type needs other arguments)."""
        msg = f"Caught {self.exc_type.__name__} {self.where}.\nOriginal {self.exc_msg}"
        if self.exc_type is KeyError:  # KeyError reprs its message: keep the newlines
            msg = _KeyErrorMessage(msg)
        try:
            exception = self.exc_type(msg)
        except Exception:
            raise RuntimeError(msg) from None
        raise exception


class _KeyErrorMessage(str):
    def __repr__(self) -> str:
        return str(self)


@dataclass
class ResumeIteration:
    """Sent to a persistent worker at a new epoch: it starts its dataset iterator afresh
    and echoes this marker back."""


@dataclass
class IterableDatasetStopIteration:
    """What a worker sends when its copy of an ``IterableDataset`` is exhausted."""

    worker_id: int


class Fetcher:
    """Turns one task's indices into one batch: ``collate([dataset[i] for i in indices])``
    for a map-style dataset, the next ``batch_size`` items for an iterable one."""

    def __init__(
        self,
        dataset: Any,
        iterable: bool,
        auto_collation: bool,
        collate_fn: Callable[[Any], Any],
        batch_size: int | None,
        drop_last: bool,
    ) -> None:
        self.dataset, self.collate_fn = dataset, collate_fn
        self.auto_collation, self.batch_size, self.drop_last = auto_collation, batch_size, drop_last
        self.iterator: Iterator[Any] | None = iter(dataset) if iterable else None
        self.ended = False

    def fetch(self, index: Any) -> Any:
        if self.iterator is None:
            if self.auto_collation:
                getitems = getattr(self.dataset, "__getitems__", None)
                data = getitems(index) if getitems else [self.dataset[i] for i in index]
                return self.collate_fn(data)
            return self.collate_fn(self.dataset[index])
        if self.ended:
            raise StopIteration
        if not self.auto_collation:
            return self.collate_fn(next(self.iterator))
        data = []
        for _ in range(self.batch_size):  # type: ignore[arg-type]
            try:
                data.append(next(self.iterator))
            except StopIteration:
                self.ended = True
                break
        if not data or (self.drop_last and len(data) < self.batch_size):  # type: ignore[operator]
            raise StopIteration
        return self.collate_fn(data)


def generate_numpy_seed(base_seed: int, worker_id: int) -> list[int]:
    """The four 32-bit words seeding NumPy's legacy global RNG in worker ``worker_id``:
    a ``SeedSequence`` over the worker id and the two halves of the base seed (the same
    words PyTorch's workers use, so scripts seeding through it see the same streams).

    >>> from ember.utils.data._worker import generate_numpy_seed
    >>> len(generate_numpy_seed(12345, 0))
    4
    """
    entropy = [worker_id, base_seed & 0xFFFFFFFF, base_seed >> 32]
    return np.random.SeedSequence(entropy).generate_state(4).tolist()


def _framed(idx: Any, data: Any, where: str) -> bytes:
    """``(idx, data)`` as a message (``frame``), a batch that cannot be pickled replaced by
    the error, which the main process re-raises (instead of waiting for the batch forever)."""
    try:
        return frame((idx, data))
    except Exception:
        wrapped = ExceptionWrapper(where=where)
    try:
        return frame((idx, wrapped))
    except Exception:  # the exception's own type cannot be pickled (a local class)
        wrapped.exc_type = RuntimeError
        return frame((idx, wrapped))


def seed_worker(base_seed: int, worker_id: int) -> int:
    """Seed Python's, NumPy's and ember's global RNGs in a worker; return ember's seed."""
    seed = base_seed + worker_id
    random.seed(seed)
    ember.manual_seed(seed)
    np.random.seed(np.array(generate_numpy_seed(base_seed, worker_id), dtype=np.uint32))
    return seed


def worker_loop(
    dataset: Any,
    iterable: bool,
    auto_collation: bool,
    collate_fn: Callable[[Any], Any],
    batch_size: int | None,
    drop_last: bool,
    index_queue: Any,
    result_pipe: Any,
    done_event: Any,
    base_seed: int,
    init_fn: Callable[[int], None] | None,
    worker_id: int,
    num_workers: int,
) -> None:
    """The body of worker process ``worker_id`` (see the module docstring)."""
    global _worker_info
    try:
        seed = seed_worker(base_seed, worker_id)
        _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed, dataset=dataset)
        where = f"in DataLoader worker process {worker_id}"
        init_error: ExceptionWrapper | None = None
        fetcher: Fetcher | None = None
        try:
            if init_fn is not None:
                init_fn(worker_id)
            fetcher = Fetcher(dataset, iterable, auto_collation, collate_fn, batch_size, drop_last)
        except Exception:
            init_error = ExceptionWrapper(where=where)
        parent = os.getppid()
        iteration_end = False
        task_fd, result_fd = index_queue.fileno(), result_pipe.fileno()
        waiter = select.poll()
        waiter.register(task_fd, select.POLLIN)
        inbox: collections.deque[Any] = collections.deque()
        buf = bytearray()
        while True:
            if not inbox:
                # every task this pipe holds in one read (NOTE [worker pipes])
                if not waiter.poll(STATUS_CHECK_INTERVAL * 1000):
                    if os.getppid() != parent:  # the main process died: nobody will ask
                        break
                    continue
                chunk = os.read(task_fd, READ_CHUNK)
                if not chunk:  # the main process closed its end
                    break
                buf += chunk
                inbox.extend(unframe(buf))
                continue
            task = inbox.popleft()
            if isinstance(task, ResumeIteration):
                write_all(result_fd, frame_plain((task, task)))
                iteration_end = False
                if init_error is None:
                    fetcher = Fetcher(
                        dataset, iterable, auto_collation, collate_fn, batch_size, drop_last
                    )
                continue
            if task is None:  # the main process asks this worker to exit
                break
            if done_event.is_set() or iteration_end:
                continue
            idx, index = task
            data: Any
            if init_error is not None:
                data, init_error = init_error, None
            else:
                try:
                    data = fetcher.fetch(index)  # type: ignore[union-attr]
                except StopIteration:
                    if not iterable:
                        data = ExceptionWrapper(where=where)
                    else:
                        data = IterableDatasetStopIteration(worker_id)
                        iteration_end = True
                except Exception:
                    data = ExceptionWrapper(where=where)
            write_all(result_fd, _framed(idx, data, where))
            del data, index, task  # free the batch before waiting for the next task
    except KeyboardInterrupt:  # the main process handles Ctrl-C; a worker just stops
        pass
    except (BrokenPipeError, EOFError):  # the main process closed its end: nobody reads
        pass
    result_pipe.close()
