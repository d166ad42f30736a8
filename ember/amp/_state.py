"""This thread's autocast settings besides the key: the lower-precision dtype per device
type, whether casts are cached, the nesting depth of autocast regions and the cast cache.

Whether autocast is enabled for "cpu" is the AutocastCPU key's being in this thread's
include set (NOTE [autocast as a dispatch key] in ``_kernel.py``), so ``enabled`` is
read from there; everything else lives here, thread-local as in PyTorch (a new thread
starts with autocast off, bfloat16 and caching on).
"""

from __future__ import annotations

import threading
import weakref
from typing import Any

from ember import dtypes
from ember.dispatch import state
from ember.dispatch.keys import AUTOCAST_CPU_BIT

#: the lower-precision dtype of a new thread on "cpu" (PyTorch's), None without ml_dtypes
DEFAULT_CPU_DTYPE = getattr(dtypes, "bfloat16", None)


class _AutocastState(threading.local):
    def __init__(self) -> None:
        self.dtype: dict[str, Any] = {"cpu": DEFAULT_CPU_DTYPE}
        self.cache_enabled = True
        self.nesting = 0
        #: id(leaf) -> (a weak reference to the leaf, its cast)
        self.cache: dict[int, tuple[weakref.ref[Any], Any]] = {}


local = _AutocastState()


def cpu_enabled() -> bool:
    """Whether ops in this thread see the AutocastCPU key (in the include set, not
    excluded: inside an autocast kernel, while its op runs below, it is off)."""
    return state.is_active(AUTOCAST_CPU_BIT)


def set_cpu_enabled(on: bool) -> bool:
    """Turn autocast for "cpu" on or off in this thread; returns whether it was on."""
    return state.set_included(AUTOCAST_CPU_BIT, on)
