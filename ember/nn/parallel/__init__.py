"""Data-parallel training across processes, as ``torch.nn.parallel``:
``DistributedDataParallel`` (over ``ember.distributed``, MPI)."""

from __future__ import annotations

from ember.nn.parallel.distributed import DistributedDataParallel

__all__ = ["DistributedDataParallel"]
