"""Tensor parallelism on DTensor, as ``torch.distributed.tensor.parallel``."""

from ember.distributed.tensor.parallel.api import parallelize_module
from ember.distributed.tensor.parallel.style import (
    ColwiseParallel,
    ParallelStyle,
    PrepareModuleInput,
    RowwiseParallel,
)

__all__ = [
    "ColwiseParallel",
    "ParallelStyle",
    "PrepareModuleInput",
    "RowwiseParallel",
    "parallelize_module",
]
