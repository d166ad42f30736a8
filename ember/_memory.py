"""Where a tensor's memory lives, as PyTorch's CPU-only build answers: ``Tensor.is_pinned()``
(never: there is no accelerator to pin for), ``Tensor.pin_memory()`` (raises, as PyTorch
without an accelerator does), ``Tensor.share_memory_()`` / ``is_shared()`` (NumPy memory is
one process's; the tensor is marked shared, and ``DataLoader`` workers receive copies), and
``Tensor.storage()``, PyTorch's deprecated ``TypedStorage`` view of the untyped storage."""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np

from ember._tensor import Tensor
from ember._warn import warn_user

_warned_typed: list[bool] = []
#: the storages ``share_memory_()`` marked (one object per storage while a tensor holds it)
_SHARED: weakref.WeakSet[Any] = weakref.WeakSet()


def is_pinned(self: Tensor, device: Any = None) -> bool:
    """Whether the tensor is in page-locked memory: never on a CPU-only build.

    >>> ember.ones(2).is_pinned()
    False
    """
    return False


def pin_memory(self: Tensor, device: Any = None) -> Tensor:
    """Copy into page-locked memory: PyTorch's CPU-only build has no accelerator to pin for
    and raises; so does ember."""
    raise RuntimeError(
        "Cannot access accelerator device when none is available. (pin_memory needs an "
        "accelerator; ember runs on the cpu only: leave pin_memory=False)"
    )


def share_memory_(self: Tensor) -> Tensor:
    """Mark the tensor's storage as shared between processes and return the tensor (NumPy
    memory stays the process's own: worker processes get copies).

    >>> x = ember.ones(2); x.share_memory_() is x, x.is_shared()
    (True, True)
    """
    _SHARED.add(self.untyped_storage())
    return self


def is_shared(self: Tensor) -> bool:
    """Whether ``share_memory_()`` was called on this tensor's storage (or a view's).

    >>> ember.ones(2).is_shared()
    False
    """
    return self.untyped_storage() in _SHARED


class TypedStorage:
    """PyTorch's deprecated typed storage: the untyped storage read as elements of the
    tensor's dtype (``Tensor.storage()``)."""

    def __init__(self, tensor: Tensor) -> None:
        self._untyped = tensor.untyped_storage()
        self.dtype = tensor.dtype
        self.device = tensor.device
        self._tensor = tensor

    def untyped(self) -> Any:
        return self._untyped

    def _elements(self) -> np.ndarray:
        base = self._tensor._base if self._tensor._base is not None else self._tensor
        data = base._edata
        while (
            isinstance(data, np.ndarray)
            and data.base is not None
            and isinstance(data.base, np.ndarray)
        ):
            data = data.base
        return np.asarray(data).reshape(-1)

    def size(self) -> int:
        return self._untyped.nbytes() // self.dtype.itemsize  # type: ignore[no-any-return]

    def __len__(self) -> int:
        return self.size()

    def data_ptr(self) -> int:
        return self._untyped.data_ptr()  # type: ignore[no-any-return]

    def tolist(self) -> list[Any]:
        return self._elements().tolist()  # type: ignore[no-any-return]

    def __getitem__(self, i: int) -> Any:
        return self._elements()[i].item()

    def __repr__(self) -> str:
        body = "\n".join(f" {v}" for v in self.tolist())
        kind = f"ember.storage.TypedStorage(dtype={self.dtype}, device={self.device})"
        return f"{body}\n[{kind} of size {len(self)}]"


def storage(self: Tensor) -> TypedStorage:
    """The tensor's storage as a ``TypedStorage`` (deprecated in PyTorch, which warns once;
    ``untyped_storage()`` is the supported one).

    >>> ember.ones(3).storage().size()  # doctest: +SKIP
    3
    """
    if not _warned_typed:
        _warned_typed.append(True)
        warn_user(
            "TypedStorage is deprecated. It will be removed in the future and UntypedStorage "
            "will be the only storage class. This should only matter to you if you are using "
            "storages directly.  To access UntypedStorage directly, use "
            "tensor.untyped_storage() instead of tensor.storage()"
        )
    return TypedStorage(self)


Tensor.is_pinned = is_pinned  # type: ignore[attr-defined]
Tensor.pin_memory = pin_memory  # type: ignore[attr-defined]
Tensor.share_memory_ = share_memory_  # type: ignore[attr-defined]
Tensor.is_shared = is_shared  # type: ignore[attr-defined]
Tensor.storage = storage  # type: ignore[attr-defined]
