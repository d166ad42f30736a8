"""``DataLoader``: batches of samples from a dataset, in order or shuffled, collated into
tensors; plus the samplers it draws indices from and ``default_collate``.

With ``num_workers=0`` loading runs in the calling process; with more, in that many worker
processes (see NOTE [DataLoader workers] in ``_multiprocessing_iter.py``).
"""

from __future__ import annotations

import collections.abc as abc
import itertools
import math
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

import ember
from ember._tensor import Tensor
from ember.random import Generator
from ember.utils.data.dataset import IterableDataset, permutation

if TYPE_CHECKING:
    from ember.utils.data._multiprocessing_iter import MultiProcessingIter

__all__ = [
    "BatchSampler",
    "DataLoader",
    "RandomSampler",
    "Sampler",
    "SequentialSampler",
    "default_collate",
    "default_convert",
]


class Sampler:
    """An iterable of dataset indices (subclasses define ``__iter__`` and ``__len__``)."""

    def __iter__(self) -> Iterator[Any]:
        raise NotImplementedError(f"{type(self).__name__} does not implement __iter__")


class SequentialSampler(Sampler):
    """Indices ``0, 1, ..., len(data_source) - 1``.

    >>> list(ember.utils.data.SequentialSampler(range(3)))
    [0, 1, 2]
    """

    def __init__(self, data_source: Any) -> None:
        self.data_source = data_source

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


def check_num_samples(num_samples: Any) -> None:
    """A sampler's ``num_samples`` is a positive int (not a bool), as PyTorch's samplers
    require (``RandomSampler``, ``WeightedRandomSampler``)."""
    if isinstance(num_samples, bool) or not isinstance(num_samples, int) or num_samples <= 0:
        raise ValueError(
            f"num_samples should be a positive integer value, but got num_samples={num_samples}"
        )


