"""Zero-copy exchange through DLPack: ``Tensor.__dlpack__``/``__dlpack_device__`` and
``ember.from_dlpack``, over NumPy's own DLPack support, so ``torch.from_dlpack(t)`` and
``ember.from_dlpack(torch_tensor)`` share memory with no copy.

>>> a = ember.arange(3.0)
>>> b = ember.from_dlpack(a)
>>> _ = b.add_(1); a
tensor([1., 2., 3.])
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ember._factory import from_numpy
from ember._tensor import Tensor

__all__ = ["from_dlpack"]

_CPU = 1  # DLPack's kDLCPU


def _values(t: Tensor, what: str) -> np.ndarray:
    data = t._edata
    if type(data) is not np.ndarray:
        raise RuntimeError(
            f"{what}: a {t.device.type} tensor has no memory to share; move it to the cpu "
            "first (t.to('cpu'))"
        )
    if t.requires_grad:
        raise RuntimeError(f"{what}: can't export a tensor that requires grad; use tensor.detach()")
    return data


def __dlpack__(self: Tensor, *, stream: Any = None, **kwargs: Any) -> Any:  # noqa: N807
    """A DLPack capsule over this tensor's memory (``stream`` must be None on the cpu;
    ``max_version``, ``dl_device`` and ``copy`` pass to NumPy's exporter)."""
    if stream is not None:
        raise RuntimeError("__dlpack__: stream must be None for a cpu tensor")
    return _values(self, "__dlpack__").__dlpack__(**kwargs)


def __dlpack_device__(self: Tensor) -> tuple[int, int]:  # noqa: N807
    """``(kDLCPU, 0)``: where this tensor's memory is, in DLPack's terms.

    >>> ember.ones(1).__dlpack_device__()
    (1, 0)
    """
    _values(self, "__dlpack_device__")
    return (_CPU, 0)


def from_dlpack(ext_tensor: Any) -> Tensor:
    """A tensor sharing memory with ``ext_tensor``: any object with ``__dlpack__`` (a
    PyTorch or NumPy array, another library's tensor) on the cpu.

    >>> ember.from_dlpack(np.arange(2))
    tensor([0, 1])
    """
    if isinstance(ext_tensor, Tensor):
        return ext_tensor.detach()
    if not hasattr(ext_tensor, "__dlpack__"):
        raise TypeError(
            f"from_dlpack: expected an object with __dlpack__ (a tensor or array), got "
            f"{type(ext_tensor).__name__}"
        )
    device = getattr(ext_tensor, "__dlpack_device__", lambda: (_CPU, 0))()
    if device[0] != _CPU:
        raise RuntimeError(
            f"from_dlpack: ember tensors live on the cpu; the array is on DLPack device "
            f"{device}: copy it to the cpu first"
        )
    arr = np.from_dlpack(ext_tensor)
    if not arr.flags.writeable:
        arr = np.asarray(_Writable(arr))
    return from_numpy(arr)


class _Writable:
    """The same memory as ``arr``, declared writable (NOTE [writable dlpack imports])."""

    def __init__(self, arr: np.ndarray) -> None:
        # NOTE [writable dlpack imports]
        # Older NumPy (2.0 and 2.1 here) marks an array it imports through DLPack read-only
        # (the older protocol had no read-only flag); PyTorch's from_dlpack gives a writable tensor
        # over the memory, and so does ember: an array over the same address, declared
        # writable, whose base (this object) keeps the imported array alive.
        self.arr = arr
        interface = dict(arr.__array_interface__)
        interface["data"] = (interface["data"][0], False)
        self.__array_interface__ = interface


Tensor.__dlpack__ = __dlpack__  # type: ignore[attr-defined]
Tensor.__dlpack_device__ = __dlpack_device__  # type: ignore[attr-defined]
