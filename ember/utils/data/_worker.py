"""The loop a ``DataLoader`` worker process runs, and what it knows about itself
(``get_worker_info``), as ``torch.utils.data._utils.worker``.

A worker takes ``(task index, sample indices)`` from its index queue, fetches and collates
the batch, and sends ``(task index, batch)`` down its result pipe; an exception is sent
back wrapped (``ExceptionWrapper``) and re-raised in the main process naming the worker.
"""

from __future__ import annotations

import collections
import io
import os
import pickle
import random
import select
import struct
import sys
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

import ember
from ember._tensor import Tensor, wrap
from ember._tensor_pickle import INTERNAL

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


#: a message's header on a worker pipe: the length in bytes of what follows the first
#: eight, and how many raw buffers follow the pickle (NOTE [batches as buffers])
HEAD = struct.Struct("!QI")
#: the length of one raw buffer, after the header
SIZE = struct.Struct("!Q")
#: bytes one ``os.read`` takes from a pipe at most: what a Linux pipe holds, and under the
#: size at which malloc maps fresh pages for the buffer (which costs more than the read)
READ_CHUNK = 1 << 16


def _rebuild_from_buffer(buf: Any, dtype: str, shape: tuple[int, ...]) -> Tensor:
    """A tensor over the bytes of ``buf`` (what ``_BatchPickler`` sent out of band)."""
    return wrap(np.frombuffer(buf, dtype).reshape(shape))


class _BatchPickler(pickle.Pickler):
    """A pickler sending the data of each plain, contiguous tensor out of band (NOTE
    [batches as buffers]); any other object pickles as ``pickle.dumps`` pickles it."""

    def reducer_override(self, obj: Any) -> Any:
        if type(obj) is Tensor and not obj.requires_grad and not obj.__dict__.keys() - INTERNAL:
            a = obj._edata
            if type(a) is np.ndarray and a.dtype.kind in "biufc" and a.flags.c_contiguous:
                return _rebuild_from_buffer, (pickle.PickleBuffer(a), a.dtype.str, a.shape)
        return NotImplemented


def frame(obj: Any) -> bytes:
    """``obj`` (a batch, or anything with tensors in it) as one message on a worker pipe.

    # NOTE [batches as buffers]
    A message is its header (the length of the rest, the number ``k`` of raw buffers), the
    ``k`` buffers' lengths, the pickle, then the buffers: the bytes of each plain contiguous
    tensor in ``obj``, which the pickle names by position (pickle protocol 5's out-of-band
    buffers). Pickling a tensor's array in band costs more than the pickler this takes
    (NumPy pickles its dtype and calls back into Python for each array): a batch of the
    demo's digits pickles in about half the time. A message without tensors (a task, a
    marker) is ``frame_plain``'s, a plain pickle with ``k = 0``.

    >>> from ember.utils.data._worker import frame, unframe
    >>> buf = bytearray(frame((0, ember.arange(3))))
    >>> unframe(buf)
    [(0, tensor([0, 1, 2]))]
    """
    out = io.BytesIO()
    buffers: list[pickle.PickleBuffer] = []
    _BatchPickler(out, protocol=5, buffer_callback=buffers.append).dump(obj)
    if not buffers:
        return HEAD.pack(out.tell() + 4, 0) + out.getbuffer()
    raws = [b.raw() for b in buffers]
    sizes = b"".join(SIZE.pack(r.nbytes) for r in raws)
    n = 4 + len(sizes) + out.tell() + sum(r.nbytes for r in raws)
    return b"".join([HEAD.pack(n, len(raws)), sizes, out.getbuffer(), *raws])


def frame_plain(obj: Any) -> bytes:
    """``obj`` as a message of no raw buffers: a plain pickle (a task or a marker, whose
    pickling ``frame``'s pickler would only slow down).

    >>> from ember.utils.data._worker import frame_plain, unframe
    >>> unframe(bytearray(frame_plain((3, [0, 1]))))
    [(3, [0, 1])]
    """
    payload = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    return HEAD.pack(len(payload) + 4, 0) + payload


def unframe(buf: bytearray) -> list[Any]:
    """Unpickle every whole message at the front of ``buf`` and remove them from it; an
    unfinished message stays for the next read (NOTE [worker pipes])."""
    out: list[Any] = []
    off, end = 0, len(buf)
    with memoryview(buf) as view:
        while end - off >= HEAD.size:
            n, k = HEAD.unpack_from(view, off)
            stop = off + 8 + n
            if stop > end:
                break
            at = off + HEAD.size
            if not k:
                with view[at:stop] as payload:
                    out.append(pickle.loads(payload))
                off = stop
                continue
            sizes = [SIZE.unpack_from(view, at + i * SIZE.size)[0] for i in range(k)]
            at += k * SIZE.size
            first = stop - sum(sizes)
            buffers = []
            for size in sizes:  # copied out: the tensors outlive this read buffer
                buffers.append(bytearray(view[first : first + size]))
                first += size
            with view[at : stop - sum(sizes)] as payload:
                out.append(pickle.loads(payload, buffers=buffers))
            off = stop
    del buf[:off]
    return out


def write_all(fd: int, data: bytes) -> None:
    """Write all of ``data`` to the blocking file descriptor ``fd``."""
    with memoryview(data) as view:
        while view:
            n = os.write(fd, view)
            view = view[n:]


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
