"""``DistributedSampler``: each process of a data-parallel job takes its own share of a
dataset's indices, as ``torch.utils.data.distributed.DistributedSampler``."""

from __future__ import annotations

import math
from collections.abc import Iterator, Sized
from typing import Any

import ember
from ember.utils.data.dataloader import Sampler

__all__ = ["DistributedSampler"]


class DistributedSampler(Sampler):
    """Rank ``rank``'s indices of ``dataset``: every ``num_replicas``-th index of one order
    of the whole dataset, starting at ``rank``.

    >>> from ember.utils.data.distributed import DistributedSampler
    >>> list(DistributedSampler(range(5), num_replicas=2, rank=1, shuffle=False))
    [1, 3, 0]

    The order is ``ember.randperm(len(dataset))`` seeded with ``seed + epoch`` (the same
    permutation as PyTorch's for the same seed) or, without ``shuffle``, ``0, 1, 2...``. So
    every rank has as many indices, the order is padded by repeating its start
    (``drop_last=False``) or its tail dropped (``drop_last=True``). Call ``set_epoch`` at
    each epoch to draw a new order. ``num_replicas`` and ``rank`` default to the default
    process group's.
    """

    def __init__(
        self,
        dataset: Sized,
        num_replicas: int | None = None,
        rank: int | None = None,
        shuffle: bool = True,
        seed: int = 0,
        drop_last: bool = False,
    ) -> None:
        if num_replicas is None or rank is None:
            # lazy load: ember.distributed loads on first use (NOTE [loaded on first use])
            import ember.distributed as dist

            if not dist.is_available():
                raise RuntimeError("Requires distributed package to be available")
            num_replicas = dist.get_world_size() if num_replicas is None else num_replicas
            rank = dist.get_rank() if rank is None else rank
        if rank >= num_replicas or rank < 0:
            raise ValueError(
                f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]"
            )
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        self.shuffle = shuffle
        self.seed = seed
        n = len(dataset)
        if drop_last and n % num_replicas:
            self.num_samples = math.ceil((n - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(n / num_replicas)
        self.total_size = self.num_samples * num_replicas

    def __iter__(self) -> Iterator[Any]:
        n = len(self.dataset)
        if self.shuffle:
            g = ember.Generator().manual_seed(self.seed + self.epoch)
            order: list[int] = ember.randperm(n, generator=g).tolist()
        else:
            order = list(range(n))
        if self.drop_last:
            order = order[: self.total_size]
        else:
            pad = self.total_size - len(order)
            if pad > 0:
                order += (order * math.ceil(pad / max(len(order), 1)))[:pad]
        return iter(order[self.rank : self.total_size : self.num_replicas])

    def __len__(self) -> int:
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        """Use ``epoch`` in the next ``__iter__``'s seed: a new order every epoch, the same on
        every rank."""
        self.epoch = epoch
