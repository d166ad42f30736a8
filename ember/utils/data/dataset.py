"""Datasets: ``Dataset`` (map-style), ``IterableDataset``, ``TensorDataset``, ``Subset``,
``ConcatDataset``, and ``random_split``."""

from __future__ import annotations

import bisect
import math
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import ember
from ember._tensor import Tensor
from ember.random import Generator, default_generator

__all__ = [
    "ConcatDataset",
    "Dataset",
    "IterableDataset",
    "Subset",
    "TensorDataset",
    "random_split",
    "StackDataset",
    "ChainDataset",
]


class Dataset:
    """A map-style dataset: subclasses define ``__getitem__(index)`` and usually ``__len__``.

    >>> class Squares(ember.utils.data.Dataset):
    ...     def __getitem__(self, i): return i * i
    ...     def __len__(self): return 4
    >>> Squares()[3]
    9
    """

    def __getitem__(self, index: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__} does not implement __getitem__")

    def __add__(self, other: Dataset) -> ConcatDataset:
        return ConcatDataset([self, other])


class IterableDataset(Dataset):
    """A dataset read as a stream: subclasses define ``__iter__``.

    >>> class Count(ember.utils.data.IterableDataset):
    ...     def __iter__(self): return iter(range(3))
    >>> list(Count())
    [0, 1, 2]
    """

    def __iter__(self) -> Iterator[Any]:
        raise NotImplementedError(f"{type(self).__name__} does not implement __iter__")

    def __add__(self, other: Dataset) -> ChainDataset:  # type: ignore[override]
        return ChainDataset([self, other])


class ChainDataset(IterableDataset):
    """Iterable datasets read one after another.

    >>> class Count(ember.utils.data.IterableDataset):
    ...     def __iter__(self): return iter(range(2))
    >>> list(ember.utils.data.ChainDataset([Count(), Count()]))
    [0, 1, 0, 1]
    """

    def __init__(self, datasets: Iterable[Dataset]) -> None:
        self.datasets = datasets

    def __iter__(self) -> Iterator[Any]:
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            yield from d

    def __len__(self) -> int:
        total = 0
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            total += len(d)  # type: ignore[arg-type]
        return total


class TensorDataset(Dataset):
    """Samples are the rows of tensors that share their first dimension.

    >>> ds = ember.utils.data.TensorDataset(ember.zeros(4, 2), ember.arange(4))
    >>> len(ds), ds[1][1]
    (4, tensor(1))
    """

    def __init__(self, *tensors: Tensor) -> None:
        if not tensors:
            raise ValueError("TensorDataset needs at least one tensor")
        n = tensors[0].size(0)
        if any(t.size(0) != n for t in tensors):
            sizes = [t.size(0) for t in tensors]
            raise AssertionError(f"Size mismatch between tensors: first dimensions are {sizes}")
        self.tensors = tensors

    def __getitem__(self, index: Any) -> tuple[Tensor, ...]:
        return tuple(t[index] for t in self.tensors)

    def __len__(self) -> int:
        return self.tensors[0].size(0)


class StackDataset(Dataset):
    """Datasets of one length side by side: sample ``i`` is the tuple (positional datasets)
    or dict (keyword datasets) of their samples ``i``.

    >>> a = ember.utils.data.TensorDataset(ember.arange(3))
    >>> ember.utils.data.StackDataset(x=a, y=a)[1]
    {'x': (tensor(1),), 'y': (tensor(1),)}
    """

    def __init__(self, *args: Dataset, **kwargs: Dataset) -> None:
        if args and kwargs:
            raise ValueError(
                "StackDataset: give the datasets positionally (tuple samples) or by keyword "
                "(dict samples), not both"
            )
        if not args and not kwargs:
            raise ValueError("StackDataset: at least one dataset should be passed")
        self.datasets: Any = args or kwargs
        parts = list(args or kwargs.values())
        self._length = len(parts[0])  # type: ignore[arg-type]
        if any(len(d) != self._length for d in parts):  # type: ignore[arg-type]
            raise ValueError(
                f"StackDataset: size mismatch between datasets: {[len(d) for d in parts]}"  # type: ignore[arg-type]
            )

    def __getitem__(self, index: Any) -> Any:
        if isinstance(self.datasets, dict):
            return {k: d[index] for k, d in self.datasets.items()}
        return tuple(d[index] for d in self.datasets)

    def __getitems__(self, indices: list[Any]) -> list[Any]:
        return [self[i] for i in indices]

    def __len__(self) -> int:
        return self._length


class Subset(Dataset):
    """The samples of ``dataset`` at ``indices``, in that order.

    >>> ember.utils.data.Subset(list(range(10)), [7, 2])[0]
    7
    """

    def __init__(self, dataset: Any, indices: Sequence[int]) -> None:
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, idx: Any) -> Any:
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __len__(self) -> int:
        return len(self.indices)


class ConcatDataset(Dataset):
    """Several map-style datasets one after another.

    >>> len(ember.utils.data.ConcatDataset([[1, 2], [3]]))
    3
    """

    def __init__(self, datasets: Sequence[Any]) -> None:
        self.datasets = list(datasets)
        if not self.datasets:
            raise AssertionError("datasets should not be an empty iterable")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise AssertionError("ConcatDataset does not support IterableDataset")
        self.cumulative_sizes: list[int] = []
        total = 0
        for d in self.datasets:
            total += len(d)
            self.cumulative_sizes.append(total)

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx: int) -> Any:
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            idx += len(self)
        which = bisect.bisect_right(self.cumulative_sizes, idx)
        start = self.cumulative_sizes[which - 1] if which else 0
        return self.datasets[which][idx - start]


def random_split(
    dataset: Any, lengths: Sequence[int | float], generator: Generator | None = default_generator
) -> list[Subset]:
    """Split ``dataset`` into non-overlapping random subsets of the given lengths (or
    fractions summing to 1; leftover items go round-robin to the first subsets).

    >>> a, b = ember.utils.data.random_split(range(10), [0.8, 0.2]); len(a), len(b)
    (8, 2)
    """
    n = len(dataset)
    sizes = [int(x) for x in lengths]
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        for frac in lengths:
            if not 0 <= frac <= 1:
                raise ValueError(f"Fraction at index {lengths.index(frac)} is not between 0 and 1")
        sizes = [int(math.floor(n * frac)) for frac in lengths]
        for i in range(n - sum(sizes)):
            sizes[i % len(sizes)] += 1
    if sum(sizes) != n:
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    order = permutation(n, generator).tolist()
    out, start = [], 0
    for size in sizes:
        out.append(Subset(dataset, order[start : start + size]))
        start += size
    return out


def permutation(n: int, generator: Generator | None) -> Tensor:
    """A random permutation of ``range(n)`` (int64) drawn from ``generator``, as
    ``randperm``: the one PyTorch's ``random_split`` and samplers draw.

    >>> sorted(ember.utils.data.dataset.permutation(4, None).tolist())
    [0, 1, 2, 3]
    """
    return ember.randperm(n, generator=generator)  # PyTorch's stream, bit for bit
