"""CPU kernels of the indexing ops: NumPy advanced indexing, which places the indexed
dims by the same rule as PyTorch (adjacent index tensors in place, else in front)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ember.backends import strides as S
from ember.backends.cpu._util import Tensor, as_array, data, wrap
from ember.backends.cpu.copies import copy_into, empty_like
from ember.dispatch.keys import DispatchKey
from ember.library import impl
from ember.ops.registry import ops

aten = ops.aten
CPU = DispatchKey.CPU
_ALL = slice(None)
_INDEX_KINDS = {
    np.dtype(np.int64): False,
    np.dtype(np.int32): False,
    np.dtype(np.uint8): True,
    np.dtype(np.bool_): True,
}  # fmt: skip  (dtype -> is a mask)


def numpy_key(shape: tuple[int, ...], indices: Sequence[Tensor | None]) -> tuple[Any, ...]:
    """The NumPy index tuple for ``index``/``index_put`` entries, after PyTorch's checks."""
    key: list[Any] = []
    entries: list[S.IndexEntry] = []
    for t in indices:
        if t is None:
            key.append(_ALL)
            entries.append(None)
            continue
        arr = data(t)
        is_mask = _INDEX_KINDS.get(arr.dtype)
        if is_mask is None:
            raise IndexError(f"index: {S.INDEX_DTYPE_ERROR}, got {t.dtype}")
        if is_mask and arr.dtype != np.bool_:
            arr = arr.astype(np.bool_)  # uint8 masks (deprecated in PyTorch, still accepted)
        key.append(arr)
        entries.append((is_mask, arr.shape))
    S.check_indices(shape, entries)
    return tuple(key)


def _bounds_error(e: IndexError, op: str) -> IndexError:
    return IndexError(f"{op}: {str(e).replace('axis', 'dimension')}")


@impl(aten.index.Tensor, CPU)
def index(self: Tensor, indices: Sequence[Tensor | None]) -> Tensor:
    arr = self._data
    key = numpy_key(arr.shape, indices)
    try:
        out = arr[key]
    except IndexError as e:
        raise _bounds_error(e, "index") from None
    if all(t is None for t in indices):
        out = np.array(out)  # basic indexing gives a view; index always copies
    elif type(out) is np.ndarray and not out.flags.c_contiguous:
        # NumPy lays out x[:, idx] with an index after a slice index-dims first; PyTorch's
        # result is contiguous (x[:, idx].view(-1) works there): copy into that layout
        out = np.ascontiguousarray(out)
    return wrap(as_array(out))


def put(dst: np.ndarray, self: Tensor, indices: Any, values: Tensor, accumulate: bool) -> None:
    """Write ``values`` into ``dst`` (``self``'s data or a copy of it) at ``indices``."""
    S.check_put_dtypes(self.dtype, values.dtype)
    key = numpy_key(dst.shape, indices)
    v = data(values)
    try:
        if accumulate:
            np.add.at(dst, key, v)
        else:
            dst[key] = v
    except IndexError as e:
        raise _bounds_error(e, "index_put_") from None
    except ValueError:
        target = dst[key].shape
        raise RuntimeError(
            f"index_put_: shape mismatch: value tensor of shape {list(v.shape)} cannot be "
            f"broadcast to indexing result of shape {list(target)}"
        ) from None


@impl(aten.index_put_.default, CPU)
def index_put_(
    self: Tensor, indices: Sequence[Tensor | None], values: Tensor, accumulate: bool = False
) -> Tensor:
    put(self._data, self, indices, values, accumulate)
    self._bump_version()
    return self


@impl(aten.index_put.default, CPU)
def index_put(
    self: Tensor, indices: Sequence[Tensor | None], values: Tensor, accumulate: bool = False
) -> Tensor:
    out = empty_like(self, op="index_put")  # laid out as self, as PyTorch's clone
    copy_into(out, self._data)
    put(out, self, indices, values, accumulate)
    return wrap(out)
