"""``torch.amp``: automatic mixed precision on "cpu" (``autocast``), loss scaling
(``GradScaler``) and autocast for custom autograd Functions (``custom_fwd``/``custom_bwd``).

>>> with ember.amp.autocast("cpu"):
...     ember.mm(ember.ones(2, 2), ember.ones(2, 2)).dtype
ember.bfloat16

See docs/amp.md; the casts are the AutocastCPU dispatch key's kernels (NOTE [autocast as a
dispatch key] in ``_kernel.py``), following PyTorch's CPU lists (NOTE [autocast policy]).
"""

from __future__ import annotations

from ember.amp import _kernel as _kernel  # noqa: F401  (registers the AutocastCPU kernels)
from ember.amp import autocast_mode, grad_scaler
from ember.amp.autocast_mode import autocast, is_autocast_available
from ember.amp.custom import custom_bwd, custom_fwd
from ember.amp.grad_scaler import GradScaler

__all__ = ["autocast", "custom_bwd", "custom_fwd", "GradScaler", "is_autocast_available"]
__all__ += ["autocast_mode", "grad_scaler"]
