"""``UntypedStorage``: the memory under a tensor and its views, as bytes; and
``TypedStorage``, PyTorch's deprecated view of it as elements of one dtype
(``Tensor.storage()``).

>>> x = ember.arange(6.0)
>>> x[2:].untyped_storage().data_ptr() == x.untyped_storage().data_ptr()
True
"""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np

import ember
from ember._tensor import Tensor, root_array
from ember._warn import warn_user
from ember.device import device
from ember.dispatch import marks
from ember.dtypes import dtype as _dtype

__all__ = ["TypedStorage", "UntypedStorage"]


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
            if owner.flags.c_contiguous or owner.flags.f_contiguous:  # in memory order
                self._bytes = owner.ravel(order="K").view(np.uint8)
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


# --------------------------------------------------------------------------- TypedStorage

#: PyTorch's legacy storage class names (``FloatStorage``), by dtype name
_LEGACY = {
    "float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16",
    "int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
    "bool": "Bool", "complex64": "ComplexFloat", "complex128": "ComplexDouble",
}  # fmt: skip
_warned_typed: list[bool] = []


def warn_typed_storage_removal() -> None:
    """PyTorch's once-a-process warning that ``TypedStorage`` is deprecated."""
    if not _warned_typed:
        _warned_typed.append(True)
        warn_user(
            "TypedStorage is deprecated. It will be removed in the future and UntypedStorage "
            "will be the only storage class. This should only matter to you if you are using "
            "storages directly.  To access UntypedStorage directly, use "
            "tensor.untyped_storage() instead of tensor.storage()"
        )


def _fresh(values: np.ndarray) -> UntypedStorage:
    """The untyped storage of a new array holding ``values``."""
    return untyped_storage(ember.from_numpy(np.ascontiguousarray(values)))