class RandomSampler(Sampler):
    """A fresh random permutation of the indices on every pass (or ``num_samples`` indices,
    with ``replacement`` or as permutations cut short), drawn from ``generator`` (or, if
    None, from a generator seeded off the default one).

    >>> g = ember.Generator().manual_seed(0)
    >>> sorted(ember.utils.data.RandomSampler(range(4), generator=g))
    [0, 1, 2, 3]
    """

    def __init__(
        self,
        data_source: Any,
        replacement: bool = False,
        num_samples: int | None = None,
        generator: Generator | None = None,
    ) -> None:
        if not isinstance(replacement, bool):
            raise TypeError(
                f"replacement should be a boolean value, but got replacement={replacement}"
            )
        if num_samples is not None:
            check_num_samples(num_samples)
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator

    @property
    def num_samples(self) -> int:
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self) -> Iterator[int]:
        # a generator function, as PyTorch's: nothing is drawn until the first index is
        # asked for (a DataLoader draws its base seed first, from the same generator)
        gen = self.generator
        if gen is None:
            seed = int(ember.empty((), dtype=ember.int64).random_().item())
            gen = Generator().manual_seed(seed)
        n, k = len(self.data_source), self.num_samples
        if self.replacement:  # in draws of 32, as PyTorch's
            for _ in range(k // 32):
                yield from ember.randint(0, n, (32,), generator=gen).tolist()
            yield from ember.randint(0, n, (k % 32,), generator=gen).tolist()
            return
        # without replacement: whole permutations, then the start of one more, drawn even
        # when none of it is used (k a multiple of n), as PyTorch's: the generator moves
        # as it does there
        for _ in range(k // n):
            yield from permutation(n, gen).tolist()
        yield from permutation(n, gen).tolist()[: k % n]

    def __len__(self) -> int:
        return self.num_samples


class BatchSampler(Sampler):
    """Group the indices of ``sampler`` into lists of ``batch_size`` (the last one may be
    shorter unless ``drop_last``).

    >>> list(ember.utils.data.BatchSampler(range(5), 2, drop_last=False))
    [[0, 1], [2, 3], [4]]
    """

    def __init__(self, sampler: Iterable[int], batch_size: int, drop_last: bool) -> None:
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size <= 0:
            raise ValueError(
                f"batch_size should be a positive integer value, but got batch_size={batch_size}"
            )
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self) -> Iterator[list[int]]:
        indices, size = iter(self.sampler), self.batch_size
        while batch := list(itertools.islice(indices, size)):  # (the pulls run in C)
            if len(batch) < size and self.drop_last:
                return
            yield batch

    def __len__(self) -> int:
        n = len(self.sampler)  # type: ignore[arg-type]
        return n // self.batch_size if self.drop_last else math.ceil(n / self.batch_size)


# --------------------------------------------------------------------------- collate


def _is_namedtuple(x: Any) -> bool:
    return isinstance(x, tuple) and hasattr(x, "_fields")


def default_collate(batch: Sequence[Any]) -> Any:
    """Stack a list of samples into a batch: tensors, NumPy arrays and numbers become one
    tensor with a new first dimension; dicts, tuples and lists are collated field by field.

    >>> from ember.utils.data.dataloader import default_collate
    >>> default_collate([(ember.zeros(2), 1), (ember.ones(2), 2)])
    [tensor([[0., 0.],
            [1., 1.]]), tensor([1, 2])]
    """
    elem = batch[0]
    if isinstance(elem, Tensor):
        return ember.stack(list(batch), 0)
    if isinstance(elem, np.ndarray | np.generic) and not isinstance(elem, np.str_ | np.bytes_):
        if elem.dtype.kind in "OSUV":
            raise TypeError(
                f"default_collate: batch must contain tensors, numpy arrays, numbers, dicts or "
                f"lists; found numpy array of dtype {elem.dtype}"
            )
        return ember.stack([ember.from_numpy(np.asarray(b)) for b in batch], 0)
    if isinstance(elem, float):
        return ember.tensor(list(batch), dtype=ember.float64)
    if isinstance(elem, int):  # bool included: gives a bool tensor
        return ember.tensor(list(batch))
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, abc.Mapping):
        fields = {key: default_collate([d[key] for d in batch]) for key in elem}
        try:
            return type(elem)(fields)
        except TypeError:
            return fields
    if _is_namedtuple(elem):
        return type(elem)(*(default_collate(list(s)) for s in zip(*batch, strict=True)))
    if isinstance(elem, abc.Sequence):
        size = len(elem)
        if any(len(b) != size for b in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        columns = [default_collate(list(s)) for s in zip(*batch, strict=True)]
        if isinstance(elem, tuple):
            return columns  # PyTorch returns a list for tuples
        try:
            return type(elem)(columns)
        except TypeError:
            return columns
    raise TypeError(
        "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; "
        f"found {type(elem)}"
    )


def default_convert(data: Any) -> Any:
    """Turn NumPy arrays inside ``data`` into tensors, leaving everything else (what the
    loader applies to single samples when ``batch_size=None``).

    >>> from ember.utils.data.dataloader import default_convert
    >>> default_convert(np.zeros(2))
    tensor([0., 0.], dtype=ember.float64)
    """
    if isinstance(data, np.ndarray) and data.dtype.kind not in "OSUV":
        return ember.from_numpy(data)
    if isinstance(data, abc.Mapping):
        return type(data)({k: default_convert(v) for k, v in data.items()})  # type: ignore[call-arg]
    if _is_namedtuple(data):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, abc.Sequence) and not isinstance(data, (str, bytes)):
        return [default_convert(d) for d in data]
    return data


# --------------------------------------------------------------------------- loader


