"""Tensors, ``state_dict``s and modules' parameters between ember and PyTorch (an optional
companion: it imports ``torch`` only when called). Tensors cross through DLPack, so the two
libraries share memory: a write on one side shows on the other.

>>> import torch
>>> from ember.utils import torch_interop
>>> tm, em = torch.nn.Linear(3, 2), ember.nn.Linear(3, 2)
>>> _ = torch_interop.load_from_torch(em, tm)
>>> bool((em.weight.detach().numpy() == tm.weight.detach().numpy()).all())
True
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import ember
from ember._tensor import Tensor

__all__ = [
    "from_torch",
    "load_from_torch",
    "load_into_torch",
    "state_dict_from_torch",
    "state_dict_to_torch",
    "to_torch",
]


def _torch() -> Any:
    try:  # optional dependency: torch loads when first needed
        import torch
    except ImportError:
        raise ImportError(
            "ember.utils.torch_interop needs PyTorch: pip install torch (CPU wheels suffice)"
        ) from None
    return torch


def to_torch(t: Tensor) -> Any:
    """A ``torch.Tensor`` sharing ``t``'s memory (detached; ``requires_grad`` kept).

    >>> ember.utils.torch_interop.to_torch(ember.ones(2)).tolist()
    [1.0, 1.0]
    """
    if not isinstance(t, Tensor):
        raise TypeError(f"to_torch: expected an ember.Tensor, got {type(t).__name__}")
    out = _torch().from_dlpack(t.detach())
    return out.requires_grad_() if t.requires_grad and out.is_floating_point() else out


def from_torch(t: Any) -> Tensor:
    """An ``ember.Tensor`` sharing the CPU ``torch.Tensor`` ``t``'s memory (detached;
    ``requires_grad`` kept).

    >>> import torch
    >>> ember.utils.torch_interop.from_torch(torch.ones(2)).tolist()
    [1.0, 1.0]
    """
    torch = _torch()
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"from_torch: expected a torch.Tensor, got {type(t).__name__}")
    if t.device.type != "cpu":
        raise ValueError(f"from_torch: the tensor is on {t.device}; move it with .cpu() first")
    out = ember.from_dlpack(t.detach())
    return out.requires_grad_() if t.requires_grad and out.is_floating_point() else out


def state_dict_to_torch(state: Mapping[str, Any]) -> dict[str, Any]:
    """``state`` with every ember tensor as a torch tensor sharing its memory."""
    return {k: to_torch(v) if isinstance(v, Tensor) else v for k, v in state.items()}


def state_dict_from_torch(state: Mapping[str, Any]) -> dict[str, Any]:
    """``state`` with every torch tensor as an ember tensor sharing its memory."""
    torch = _torch()
    return {k: from_torch(v) if isinstance(v, torch.Tensor) else v for k, v in state.items()}


def load_from_torch(module: Any, torch_module: Any, strict: bool = True) -> Any:
    """Copy ``torch_module``'s parameters and buffers into the ember ``module`` of the
    same structure (``load_state_dict``'s names and checks); returns ``module``."""
    module.load_state_dict(state_dict_from_torch(torch_module.state_dict()), strict=strict)
    return module


def load_into_torch(torch_module: Any, module: Any, strict: bool = True) -> Any:
    """Copy the ember ``module``'s parameters and buffers into ``torch_module`` of the same
    structure; returns ``torch_module``."""
    torch_module.load_state_dict(state_dict_to_torch(module.state_dict()), strict=strict)
    return torch_module
