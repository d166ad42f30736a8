"""A tensor's values as the contiguous NumPy array MPI reads or writes.

# NOTE [zero-copy buffers]
A contiguous CPU tensor hands MPI its own ndarray: the transfer reads and writes the tensor's
memory with no copy. A non-contiguous one goes through a contiguous copy that is written back
in place when the transfer completes. A lazy tensor is synced first (its pending graph runs,
``ember.lazy``'s NOTE [lazy sync]), its values are copied out, and a written result is
copied back into it as one recorded ``copy_``: the collective is never a graph node. A tensor
with no data (meta, or a wrapper subclass's outer tensor) is an error.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from typing import Any

import numpy as np

import ember
from ember._tensor import Tensor

_ND = np.ndarray


def check_tensor(t: Any, what: str, name: str = "tensor") -> None:
    if not isinstance(t, Tensor):
        raise TypeError(
            f"ember.distributed.{what}: {name} must be an ember Tensor, got {type(t).__name__}"
        )


def values(t: Tensor, what: str) -> np.ndarray:
    """The values to send, contiguous (the tensor's own array when it already is)."""
    data = t._edata
    if type(data) is _ND:
        return data if data.flags.c_contiguous else np.ascontiguousarray(data)
    return np.ascontiguousarray(t._value_array(f"distributed.{what}"))


def writable(t: Tensor, what: str) -> tuple[np.ndarray, Callable[[], None] | None]:
    """An array MPI may write, and what puts it back into ``t`` afterwards (None when the
    array is ``t``'s own memory). Bumps ``t``'s version: it is written in place."""
    data = t._edata
    t._bump_version()
    if type(data) is _ND:
        if data.flags.c_contiguous:
            return data, None
        tmp = np.ascontiguousarray(data)
        return tmp, lambda: np.copyto(data, tmp)
    tmp = np.array(t._value_array(f"distributed.{what}"), order="C", copy=True)
    return tmp, lambda: store(t, tmp)


def store(t: Tensor, value: np.ndarray) -> None:
    """Write ``value`` into ``t`` in place (a recorded ``copy_`` for a lazy tensor)."""
    data = t._edata
    if type(data) is _ND:
        np.copyto(data, value.reshape(data.shape), casting="unsafe")
        return

    with ember.no_grad():
        t.copy_(ember.from_numpy(np.ascontiguousarray(value).reshape(tuple(t.shape))))


def raw(arr: np.ndarray) -> np.ndarray:
    """A contiguous array's bytes, as a flat uint8 view (MPI moves any dtype as bytes)."""
    return arr.reshape(-1).view(np.uint8)


_CODES: dict[object, int] = {}


def code(key: object) -> int:
    """A small integer that is the same in every process for the same text (or dtype)."""
    found = _CODES.get(key)
    if found is None:
        text = key.name if isinstance(key, np.dtype) else str(key)
        found = _CODES[key] = zlib.crc32(text.encode())
    return found


def shape_code(shape: tuple[int, ...]) -> int:
    """An integer for a shape, the same in every process (ints hash without a random salt)."""
    return hash(shape)


def describe(t: Tensor) -> str:
    return f"{t.dtype.name} tensor of shape {tuple(t.shape)}"
