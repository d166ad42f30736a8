"""Random samplers beyond a permutation: ``SubsetRandomSampler`` (a shuffled list of given
indices) and ``WeightedRandomSampler`` (indices drawn with probabilities ∝ weights)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

import ember
from ember.random import Generator
from ember.utils.data.dataloader import Sampler, check_num_samples
from ember.utils.data.dataset import permutation

__all__ = ["SubsetRandomSampler", "WeightedRandomSampler"]


class SubsetRandomSampler(Sampler):
    """The given ``indices`` in a fresh random order on every pass.

    >>> g = ember.Generator().manual_seed(0)
    >>> sorted(ember.utils.data.SubsetRandomSampler([5, 7, 9], generator=g))
    [5, 7, 9]
    """

    def __init__(self, indices: Sequence[int], generator: Generator | None = None) -> None:
        self.indices = indices
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        for i in permutation(len(self.indices), self.generator).tolist():
            yield self.indices[i]

    def __len__(self) -> int:
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """``num_samples`` indices in ``[0, len(weights))`` drawn with probability proportional
    to ``weights``, with or without replacement.

    >>> g = ember.Generator().manual_seed(0)
    >>> list(ember.utils.data.WeightedRandomSampler([0.0, 1.0, 0.0], 3, generator=g))
    [1, 1, 1]
    """

    def __init__(
        self,
        weights: Sequence[float] | Any,
        num_samples: int,
        replacement: bool = True,
        generator: Generator | None = None,
    ) -> None:
        check_num_samples(num_samples)
        if not isinstance(replacement, bool):
            raise ValueError(
                f"replacement should be a boolean value, but got replacement={replacement}"
            )
        w = np.asarray(weights.tolist() if hasattr(weights, "tolist") else weights, np.float64)
        if w.ndim != 1:
            raise ValueError(
                "weights should be a 1d sequence but given weights have shape "
                f"{tuple(w.shape)}; pass one weight per dataset index"
            )
        if not np.isfinite(w).all() or (w < 0).any() or w.sum() <= 0:
            raise RuntimeError(
                "WeightedRandomSampler: weights must be finite, non-negative and not all zero"
            )
        if not replacement and num_samples > int((w > 0).sum()):
            raise RuntimeError(
                f"WeightedRandomSampler: cannot draw {num_samples} samples without replacement "
                f"from {int((w > 0).sum())} indices of non-zero weight"
            )
        self.weights = ember.from_numpy(w)
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        drawn = ember.multinomial(
            self.weights, self.num_samples, self.replacement, generator=self.generator
        )
        yield from drawn.tolist()

    def __len__(self) -> int:
        return self.num_samples
