"""``UntypedStorage``: the memory under a tensor and its views, as bytes.

>>> x = ember.arange(6.0)
>>> x[2:].untyped_storage().data_ptr() == x.untyped_storage().data_ptr()
True
"""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np

from ember._tensor import Tensor, root_array
from ember.device import device
from ember.dispatch import marks

__all__ = ["UntypedStorage"]


class UntypedStorage:
    """The bytes a tensor and every view of it share (what ``Tensor.untyped_storage()``
    returns): its size in bytes, its address, and the bytes themselves on the cpu device.

    >>> ember.zeros(2, 3).untyped_storage().nbytes()
    24

    # NOTE [one storage object]
    Memory trackers key dictionaries by storage (``WeakIdKeyDictionary``), so as in PyTorch
    there is one storage object per memory, whichever tensor or view asks: ``_LIVE`` finds
    it by the id of the ndarray that owns the memory (or, for a tensor without data, of its
    base tensor), and every tensor that asked keeps it alive in its ``__dict__``. The storage
    holds what it was found by, so that id cannot be reused while the entry exists.
    """

    __slots__ = ("_bytes", "_nbytes", "_ptr", "_device", "_owner", "_valid", "__weakref__")

    def __init__(self, tensor: Tensor, owner: Any) -> None:
        data = tensor._edata
        self._owner = owner  # the root ndarray, or the base tensor of a tensor without data
        self._bytes: np.ndarray | None = None
        self._ptr = 0
        # a wrapper subclass's storage is a placeholder, as PyTorch's "invalid python storage"
        self._valid = not (type(data) is not np.ndarray and marks.has_python_key(tensor))
        if type(data) is np.ndarray:
            self._ptr = int(owner.__array_interface__["data"][0])
            if owner.flags.c_contiguous:
                self._bytes = owner.reshape(-1).view(np.uint8)
            self._nbytes = int(owner.nbytes)
        else:  # a tensor without data (meta, lazy, a wrapper): its base's size
            self._nbytes = owner.numel() * owner.element_size()
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
        if not self._valid:
            raise RuntimeError(
                "Attempted to access the data pointer on an invalid python storage: a wrapper "
                "subclass (_make_wrapper_subclass) has no memory of its own; ask the tensor it "
                "wraps"
            )
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


_LIVE: weakref.WeakValueDictionary[int, UntypedStorage] = weakref.WeakValueDictionary()


def untyped_storage(self: Tensor) -> UntypedStorage:
    """The memory this tensor and its views share: one object per memory (NOTE [one storage
    object]).

    >>> x = ember.zeros(3)
    >>> x.untyped_storage() is x[1:].untyped_storage()
    True
    """
    data = self._edata
    if type(data) is np.ndarray:
        owner: Any = root_array(data)
    else:
        owner = self._base if self._base is not None else self
    st = self.__dict__.get("_ember_storage")
    if st is not None and st._owner is owner:
        return st  # type: ignore[no-any-return]
    st = _LIVE.get(id(owner))
    if st is None or st._owner is not owner:
        st = UntypedStorage(self, owner)
        _LIVE[id(owner)] = st
    self.__dict__["_ember_storage"] = st
    return st


Tensor.untyped_storage = untyped_storage  # type: ignore[attr-defined]
