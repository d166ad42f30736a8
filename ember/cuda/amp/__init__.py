"""``torch.cuda.amp``: deprecated spellings of ``ember.amp.autocast("cuda", ...)`` and
``ember.amp.GradScaler("cuda", ...)``, with PyTorch's FutureWarning. As on PyTorch's
CPU-only build, both then warn that CUDA is not available and stay disabled, so a script
written for a GPU runs (in float32).

>>> import warnings
>>> with warnings.catch_warnings():
...     warnings.simplefilter("ignore")
...     ember.cuda.amp.GradScaler().is_enabled()
False
"""

from __future__ import annotations

import warnings
from typing import Any

from ember import amp as _amp
from ember import dtypes
from ember.amp import custom_bwd, custom_fwd
from ember.amp.grad_scaler import deprecated_scaler

__all__ = ["autocast", "GradScaler", "custom_fwd", "custom_bwd"]


class autocast(_amp.autocast):  # noqa: N801  (PyTorch's name)
    """``ember.cuda.amp.autocast(...)`` is ``ember.amp.autocast("cuda", ...)`` (deprecated;
    disabled: ember has no CUDA)."""

    def __init__(
        self, enabled: bool = True, dtype: Any = dtypes.float16, cache_enabled: bool = True
    ) -> None:
        warnings.warn(
            "`torch.cuda.amp.autocast(args...)` is deprecated. Please use "
            "`torch.amp.autocast('cuda', args...)` instead.",
            FutureWarning,
            stacklevel=2,
        )
        super().__init__("cuda", enabled=enabled, dtype=dtype, cache_enabled=cache_enabled)


GradScaler = deprecated_scaler("cuda")
