"""``torch.nn.attention``: which kernels ``scaled_dot_product_attention`` may choose.

On the cpu device PyTorch (and ember) choose between two: the fused
``_scaled_dot_product_flash_attention_for_cpu`` op when it takes the arguments
(``FLASH_ATTENTION``) and the math composition (``MATH``); ``sdpa_kernel`` allows only
the backends it names while it is entered, through the same switches as
``ember.backends.cuda.enable_flash_sdp`` and its siblings.

>>> from ember.nn.attention import SDPBackend, sdpa_kernel
>>> q = ember.ones(1, 1, 2, 4)
>>> with sdpa_kernel(SDPBackend.MATH):
...     out = ember.nn.functional.scaled_dot_product_attention(q, q, q)
>>> out.shape
ember.Size([1, 1, 2, 4])
"""

from __future__ import annotations

import contextlib
import enum
from collections.abc import Iterator
from typing import Any

from ember._global_settings import SDP_ENABLED

__all__ = ["SDPBackend", "sdpa_kernel"]


class SDPBackend(enum.Enum):
    """The kernels of ``scaled_dot_product_attention`` (PyTorch's values)."""

    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4


_SWITCH = {
    SDPBackend.MATH: "math",
    SDPBackend.FLASH_ATTENTION: "flash",
    SDPBackend.EFFICIENT_ATTENTION: "mem_efficient",
    SDPBackend.CUDNN_ATTENTION: "cudnn",
    SDPBackend.OVERRIDEABLE: "overrideable",
}


@contextlib.contextmanager
def sdpa_kernel(
    backends: SDPBackend | list[SDPBackend], set_priority: bool = False
) -> Iterator[None]:
    """Allow only ``backends`` (one or a list) inside the block; the switches are restored
    on exit. ``set_priority`` orders the choice on CUDA in PyTorch; the cpu device has one
    order (fused first), so it changes nothing here."""
    chosen: Any = [backends] if isinstance(backends, SDPBackend) else backends
    if not isinstance(chosen, (list, tuple)) or not all(isinstance(b, SDPBackend) for b in chosen):
        raise AssertionError(
            "sdpa_kernel: backend must be an instance of SDPBackend or a list of SDPBackend "
            f"instances, got {type(backends).__name__}"
        )
    saved = dict(SDP_ENABLED)
    try:
        for backend, switch in _SWITCH.items():
            SDP_ENABLED[switch] = backend in chosen
        yield
    finally:
        SDP_ENABLED.update(saved)