class DataLoader:
    """Iterate over ``dataset`` in batches of ``batch_size`` samples, collated by
    ``collate_fn`` (``default_collate``); ``shuffle=True`` draws a new order each epoch
    from ``generator``.

    >>> ds = ember.utils.data.TensorDataset(ember.arange(5))
    >>> [b[0].tolist() for b in ember.utils.data.DataLoader(ds, batch_size=2)]
    [[0, 1], [2, 3], [4]]
    """

    def __init__(
        self,
        dataset: Any,
        batch_size: int | None = 1,
        shuffle: bool | None = None,
        sampler: Iterable[Any] | None = None,
        batch_sampler: Iterable[list[Any]] | None = None,
        num_workers: int = 0,
        collate_fn: Callable[[list[Any]], Any] | None = None,
        pin_memory: bool = False,
        drop_last: bool = False,
        timeout: float = 0,
        worker_init_fn: Callable[[int], None] | None = None,
        multiprocessing_context: Any = None,
        generator: Generator | None = None,
        *,
        prefetch_factor: int | None = None,
        persistent_workers: bool = False,
        pin_memory_device: str = "",
        in_order: bool = True,
    ) -> None:
        if num_workers < 0:
            raise ValueError(
                "num_workers option should be non-negative; use num_workers=0 to disable "
                "multiprocessing."
            )
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError(
                "prefetch_factor option could only be specified in multiprocessing. let "
                "num_workers > 0 to enable multiprocessing, otherwise set prefetch_factor to None."
            )
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        if prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        iterable = isinstance(dataset, IterableDataset)
        if iterable and (shuffle or sampler is not None or batch_sampler is not None):
            raise ValueError(
                "DataLoader with IterableDataset: expected unspecified shuffle, sampler and "
                f"batch_sampler options, but got shuffle={shuffle}"
            )
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError(
                    "batch_sampler option is mutually exclusive with batch_size, shuffle, "
                    "sampler, and drop_last"
                )
            batch_size = None
            drop_last = False
        elif batch_size is None and drop_last:
            raise ValueError(
                "batch_size=None option disables auto-batching and is mutually exclusive with "
                "drop_last"
            )
        if sampler is None and not iterable:
            sampler = (
                RandomSampler(dataset, generator=generator)
                if shuffle
                else SequentialSampler(dataset)
            )
        if batch_size is not None and batch_sampler is None and not iterable:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)  # type: ignore[arg-type]
        self.dataset = dataset
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.num_workers = num_workers
        self.generator = generator
        self.timeout = timeout
        self.pin_memory = pin_memory
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.prefetch_factor = prefetch_factor
        self.persistent_workers = persistent_workers
        self.in_order = in_order
        self._iterable = iterable
        self._iterator: MultiProcessingIter | None = None
        if collate_fn is None:
            collate_fn = (
                default_collate if batch_size is not None or batch_sampler else default_convert
            )
        self.collate_fn = collate_fn

    def __iter__(self) -> Iterator[Any]:
        if self.num_workers > 0:
            return self._worker_iter()
        self._draw_base_seed()  # drawn without workers too: the generator moves as PyTorch's
        if self._iterable:
            return self._iter_stream()
        dataset, collate = self.dataset, self.collate_fn
        if self.batch_sampler is not None:
            getitems = getattr(dataset, "__getitems__", None)
            if getitems:  # a batch in one call, as PyTorch's fetcher (and ember's workers) do
                return (collate(getitems(batch)) for batch in self.batch_sampler)
            return (collate([dataset[i] for i in batch]) for batch in self.batch_sampler)
        return (collate(dataset[i]) for i in self.sampler)  # type: ignore[union-attr]

    def _worker_iter(self) -> MultiProcessingIter:
        """The batches loaded by worker processes; persistent workers are started once and
        restarted on each later pass."""
        if self.persistent_workers and self._iterator is not None:
            self._iterator._reset()
            return self._iterator
        # deferred: multiprocessing loads when a loader first starts workers
        from ember.utils.data._multiprocessing_iter import MultiProcessingIter

        # the workers' base seed comes from the loader's generator (or the default one),
        # drawn per pass as PyTorch does; workers seed with base_seed + worker_id
        it = MultiProcessingIter(self, self._draw_base_seed())
        if self.persistent_workers:
            self._iterator = it
        return it

    def _draw_base_seed(self) -> int:
        """The base seed of a pass: one int64 ``random_()`` draw from the loader's
        generator (or the default one), made when each pass starts, as PyTorch's
        ``_BaseDataLoaderIter`` does whatever the number of workers."""
        return int(ember.empty((), dtype=ember.int64).random_(generator=self.generator).item())

    def _iter_stream(self) -> Iterator[Any]:
        collate, size = self.collate_fn, self.batch_size
        if size is None:
            yield from (collate(x) for x in self.dataset)
            return
        batch: list[Any] = []
        for x in self.dataset:
            batch.append(x)
            if len(batch) == size:
                yield collate(batch)
                batch = []
        if batch and not self.drop_last:
            yield collate(batch)

    def __len__(self) -> int:
        if self._iterable:
            n = len(self.dataset)
            if self.batch_size is None:
                return n
            return n // self.batch_size if self.drop_last else math.ceil(n / self.batch_size)
        if self.batch_sampler is not None:
            return len(self.batch_sampler)  # type: ignore[arg-type]
        return len(self.sampler)  # type: ignore[arg-type]
