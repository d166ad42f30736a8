"""``ember.types``: the type aliases annotations import from ``torch.types``.

>>> from ember.types import Number
>>> isinstance(1.5, Number.__args__)
True
"""

from __future__ import annotations

from typing import Any, Union

from ember._tensor import Tensor
from ember.device import device as _device
from ember.dtypes import dtype as _dtype

__all__ = ["Device", "Number", "_bool", "_device", "_dtype", "_float", "_int", "_size"]

Number = Union[int, float, bool]  # noqa: UP007 (PyTorch's spelling, usable in isinstance)
Device = Union[_device, str, int, None]  # noqa: UP007
_int, _float, _bool = int, float, bool
_size = tuple[int, ...]
TensorOrTensors = Union[Tensor, tuple[Tensor, ...]]  # noqa: UP007
PySymType = Any
