"""Storage layout helpers: a base's values laid out by its declared strides, views of it.

A lazy base's computed values are an ndarray with exactly the strides its Meta rule declared
(what ``stride()`` reports), starting at its storage's first element; a view's values are
an ``as_strided`` window of that storage. Every window is checked against the storage's
extent first, so a wrong geometry is an error, never a read outside the buffer.
"""

from __future__ import annotations

from typing import Any

import numpy as np

_as_strided = np.lib.stride_tricks.as_strided


def extent(shape: tuple[int, ...], strides: tuple[int, ...]) -> int:
    """Elements of storage a layout reaches (0 when it is empty)."""
    if 0 in shape:
        return 0
    return 1 + sum((n - 1) * s for n, s in zip(shape, strides, strict=True))


def fresh(shape: tuple[int, ...], strides: tuple[int, ...], dtype: np.dtype[Any]) -> np.ndarray:
    """An uninitialised array with the given strides (in elements), over its own buffer."""
    n = extent(shape, strides)
    if n == 0:
        return np.empty(shape, dtype)
    buf = np.empty(n, dtype)
    item = buf.itemsize
    return _as_strided(buf, shape, tuple(s * item for s in strides))


def laid_out(value: np.ndarray, strides: tuple[int, ...]) -> np.ndarray:
    """``value`` itself when it has the declared strides, else a copy that has them."""
    item = value.itemsize
    if value.size <= 1 or value.strides == tuple(s * item for s in strides):
        return value
    out = fresh(value.shape, strides, value.dtype)
    out[...] = value
    return out


def window(
    storage: np.ndarray,
    shape: tuple[int, ...],
    dtype: np.dtype[Any],
    strides: tuple[int, ...],
    offset: int,
) -> np.ndarray:
    """The view of ``dtype``, ``shape``, ``strides`` and ``offset`` (in bytes, as a view may
    read the storage as another dtype) of the storage that ``storage`` (a base's values,
    laid out by its declared strides) starts."""
    if 0 in shape:
        return np.empty(shape, dtype)
    item = storage.itemsize
    n = extent(storage.shape, tuple(s // item for s in storage.strides)) if storage.size else 0
    raw = _as_strided(storage, (n,), (item,)).view(np.uint8)
    try:
        return np.ndarray(shape, dtype, buffer=raw, offset=offset, strides=strides)
    except (ValueError, TypeError) as exc:
        raise RuntimeError(
            f"lazy view: a view of shape {list(shape)}, strides {list(strides)} and offset "
            f"{offset} (in bytes) is out of bounds for a storage of {n * item} bytes: "
            f"{exc}"
        ) from None
