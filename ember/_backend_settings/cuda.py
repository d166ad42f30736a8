"""``ember.backends.cuda``: CUDA's switches (cuBLAS TF32, attention kernels), as on PyTorch's
CPU-only build: they can be read and set, and change nothing, as there is no CUDA.

>>> ember.backends.cuda.is_built(), ember.backends.cuda.matmul.allow_tf32
(False, False)
"""

from __future__ import annotations

from typing import Any

from ember._global_settings import FLAGS
from ember._global_settings import SDP_ENABLED as _SDP

__all__ = [
    "cudnn_sdp_enabled", "enable_cudnn_sdp", "enable_flash_sdp", "enable_math_sdp",
    "enable_mem_efficient_sdp", "flash_sdp_enabled", "is_built", "math_sdp_enabled", "matmul",
    "mem_efficient_sdp_enabled",
]  # fmt: skip


def is_built() -> bool:
    """Whether ember was built with CUDA: no.

    >>> ember.backends.cuda.is_built()
    False
    """
    return False


class cuBLASModule:
    """``matmul``: cuBLAS's flags. ``allow_tf32`` is the other face of
    ``ember.set_float32_matmul_precision`` (True unless the precision is ``"highest"``)."""

    _REDUCTIONS = (
        "allow_fp16_reduced_precision_reduction",
        "allow_bf16_reduced_precision_reduction",
    )

    def __init__(self) -> None:
        for name in self._REDUCTIONS:
            object.__setattr__(self, name, True)

    def __getattr__(self, name: str) -> Any:
        if name == "allow_tf32":
            return FLAGS.matmul_precision != "highest"
        raise AttributeError(f"Unknown attribute {name}")

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "allow_tf32":
            _expect_bool(value, "set_allow_tf32_cublas")
            FLAGS.matmul_precision = "high" if value else "highest"
        elif name in self._REDUCTIONS:
            if type(value) is not bool:
                raise TypeError(
                    f"{name} expects a bool or a tuple/list of bools, but got {type(value)}"
                )
            object.__setattr__(self, name, value)
        else:
            raise AttributeError(f"Unknown attribute {name}")


def _expect_bool(value: Any, what: str) -> None:
    if type(value) is not bool:
        raise RuntimeError(f"{what} expects a bool, but got {type(value).__name__}")


matmul = cuBLASModule()

# which scaled-dot-product-attention kernels may run (all, by default): _SDP, whose home
# is ember/_global_settings.py (the cpu's choice in ops/native/nn.py reads it too)


def flash_sdp_enabled() -> bool:
    """Whether the flash attention kernel may be used.

    >>> ember.backends.cuda.flash_sdp_enabled()
    True
    """
    return _SDP["flash"]


def mem_efficient_sdp_enabled() -> bool:
    """Whether the memory-efficient attention kernel may be used.

    >>> ember.backends.cuda.mem_efficient_sdp_enabled()
    True
    """
    return _SDP["mem_efficient"]


def math_sdp_enabled() -> bool:
    """Whether the math (reference) attention kernel may be used.

    >>> ember.backends.cuda.math_sdp_enabled()
    True
    """
    return _SDP["math"]


def cudnn_sdp_enabled() -> bool:
    """Whether the cuDNN attention kernel may be used.

    >>> ember.backends.cuda.cudnn_sdp_enabled()
    True
    """
    return _SDP["cudnn"]


def enable_flash_sdp(enabled: bool) -> None:
    """Allow or forbid the flash attention kernel.

    >>> ember.backends.cuda.enable_flash_sdp(True)
    """
    _SDP["flash"] = bool(enabled)


def enable_mem_efficient_sdp(enabled: bool) -> None:
    """Allow or forbid the memory-efficient attention kernel.

    >>> ember.backends.cuda.enable_mem_efficient_sdp(True)
    """
    _SDP["mem_efficient"] = bool(enabled)


def enable_math_sdp(enabled: bool) -> None:
    """Allow or forbid the math attention kernel.

    >>> ember.backends.cuda.enable_math_sdp(True)
    """
    _SDP["math"] = bool(enabled)


def enable_cudnn_sdp(enabled: bool) -> None:
    """Allow or forbid the cuDNN attention kernel.

    >>> ember.backends.cuda.enable_cudnn_sdp(True)
    """
    _SDP["cudnn"] = bool(enabled)
