"""The UCI hand-written digits shipped with ember, split into a fixed train and test set.

``ember/data/digits.npz`` holds ``images`` (uint8, 1797 x 8 x 8, values 0..16) and ``labels``
(uint8, 1797): the UCI ML "Optical Recognition of Handwritten Digits" test set (Alpaydin &
Kaynak, 1998, CC BY 4.0) as bundled in scikit-learn (BSD-3-Clause).
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources

import numpy as np

import ember
from ember._tensor import Tensor
from ember.utils.data import BatchSampler, DataLoader, RandomSampler, TensorDataset

SPLIT_SEED = 0  # the split never changes, so accuracies of different runs compare
TEST_SIZE = 360  # of 1797: 1437 train, 360 test


@dataclass(frozen=True)
class Split:
    """Train and test images (float32, N x 1 x 8 x 8, scaled to [0, 1]) and labels (int64)."""

    train_x: Tensor
    train_y: Tensor
    test_x: Tensor
    test_y: Tensor


def load_digits() -> tuple[np.ndarray, np.ndarray]:
    """The 1797 digit images (uint8, 8 x 8, 0..16) and their labels, as NumPy arrays.

    >>> from ember.demo.data import load_digits
    >>> images, labels = load_digits(); images.shape, labels[:3].tolist()
    ((1797, 8, 8), [0, 1, 2])
    """
    with (resources.files("ember") / "data" / "digits.npz").open("rb") as f, np.load(f) as npz:
        return npz["images"], npz["labels"]


def split_digits(train_limit: int | None = None) -> Split:
    """The fixed seeded split of the digits (``train_limit`` keeps only the first N training
    samples, for quick runs).

    >>> from ember.demo.data import split_digits
    >>> s = split_digits(); s.train_x.shape, s.test_y.shape
    (ember.Size([1437, 1, 8, 8]), ember.Size([360]))
    """
    images, labels = load_digits()
    order = np.random.default_rng(SPLIT_SEED).permutation(len(labels))
    train, test = order[TEST_SIZE:][:train_limit], order[:TEST_SIZE]
    x = (images.astype(np.float32) / 16.0)[:, None]  # N x 1 x 8 x 8 in [0, 1]
    y = labels.astype(np.int64)
    return Split(
        ember.from_numpy(x[train]),
        ember.from_numpy(y[train]),
        ember.from_numpy(x[test]),
        ember.from_numpy(y[test]),
    )


def batches(x: Tensor, y: Tensor, batch_size: int, seed: int) -> DataLoader:
    """A loader of shuffled ``(x, y)`` batches; each batch is one indexing op, not one per
    sample (the sampler yields index lists and the loader does no collation).

    >>> from ember.demo.data import batches, split_digits
    >>> s = split_digits(); len(batches(s.train_x, s.train_y, 32, seed=0))
    45
    """
    ds = TensorDataset(x, y)
    order = RandomSampler(ds, generator=ember.Generator().manual_seed(seed))
    return DataLoader(ds, sampler=BatchSampler(order, batch_size, drop_last=False), batch_size=None)