class TypedStorage:
    """An ``UntypedStorage`` read as elements of one dtype: what ``Tensor.storage()``
    returns (the whole memory under the tensor, from its first byte, in the tensor's
    dtype), or a new storage: ``TypedStorage(n, dtype=...)`` (zeros), ``TypedStorage([1, 2],
    dtype=...)``, ``TypedStorage(wrap_storage=untyped, dtype=...)``. PyTorch deprecates it
    and warns once; so does ember.

    >>> x = ember.arange(4.0)
    >>> s = x[1:].storage()  # doctest: +SKIP
    >>> s.size(), s.tolist(), s[3], s.untyped() is x.untyped_storage()  # doctest: +SKIP
    (4, [0.0, 1.0, 2.0, 3.0], 3.0, True)
    """

    is_sparse = False
    is_cuda = False

    def __init__(
        self,
        *args: Any,
        wrap_storage: UntypedStorage | None = None,
        dtype: _dtype | None = None,
        device: Any = None,
        _internal: bool = False,
    ) -> None:
        if not _internal:
            warn_typed_storage_removal()
        if device is not None and str(device) != "cpu":
            raise RuntimeError(
                f"TypedStorage: ember keeps storages on the cpu device only, got device={device}"
            )
        self.dtype: _dtype = ember.get_default_dtype() if dtype is None else dtype
        if wrap_storage is not None:
            if args:
                raise RuntimeError(
                    f"TypedStorage(wrap_storage=...) takes no positional arguments, got {len(args)}"
                )
            if not isinstance(wrap_storage, UntypedStorage):
                raise TypeError(
                    "TypedStorage: expected wrap_storage to be an UntypedStorage, but got "
                    f"{type(wrap_storage).__name__}"
                )
            if dtype is None:
                raise RuntimeError("TypedStorage(wrap_storage=...) needs its dtype= as well")
            self._untyped_storage = wrap_storage
            return
        if len(args) > 1:
            raise TypeError(
                f"TypedStorage: expected at most one positional argument (a size or a "
                f"sequence), got {len(args)}"
            )
        np_dtype = self.dtype.np
        if not args:
            values = np.zeros(0, np_dtype)
        elif isinstance(args[0], int) and not isinstance(args[0], bool):
            if args[0] < 0:
                raise RuntimeError(f"TypedStorage: size must be non-negative, got {args[0]}")
            values = np.zeros(args[0], np_dtype)
        else:
            try:
                values = np.asarray(list(args[0])).astype(np_dtype)
            except TypeError:
                raise TypeError(
                    "TypedStorage: expected a size (int) or a sequence of numbers, but got "
                    f"{type(args[0]).__name__}"
                ) from None
            values = values.reshape(-1)
        self._untyped_storage = _fresh(values)

    # ------------------------------------------------------------------ what it is

    def untyped(self) -> UntypedStorage:
        """The untyped storage this one reads (the same object ``untyped_storage()`` gives)."""
        return self._untyped_storage

    @property
    def device(self) -> device:
        return self._untyped_storage.device

    def element_size(self) -> int:
        return self.dtype.itemsize  # type: ignore[no-any-return]

    def nbytes(self) -> int:
        return self._untyped_storage.nbytes()

    def size(self) -> int:
        """How many elements of ``dtype`` the memory holds."""
        return self._untyped_storage.nbytes() // self.dtype.itemsize  # type: ignore[no-any-return]

    def __len__(self) -> int:
        return self.size()

    def data_ptr(self) -> int:
        return self._untyped_storage.data_ptr()

    def is_shared(self) -> bool:
        from ember._memory import _SHARED  # cycle: _memory imports this module

        return self._untyped_storage in _SHARED

    def is_pinned(self, device: Any = None) -> bool:
        return False

    def type(self, dtype: Any = None, non_blocking: bool = False) -> Any:
        """Without arguments, the legacy class name (``ember.FloatStorage``); with a
        dtype, a copy converted to it."""
        if dtype is None:
            return f"ember.{self.pickle_storage_type()}"
        return self._to(dtype)

    def pickle_storage_type(self) -> str:
        """The legacy class name PyTorch pickles this storage under (``FloatStorage``)."""
        name = _LEGACY.get(str(self.dtype).split(".")[-1])
        if name is None:
            raise KeyError(f"pickle storage type not found for dtype {self.dtype}")
        return f"{name}Storage"

    # ------------------------------------------------------------------ elements

    def _elements(self) -> np.ndarray:
        """The memory as a flat array of ``dtype``, sharing it."""
        raw = self._untyped_storage._values()
        n = self.size() * self.dtype.itemsize
        return raw[:n].view(self.dtype.np)

    def _python(self, values: np.ndarray) -> list[Any]:
        if values.dtype.kind not in "biufc":  # bfloat16: not a NumPy scalar kind
            values = values.astype(np.float32)
        return values.tolist()  # type: ignore[no-any-return]

    def tolist(self) -> list[Any]:
        return self._python(self._elements())

    def __iter__(self) -> Any:
        return iter(self.tolist())

    def _index(self, i: Any, op: str) -> int:
        if isinstance(i, slice):
            raise RuntimeError(f"slices are only supported in UntypedStorage.{op}")
        if not isinstance(i, int):
            raise TypeError(f"can't index a {type(self).__name__} with {type(i).__name__}")
        n = self.size()
        j = i + n if i < 0 else i
        if not 0 <= j < n:
            raise IndexError(f"index {i} out of range for storage of size {n}")
        return j

    def __getitem__(self, i: int) -> Any:
        return self._python(self._elements()[self._index(i, "__getitem__") :][:1])[0]

    def __setitem__(self, i: int | slice, value: Any) -> None:
        data = self._elements()
        key: Any = i if isinstance(i, slice) else self._index(i, "__setitem__")
        if isinstance(value, Tensor):
            value = value.numpy()
        data[key] = value

    def fill_(self, value: Any) -> TypedStorage:
        self._elements()[...] = value
        return self

    def copy_(self, source: Any, non_blocking: bool | None = None) -> TypedStorage:
        """Copy the elements of ``source`` (a storage of as many elements) into this one."""
        src = source._elements() if isinstance(source, TypedStorage) else None
        if src is None:
            raise TypeError(f"copy_: expected a TypedStorage, got {type(source).__name__}")
        if src.size != self.size():
            raise RuntimeError(
                f"copy_: storages of {self.size()} and {src.size} elements; their sizes must match"
            )
        self._elements()[...] = src
        return self

    def clone(self) -> TypedStorage:
        """A storage of the same elements in new memory."""
        return TypedStorage(wrap_storage=_fresh(self._elements().copy()), dtype=self.dtype,
                            _internal=True)  # fmt: skip

    def cpu(self) -> TypedStorage:
        """This storage's memory (a cpu storage already), as a new ``TypedStorage``."""
        return TypedStorage(wrap_storage=self._untyped_storage, dtype=self.dtype, _internal=True)

    def _to(self, dtype: _dtype) -> TypedStorage:
        if dtype == self.dtype:
            return self
        values = ember.from_numpy(self._elements().copy()).to(dtype).numpy()
        return TypedStorage(wrap_storage=_fresh(values), dtype=dtype, _internal=True)

    def double(self) -> TypedStorage:
        return self._to(ember.float64)

    def float(self) -> TypedStorage:
        return self._to(ember.float32)

    def half(self) -> TypedStorage:
        return self._to(ember.float16)

    def bfloat16(self) -> TypedStorage:
        return self._to(ember.bfloat16)

    def long(self) -> TypedStorage:
        return self._to(ember.int64)

    def int(self) -> TypedStorage:
        return self._to(ember.int32)

    def short(self) -> TypedStorage:
        return self._to(ember.int16)

    def char(self) -> TypedStorage:
        return self._to(ember.int8)

    def byte(self) -> TypedStorage:
        return self._to(ember.uint8)

    def bool(self) -> TypedStorage:
        return self._to(ember.bool)

    def complex_float(self) -> TypedStorage:
        return self._to(ember.complex64)

    def complex_double(self) -> TypedStorage:
        return self._to(ember.complex128)

    def __repr__(self) -> str:
        kind = f"ember.storage.TypedStorage(dtype={self.dtype}, device={self.device})"
        info = f"[{kind} of size {len(self)}]"
        if self._untyped_storage._bytes is None:
            return "...\n" + info
        return "".join(f" {v}\n" for v in self.tolist()) + info
