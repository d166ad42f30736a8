"""Data-parallel training across processes, as ``torch.nn.parallel``:
``DistributedDataParallel`` (over ``ember.distributed``, MPI).

``DistributedDataParallel`` loads when first named, with ``ember.distributed`` under it
(NOTE [loaded on first use] in ember/__init__.py): ``import ember`` needs neither.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

__all__ = ["DistributedDataParallel"]
_SUBMODULES = ("distributed", "_buckets")


def __getattr__(name: str) -> Any:
    if name == "DistributedDataParallel":
        return import_module("ember.nn.parallel.distributed").DistributedDataParallel
    if name in _SUBMODULES:
        return import_module(f"ember.nn.parallel.{name}")
    raise AttributeError(f"module 'ember.nn.parallel' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | {"DistributedDataParallel", *_SUBMODULES})
