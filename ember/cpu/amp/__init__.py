"""``torch.cpu.amp``: deprecated spellings of ``ember.amp.autocast("cpu", ...)`` and
``ember.amp.GradScaler("cpu", ...)``, with PyTorch's FutureWarning."""

from __future__ import annotations

import warnings
from typing import Any

from ember import amp as _amp
from ember import dtypes
from ember.amp.grad_scaler import deprecated_scaler

__all__ = ["autocast", "GradScaler"]


class autocast(_amp.autocast):  # noqa: N801  (PyTorch's name)
    """``ember.cpu.amp.autocast(...)`` is ``ember.amp.autocast("cpu", ...)`` (deprecated)."""

    def __init__(self, enabled: bool = True, dtype: Any = None, cache_enabled: bool = True) -> None:
        warnings.warn(
            "`torch.cpu.amp.autocast(args...)` is deprecated. Please use "
            "`torch.amp.autocast('cpu', args...)` instead.",
            FutureWarning,
            stacklevel=2,
        )
        dtype = getattr(dtypes, "bfloat16", None) if dtype is None else dtype
        super().__init__("cpu", enabled=enabled, dtype=dtype, cache_enabled=cache_enabled)


GradScaler = deprecated_scaler("cpu")
