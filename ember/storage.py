"""``UntypedStorage``: the memory under a tensor and its views, as bytes.

>>> x = ember.arange(6.0)
>>> x[2:].untyped_storage().data_ptr() == x.untyped_storage().data_ptr()
True
"""

from __future__ import annotations

import numpy as np

from ember._tensor import Tensor, root_array
from ember.device import device

__all__ = ["UntypedStorage"]


class UntypedStorage:
    """The bytes a tensor and every view of it share (what ``Tensor.untyped_storage()``
    returns): its size in bytes, its address, and the bytes themselves on the cpu device.

    >>> ember.zeros(2, 3).untyped_storage().nbytes()
    24
    """

    __slots__ = ("_bytes", "_nbytes", "_ptr", "_device")

    def __init__(self, tensor: Tensor) -> None:
        data = tensor._data
        self._bytes: np.ndarray | None = None
        self._ptr = 0
        if type(data) is np.ndarray:
            root = root_array(data)
            self._ptr = int(root.__array_interface__["data"][0])
            if root.flags.c_contiguous:
                self._bytes = root.reshape(-1).view(np.uint8)
            self._nbytes = int(root.nbytes)
        else:  # a tensor without data (meta, lazy): its base's size
            base = tensor._base if tensor._base is not None else tensor
            self._nbytes = base.numel() * base.element_size()
        self._device = tensor.device

    def nbytes(self) -> int:
        return self._nbytes

    def size(self) -> int:
        return self._nbytes

    def __len__(self) -> int:
        return self._nbytes

    def element_size(self) -> int:
        return 1

    @property
    def device(self) -> device:
        return self._device

    def data_ptr(self) -> int:
        """The address of the first byte (0 without data, as PyTorch's meta storages)."""
        return self._ptr

    def __getitem__(self, i: int) -> int:
        return int(self._values()[i])

    def tolist(self) -> list[int]:
        return [int(v) for v in self._values()]

    def _values(self) -> np.ndarray:
        if self._bytes is None:
            raise NotImplementedError(
                f"UntypedStorage: the bytes of a {self._device.type} storage can't be read; "
                "move the tensor to the cpu device first"
            )
        return self._bytes

    def __repr__(self) -> str:
        info = f"[ember.storage.UntypedStorage(device={self._device}) of size {len(self)}]"
        if self._bytes is None:
            return "...\n" + info
        return " " + "\n ".join(str(int(v)) for v in self._bytes) + "\n" + info


def untyped_storage(self: Tensor) -> UntypedStorage:
    """The memory this tensor and its views share.

    >>> ember.zeros(3).untyped_storage().nbytes()
    12
    """
    return UntypedStorage(self)


Tensor.untyped_storage = untyped_storage  # type: ignore[attr-defined]
