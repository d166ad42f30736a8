"""Where a tensor's memory lives, as PyTorch's CPU-only build answers: ``Tensor.is_pinned()``
(never: there is no accelerator to pin for), ``Tensor.pin_memory()`` (raises, as PyTorch
without an accelerator does), ``Tensor.share_memory_()`` / ``is_shared()`` (NumPy memory is
one process's; the tensor is marked shared, and ``DataLoader`` workers receive copies), and
``Tensor.storage()``, PyTorch's deprecated ``TypedStorage`` view of the untyped storage."""

from __future__ import annotations

import weakref
from typing import Any

from ember._tensor import Tensor
from ember.storage import TypedStorage, warn_typed_storage_removal
from ember.storage import _warned_typed as _warned_typed  # (tests reset the warning through it)

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


def storage(self: Tensor) -> TypedStorage:
    """The tensor's storage as a ``TypedStorage`` of its dtype: all the memory under the
    tensor and its views, from the first byte (deprecated in PyTorch, which warns once;
    ``untyped_storage()`` is the supported one).

    >>> ember.arange(3)[1:].storage().tolist()  # doctest: +SKIP
    [0, 1, 2]
    """
    warn_typed_storage_removal()
    return TypedStorage(wrap_storage=self.untyped_storage(), dtype=self.dtype, _internal=True)


Tensor.is_pinned = is_pinned  # type: ignore[attr-defined]
Tensor.pin_memory = pin_memory  # type: ignore[attr-defined]
Tensor.share_memory_ = share_memory_  # type: ignore[attr-defined]
Tensor.is_shared = is_shared  # type: ignore[attr-defined]
Tensor.storage = storage  # type: ignore[attr-defined]
