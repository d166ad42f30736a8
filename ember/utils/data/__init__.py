"""Datasets, samplers and ``DataLoader``, as ``torch.utils.data``.

>>> ds = ember.utils.data.TensorDataset(ember.arange(6.0).reshape(3, 2), ember.arange(3))
>>> next(iter(ember.utils.data.DataLoader(ds, batch_size=2)))[1]
tensor([0, 1])
"""

from __future__ import annotations

from ember.utils.data._worker import WorkerInfo, get_worker_info
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
    ChainDataset,
    ConcatDataset,
    Dataset,
    IterableDataset,
    StackDataset,
    Subset,
    TensorDataset,
    random_split,
)
from ember.utils.data.sampler import SubsetRandomSampler, WeightedRandomSampler

__all__ = [
    "BatchSampler", "ChainDataset", "ConcatDataset", "DataLoader", "Dataset", "IterableDataset",
    "RandomSampler", "StackDataset", "Sampler", "SequentialSampler", "Subset",
    "SubsetRandomSampler", "TensorDataset",
    "WeightedRandomSampler", "WorkerInfo", "default_collate", "default_convert",
    "get_worker_info", "random_split",
]  # fmt: skip
