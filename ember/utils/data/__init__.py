"""Datasets, samplers and ``DataLoader``, as ``torch.utils.data``.

>>> ds = ember.utils.data.TensorDataset(ember.arange(6.0).reshape(3, 2), ember.arange(3))
>>> next(iter(ember.utils.data.DataLoader(ds, batch_size=2)))[1]
tensor([0, 1])
"""

from __future__ import annotations

from ember.utils.data.dataloader import (
    BatchSampler,
    DataLoader,
    RandomSampler,
    Sampler,
    SequentialSampler,
    default_collate,
    default_convert,
)
from ember.utils.data.dataset import (
    ConcatDataset,
    Dataset,
    IterableDataset,
    Subset,
    TensorDataset,
    random_split,
)

__all__ = [
    "BatchSampler", "ConcatDataset", "DataLoader", "Dataset", "IterableDataset", "RandomSampler",
    "Sampler", "SequentialSampler", "Subset", "TensorDataset", "default_collate",
    "default_convert", "random_split",
]  # fmt: skip
