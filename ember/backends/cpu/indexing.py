"""CPU kernels of the indexing ops: NumPy advanced indexing, which places the indexed
dims by the same rule as PyTorch (adjacent index tensors in place, else in front)."""

from __future__ import annotations

import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, nullcontext
from typing import Any

import numpy as np

from ember import dtypes
from ember.backends.cpu._util import Tensor, as_array, data, wrap
from ember.backends.cpu.copies import copy_into, empty_like
from ember.backends.meta.copies import check_scalar
from ember.dispatch.keys import DispatchKey
from ember.library import impl
from ember.ops import strides as S
from ember.ops.native.indexing import (
    check_masked_scatter,
    check_masked_select,
    check_take,
    index_along,
)
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


@contextmanager
def _out_of_range_is_an_error() -> Iterator[None]:
    """Older NumPy (2.0 and 2.1 do) warns with a DeprecationWarning and goes on where an
    index out of range selects nothing from an empty array; newer NumPy raises IndexError.
    This makes the warning an error, so both reach the same handler and no warning reaches
    the user. Only empty arrays pay for it."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        yield


def _bounds_error(e: IndexError | DeprecationWarning, op: str) -> IndexError:
    return IndexError(f"{op}: {str(e).replace('axis', 'dimension')}")


def _empty_result(
    shape: tuple[int, ...], indices: Sequence[Tensor | None]
) -> tuple[int, ...] | None:
    """The shape of an indexing result that has no elements, or None. PyTorch checks an index
    as it reads or writes an element, so an out-of-range index that selects nothing (the
    other dims are empty) is no error; NumPy checks every index."""
    entries: list[S.IndexEntry] = []
    for t in indices:
        if t is None:
            entries.append(None)
        elif data(t).dtype in (np.bool_, np.uint8):
            return None  # a mask's result shape depends on its values
        else:
            entries.append((False, tuple(t.shape)))
    result = S.index_shape(shape, entries)
    return result if 0 in result else None


@impl(aten.index.Tensor, CPU)
def index(self: Tensor, indices: Sequence[Tensor | None]) -> Tensor:
    arr = self._edata
    key = numpy_key(arr.shape, indices)
    try:
        if arr.size:
            out = arr[key]
        else:
            with _out_of_range_is_an_error():
                out = arr[key]
    except (IndexError, DeprecationWarning) as e:
        empty = _empty_result(arr.shape, indices)
        if empty is None:
            raise _bounds_error(e, "index") from None
        out = np.empty(empty, arr.dtype)
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
        with _out_of_range_is_an_error() if not dst.size else nullcontext():
            if accumulate:
                np.add.at(dst, key, v)
            else:
                dst[key] = v
    except (IndexError, DeprecationWarning) as e:
        empty = _empty_result(dst.shape, indices)
        if empty is None:
            raise _bounds_error(e, "index_put_") from None
        try:  # nothing to write; the values must still fit
            np.broadcast_to(v, empty)
        except ValueError:
            raise RuntimeError(
                f"index_put_: shape mismatch: value tensor of shape {list(v.shape)} cannot be "
                f"broadcast to indexing result of shape {list(empty)}"
            ) from None
    except ValueError:
        empty = _empty_result(dst.shape, indices)
        target = empty if empty is not None else dst[key].shape
        raise RuntimeError(
            f"index_put_: shape mismatch: value tensor of shape {list(v.shape)} cannot be "
            f"broadcast to indexing result of shape {list(target)}"
        ) from None


@impl(aten.index_put_.default, CPU)
def index_put_(
    self: Tensor, indices: Sequence[Tensor | None], values: Tensor, accumulate: bool = False
) -> Tensor:
    put(self._edata, self, indices, values, accumulate)
    self._bump_version()
    return self


@impl(aten.index_put.default, CPU)
def index_put(
    self: Tensor, indices: Sequence[Tensor | None], values: Tensor, accumulate: bool = False
) -> Tensor:
    out = empty_like(self, op="index_put")  # laid out as self, as PyTorch's clone
    copy_into(out, self._edata)
    put(out, self, indices, values, accumulate)
    return wrap(out)


# --------------------------------------------------------------------------- take, masks,
# index_add/copy/fill (checks shared with the Meta rules: ember/ops/native/indexing.py)


@impl(aten.take.default, CPU)
def take(self: Tensor, index: Tensor) -> Tensor:
    check_take(self, index)
    flat, idx = self._edata.reshape(-1), index._edata
    n = flat.size
    if idx.size and n == 0:
        raise IndexError("take(): tried to take from an empty tensor")
    if idx.size and (idx.min() < -n or idx.max() >= n):
        bad = idx[(idx < -n) | (idx >= n)].flat[0]
        raise IndexError(f"take(): out of range: tried to access index {bad} on a tensor of {n} "
                         "elements.")  # fmt: skip
    return wrap(np.take(flat, idx) if idx.ndim else np.asarray(flat[idx]).copy())


@impl(aten.masked_select.default, CPU)
def masked_select(self: Tensor, mask: Tensor) -> Tensor:
    shape = check_masked_select(self, mask)
    d, m = self._edata, mask._edata
    if d.shape != shape:
        d = np.broadcast_to(d, shape)
    if m.shape != shape:
        m = np.broadcast_to(m, shape)
    return wrap(d[m])


def _dim_key(ndim: int, d: int, index: Any) -> tuple[Any, ...]:
    """The NumPy index of positions ``index`` along dim ``d`` (every other dim whole)."""
    return (_ALL,) * d + (index,)


def _checked_index(
    out: np.ndarray, d: int, index: Tensor, op: str, error: type[Exception], *, negative: bool
) -> np.ndarray:
    """``index`` flat, every position checked against ``out``'s dim ``d`` (from ``-size``
    where ``negative`` counts from the end): ``error`` naming ``op`` and the first bad one."""
    idx = index._edata.reshape(-1)
    size = out.shape[d] if out.ndim else 1
    low = -size if negative else 0
    if idx.size and (idx.min() < low or idx.max() >= size):
        bad = idx[(idx < low) | (idx >= size)][0]
        raise error(f"{op}(): index {bad} is out of bounds for dimension {d} with size {size}")
    return idx  # type: ignore[no-any-return]


def _index_add(out: np.ndarray, d: int, index: Tensor, source: Tensor, alpha: Any) -> None:
    idx = _checked_index(out, d, index, "index_add_", RuntimeError, negative=False)
    src = source._edata
    if alpha != 1:
        a = alpha if out.dtype.kind in "fc" else int(alpha)
        # an integer alpha wraps into the dtype, as PyTorch's cast (-2 is 254 in uint8)
        src = src * np.asarray(a).astype(out.dtype)
    if out.ndim == 0:
        out[...] += src.reshape(())
        return
    np.add.at(out, _dim_key(out.ndim, d, idx), src.astype(out.dtype, copy=False))


def _index_copy(out: np.ndarray, d: int, index: Tensor, source: Tensor) -> None:
    idx = _checked_index(out, d, index, "index_copy_", IndexError, negative=False)
    if out.ndim == 0:
        out[...] = source._edata.reshape(())
        return
    out[_dim_key(out.ndim, d, idx)] = source._edata


def _index_fill(out: np.ndarray, d: int, index: Tensor, value: Any, dt: Any) -> None:
    idx = _checked_index(out, d, index, "index_fill_", IndexError, negative=True)
    v = np.asarray(check_scalar(value, dt, "index_fill_")).astype(out.dtype)
    if out.ndim == 0:
        if idx.size:
            out[...] = v
        return
    out[_dim_key(out.ndim, d, idx)] = v


def _copy_of(self: Tensor) -> np.ndarray:
    out = empty_like(self)
    copy_into(out, self._edata)
    return out


def _contiguous_copy_of(self: Tensor) -> np.ndarray:
    """A contiguous copy: index_add's and index_copy's result, as PyTorch's (index_fill's
    is a clone, laid out as ``self``)."""
    out = np.empty(self._edata.shape, self._edata.dtype)
    copy_into(out, self._edata)
    return out


def _scalar_value(value: Any) -> Any:
    return value._edata.item() if isinstance(value, Tensor) else value


_ADD_INDEX = (dtypes.int64, dtypes.int32)
_LONG = (dtypes.int64,)


@impl(aten.index_add.default, CPU)
def index_add(self: Tensor, dim: int, index: Tensor, source: Tensor, *, alpha: Any = 1) -> Tensor:
    d = index_along("index_add_", self, dim, index, source, _ADD_INDEX)
    out = _contiguous_copy_of(self)
    _index_add(out, d, index, source, alpha)
    return wrap(out)


@impl(aten.index_add_.default, CPU)
def index_add_(self: Tensor, dim: int, index: Tensor, source: Tensor, *, alpha: Any = 1) -> Tensor:
    d = index_along("index_add_", self, dim, index, source, _ADD_INDEX)
    _index_add(self._edata, d, index, source, alpha)
    self._bump_version()
    return self


@impl(aten.index_copy.default, CPU)
def index_copy(self: Tensor, dim: int, index: Tensor, source: Tensor) -> Tensor:
    d = index_along("index_copy_", self, dim, index, source, _LONG)
    out = _contiguous_copy_of(self)
    _index_copy(out, d, index, source)
    return wrap(out)


@impl(aten.index_copy_.default, CPU)
def index_copy_(self: Tensor, dim: int, index: Tensor, source: Tensor) -> Tensor:
    d = index_along("index_copy_", self, dim, index, source, _LONG)
    _index_copy(self._edata, d, index, source)
    self._bump_version()
    return self


def _index_fill_kernels(inplace: bool) -> Any:
    def kernel(self: Tensor, dim: int, index: Tensor, value: Any) -> Tensor:
        d = index_along("index_fill_", self, dim, index, None, _LONG, value=value)
        v = _scalar_value(value)
        out = self._edata if inplace else _copy_of(self)
        _index_fill(out, d, index, v, self.dtype)
        if inplace:
            self._bump_version()
            return self
        return wrap(out)

    kernel.__name__ = "index_fill_" if inplace else "index_fill"
    return kernel


for _ov in ("int_Scalar", "int_Tensor"):
    impl(getattr(aten.index_fill, _ov), CPU, _index_fill_kernels(False))
    impl(getattr(aten.index_fill_, _ov), CPU, _index_fill_kernels(True))


def _masked_scatter(out: np.ndarray, mask: np.ndarray, source: Tensor) -> None:
    m = mask if mask.shape == out.shape else np.broadcast_to(mask, out.shape)
    count = int(np.count_nonzero(m))
    src = source._edata.reshape(-1)
    if src.size < count:
        raise RuntimeError(
            f"masked_scatter: Number of elements of source < number of ones in mask (source has "
            f"{src.size}, the mask selects {count})"
        )
    out[m] = src[:count]


@impl(aten.masked_scatter.default, CPU)
def masked_scatter(self: Tensor, mask: Tensor, source: Tensor) -> Tensor:
    shape = check_masked_scatter(self, mask, source, inplace=False)
    out = np.empty(shape, self._edata.dtype)  # contiguous, as PyTorch's clone
    np.copyto(out, self._edata)
    _masked_scatter(out, mask._edata, source)
    return wrap(out)


@impl(aten.masked_scatter_.default, CPU)
def masked_scatter_(self: Tensor, mask: Tensor, source: Tensor) -> Tensor:
    check_masked_scatter(self, mask, source, inplace=True)
    _masked_scatter(self._edata, mask._edata, source)
    self._bump_version()
    return self
