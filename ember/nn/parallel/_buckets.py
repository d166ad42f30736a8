"""The gradient buckets of ``DistributedDataParallel``: parameters grouped, in reverse order
of ``module.parameters()`` (roughly the order backward finishes their gradients), into flat
buffers of at most ``cap`` bytes (the first one smaller, so communication starts early), one
dtype per bucket, as PyTorch's reducer does."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

import ember
from ember._tensor import Tensor
from ember.nn.parameter import Parameter

FIRST_BUCKET_BYTES = 1024 * 1024  # PyTorch's dist._DEFAULT_FIRST_BUCKET_BYTES


class Bucket:
    """Some parameters' gradients side by side in one flat array, all-reduced at once."""

    def __init__(self, index: int, params: list[Parameter], names: list[str]) -> None:
        self.index = index
        self.params = params
        self.names = names
        sizes = [p.numel() for p in params]
        self.offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(int).tolist()
        self.flat = np.zeros(self.offsets[-1], params[0].dtype.np)
        self.tensor: Tensor = ember.from_numpy(self.flat)
        self.ready: set[int] = set()

    def part(self, i: int) -> np.ndarray:
        """Parameter ``i``'s stretch of the flat array, in its shape."""
        p = self.params[i]
        return self.flat[self.offsets[i] : self.offsets[i + 1]].reshape(tuple(p.shape))


def assign(params: Sequence[tuple[str, Parameter]], cap: int) -> list[Bucket]:
    """``params`` (in ``module.parameters()`` order) into buckets, last parameters first."""
    buckets: list[Bucket] = []
    open_: dict[object, tuple[list[Parameter], list[str], int]] = {}
    for name, p in reversed(list(params)):
        limit = FIRST_BUCKET_BYTES if not buckets else cap
        key = p.dtype
        group, names, size = open_.get(key, ([], [], 0))
        group.append(p)
        names.append(name)
        size += p.numel() * p.element_size()
        if size >= min(limit, cap):
            buckets.append(Bucket(len(buckets), group, names))
            open_.pop(key, None)
        else:
            open_[key] = (group, names, size)
    for group, names, _ in open_.values():
        buckets.append(Bucket(len(buckets), group, names))
    return buckets
