"""The lazy device: ops record an IR graph; nothing runs until a value is needed.

>>> x = ember.ones(3, device="lazy")
>>> y = (x * 2 + 1).sum()          # recorded, not run
>>> y.item()                        # syncs: the graph is compiled (cached) and run
9.0

Entering and leaving: ``t.to("lazy")``, factories with ``device="lazy"``,
``Module.to("lazy")``, ``t.to("cpu")``. Values are computed on ``item()``, ``tolist()``,
``numpy()``, ``repr``, ``bool()``/``float()``/``int()``, ``to("cpu")``, ``sync(tensors)``
and ``mark_step()`` (every live lazy tensor). See ``docs/lazy.md``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ember._tensor import Tensor
from ember.lazy import debug, metrics
from ember.lazy.executor import LIVE, clear_cache, sync_arrays, sync_tensors
from ember.lazy.recorder import to_lazy

__all__ = ["sync", "mark_step", "wait_device_ops", "metrics", "debug", "clear_cache"]

from ember.lazy import kernels as _kernels  # noqa: E402,F401  (the Lazy kernels of a few ops)
from ember.lazy import recipes as _recipes  # noqa: E402,F401  (the Lazy key's kernels)


def sync(tensors: Tensor | Iterable[Tensor]) -> None:
    """Compute the values of ``tensors`` (and nothing else) in one graph."""
    if isinstance(tensors, Tensor):
        tensors = [tensors]
    sync_tensors(list(tensors), "sync")


def mark_step() -> None:
    """Compute every live lazy tensor that has pending work, in one graph (the end of a
    training step, as PyTorch/XLA's ``mark_step``)."""
    sync_arrays(None, "mark_step")


def wait_device_ops(devices: Any = None) -> None:
    """Nothing to wait for: a sync runs to completion before it returns."""
