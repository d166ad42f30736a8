"""CPU kernels of the view ops: NumPy views of the input's data, wrapped with ``wrap_view``
so they share its memory, version counter and base (NOTE [views and versions]).

Strides must be PyTorch's, not NumPy's. Where NumPy's own view gives the same strides
(basic indexing, ``transpose``, reshape of a contiguous array) the kernel uses it; elsewhere
it computes the layout with ``ember/ops/strides.py`` (the Meta rules' arithmetic) and
builds the ndarray over the same memory with ``strided``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ember import dtypes
from ember.backends.cpu._util import Tensor, wrap, wrap_view
from ember.dispatch.keys import DispatchKey
from ember.library import impl
from ember.ops import strides as S
from ember.ops.native.views import view_as_real_layout
from ember.ops.registry import ops
from ember.ops.shapes import wrap_dim

aten = ops.aten
CPU = DispatchKey.CPU
_nd = np.ndarray
_ALL = slice(None)


# --------------------------------------------------------------------------- building views


def _root(arr: np.ndarray) -> np.ndarray:
    while isinstance(arr.base, _nd):
        arr = arr.base
    return arr


def _address(arr: np.ndarray) -> int:
    return int(arr.__array_interface__["data"][0])


def strided(arr: np.ndarray, shape: Sequence[int], strides: Sequence[int], offset: int = 0) -> Any:
    """An ndarray over ``arr``'s memory with ``shape`` and ``strides`` (in elements), starting
    ``offset`` elements after ``arr``'s first element; its ``.base`` chain leads to ``arr``'s."""
    item = arr.itemsize
    byte_strides = tuple(s * item for s in strides)
    if math.prod(shape) == 0:
        offset = 0
    if arr.flags.c_contiguous or arr.flags.f_contiguous:  # exports its buffer: fast path
        return _nd(tuple(shape), arr.dtype, arr, offset * item, byte_strides)
    root = _root(arr)
    start = _address(arr) - _address(root) + offset * item
    return _from_root(arr, root, tuple(shape), byte_strides, start)


def _from_root(
    arr: np.ndarray,
    root: np.ndarray,
    shape: tuple[int, ...],
    byte_strides: tuple[int, ...],
    start: int,
) -> Any:
    """An ndarray of ``arr``'s dtype over ``root``'s memory, ``start`` bytes in."""
    if root.flags.c_contiguous or root.flags.f_contiguous:
        return _nd(shape, arr.dtype, root, start, byte_strides)
    # a root that exports no buffer (rare): NumPy's own as_strided, from the root's address
    iface = dict(root.__array_interface__)
    iface.update(
        data=(iface["data"][0] + start, not arr.flags.writeable),
        shape=shape,
        strides=byte_strides,
        typestr=arr.dtype.str,
        descr=[("", arr.dtype.str)],
    )
    return np.asarray(_Interface(iface, root))


class _Interface:
    __slots__ = ("__array_interface__", "base")

    def __init__(self, iface: dict[str, Any], base: np.ndarray) -> None:
        self.__array_interface__ = iface
        self.base = base


def layout(x: Tensor) -> S.Layout:
    """(shape, strides, offset 0): a view's layout relative to ``x``'s first element."""
    arr = x._edata
    if arr.size > 1 or x._base is not None:  # as Tensor.stride() reads them
        item = arr.itemsize
        return arr.shape, tuple(s // item for s in arr.strides), 0
    return arr.shape, S.contiguous(arr.shape), 0  # NumPy leaves these strides arbitrary


def _build(self: Tensor, lay: S.Layout) -> Tensor:
    arr = strided(self._edata, lay[0], lay[1], lay[2])
    t = wrap_view(self, arr)
    if not arr.size:  # ``_view``, inlined (expand of a gradient comes here)
        t.__dict__["_offset"] = self.storage_offset() + lay[2]
    return t


def _view(self: Tensor, arr: np.ndarray, offset: int = 0) -> Tensor:
    """``wrap_view``, remembering where an empty view starts (NOTE [empty views]): ``offset``
    elements after ``self``'s first."""
    t = wrap_view(self, arr)
    if not arr.size:
        t.__dict__["_offset"] = self.storage_offset() + offset
    return t


# NOTE [empty views]
# A view's storage offset is PyTorch's even when it holds no elements
# (``ember.empty(0, 3)[:, 1].storage_offset()`` is 1, ``ember.empty(3, 4)[3:]``'s 12). NumPy
# can't say it: an empty ndarray's address is its base's whatever it was sliced from, and one
# starting past the end of its buffer can't be made at all. So kernels build empty views at
# the base's address and keep the offset on the tensor (``_offset``, read by
# ``Tensor.storage_offset``); every view kernel whose result may be empty goes through
# ``_view`` or ``_build``, which set it.


def _canonical(arr: np.ndarray) -> bool:
    """Holding more than one element, C-contiguous, and with PyTorch's strides for size-1
    dims too (NumPy's flag ignores those)."""
    if not arr.flags.c_contiguous or arr.size <= 1:
        return False
    shape = arr.shape
    if 1 not in shape:
        return True
    item = arr.itemsize
    return arr.strides == tuple(s * item for s in S.contiguous(shape))


# NOTE [small views]: NumPy's strides of arrays with at most one element are arbitrary (0 for
# empty ones), so views of such tensors always take the layout path; NumPy's own views are
# used only for inputs holding more than one element.


# --------------------------------------------------------------------------- view / reshape


def _view_array(self: Tensor, size: Sequence[int]) -> np.ndarray:
    arr = self._edata
    if _canonical(arr):
        try:
            out = arr.reshape(size)  # PyTorch's strides for a contiguous input
        except (ValueError, TypeError):
            pass
        else:
            if out.shape != size:  # a -1 inferred, or NumPy read another negative as -1
                S.infer_size(size, arr.size)
            return out
    shape, st, _ = S.view(layout(self), size)  # raises PyTorch's errors
    return strided(arr, shape, st)


@impl(aten.view.default, CPU)
def view(self: Tensor, size: Sequence[int]) -> Tensor:
    arr = self._edata
    if arr.flags.c_contiguous and 1 not in arr.shape and arr.size:  # common case, inlined
        try:
            out = arr.reshape(size)
        except (ValueError, TypeError):
            pass
        else:
            if out.shape != size:  # a -1 inferred, or NumPy read another negative as -1
                S.infer_size(size, arr.size)
            return wrap_view(self, out)
    arr = _view_array(self, size)
    t = wrap_view(self, arr)
    if not arr.size:  # NOTE [empty views] (``_view``, inlined: backward passes view here)
        t.__dict__["_offset"] = self.storage_offset()
    return t


@impl(aten._unsafe_view.default, CPU)
def _unsafe_view(self: Tensor, size: Sequence[int]) -> Tensor:
    return wrap(_view_array(self, size))  # shares memory but is not a view (PyTorch's too)


@impl(aten.view.dtype, CPU)
def view_dtype(self: Tensor, dtype: dtypes.dtype) -> Tensor:
    arr = self._edata
    shape, st, offset = S.view_dtype(
        (tuple(arr.shape), self.stride(), self.storage_offset()), self.dtype, dtype
    )
    out = arr.view(dtype.np)
    t = wrap_view(self, out if arr.size > 1 else strided(out, shape, st))
    if not arr.size:  # NOTE [empty views], counted in the new dtype's elements
        t.__dict__["_offset"] = offset
    return t


@impl(aten.alias.default, CPU)
def alias(self: Tensor) -> Tensor:
    arr = self._edata
    return _view(self, arr.view() if arr.size > 1 else strided(arr, *layout(self)))


@impl(aten.as_strided.default, CPU)
def as_strided(
    self: Tensor, size: Sequence[int], stride: Sequence[int], storage_offset: int | None = None
) -> Tensor:
    arr = self._edata
    root = _root(arr)
    offset = self.storage_offset() if storage_offset is None else storage_offset
    item = arr.itemsize
    S.check_as_strided(size, stride, offset, root.nbytes // item)
    byte_strides = tuple(s * item for s in stride)
    if math.prod(size) == 0:  # NOTE [empty views]
        t = wrap_view(self, _from_root(arr, root, tuple(size), byte_strides, 0))
        t.__dict__["_offset"] = offset
        return t
    return wrap_view(self, _from_root(arr, root, tuple(size), byte_strides, offset * item))


# --------------------------------------------------------------------------- dims


@impl(aten.transpose.int, CPU)
def transpose(self: Tensor, dim0: int, dim1: int) -> Tensor:
    arr = self._edata
    if arr.size <= 1:
        return _build(self, S.transpose(layout(self), dim0, dim1))
    n = arr.ndim
    return wrap_view(self, arr.swapaxes(wrap_dim(dim0, n), wrap_dim(dim1, n)))


@impl(aten.t.default, CPU)
def t(self: Tensor) -> Tensor:
    arr = self._edata
    if arr.ndim > 2:
        S.check_t(arr.ndim)  # raises
    if arr.size <= 1:
        return _build(self, S.transpose(layout(self), 0, -1) if arr.ndim == 2 else layout(self))
    return wrap_view(self, arr.T)


@impl(aten.permute.default, CPU)
def permute(self: Tensor, dims: Sequence[int]) -> Tensor:
    arr = self._edata
    if arr.size <= 1:
        return _build(self, S.permute(layout(self), dims))
    return wrap_view(self, arr.transpose(S.permutation(dims, arr.ndim)))


@impl(aten.expand.default, CPU)
def expand(self: Tensor, size: Sequence[int], *, implicit: bool = False) -> Tensor:
    return _build(self, S.expand(layout(self), size))


@impl(aten.unsqueeze.default, CPU)
def unsqueeze(self: Tensor, dim: int) -> Tensor:
    arr = self._edata
    if _canonical(arr):  # NumPy's reshape gives PyTorch's strides here
        shape = arr.shape
        d = wrap_dim(dim, len(shape) + 1)
        return wrap_view(self, arr.reshape(shape[:d] + (1,) + shape[d:]))
    return _build(self, S.unsqueeze(layout(self), dim))


def _squeeze(self: Tensor, dims: Sequence[int] | None) -> Tensor:
    arr = self._edata
    if arr.size <= 1:
        return _build(self, S.squeeze(layout(self), dims))
    drop = S.squeeze_dims(arr.shape, dims)
    if not drop:
        return wrap_view(self, arr.view())
    key = tuple(0 if i in drop else _ALL for i in range(arr.ndim))
    return wrap_view(self, arr[key])


@impl(aten.squeeze.default, CPU)
def squeeze(self: Tensor) -> Tensor:
    return _squeeze(self, None)


@impl(aten.squeeze.dim, CPU)
def squeeze_dim(self: Tensor, dim: int) -> Tensor:
    return _squeeze(self, (dim,))


@impl(aten.squeeze.dims, CPU)
def squeeze_dims(self: Tensor, dim: Sequence[int]) -> Tensor:
    return _squeeze(self, dim)


# --------------------------------------------------------------------------- sub-ranges


@impl(aten.select.int, CPU)
def select(self: Tensor, dim: int, index: int) -> Tensor:
    arr = self._edata
    if type(index) is not int:
        index = int(index)
    shape = arr.shape
    if dim == 0 and shape and -shape[0] <= index < shape[0] and arr.size > 1:
        return wrap_view(self, arr[index, ...])
    if arr.size <= 1:
        return _build(self, S.select(layout(self), dim, index))
    d, i = S.select_index(shape, dim, index)
    return wrap_view(self, arr[(_ALL,) * d + (i, ...)])


@impl(aten.slice.Tensor, CPU)
def slice_(
    self: Tensor, dim: int = 0, start: int | None = None, end: int | None = None, step: int = 1
) -> Tensor:
    arr = self._edata
    if arr.size <= 1:
        return _build(self, S.slice_(layout(self), dim, start, end, step))
    if dim == 0 and step == 1:  # NumPy clamps bounds as PyTorch does
        out = arr[start:end]
    else:
        d, s, e, _ = S.slice_bounds(arr.shape, dim, start, end, step)
        out = arr[(_ALL,) * d + (slice(s, e, step),)]
    if not out.size:  # NOTE [empty views]: NumPy's doesn't say where it starts
        return _build(self, S.slice_(layout(self), dim, start, end, step))
    return wrap_view(self, out)


@impl(aten.unfold.default, CPU)
def unfold(self: Tensor, dimension: int, size: int, step: int) -> Tensor:
    return _build(self, S.unfold(layout(self), dimension, size, step))


@impl(aten.diagonal.default, CPU)
def diagonal(self: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    return _build(self, S.diagonal(layout(self), offset, dim1, dim2))


@impl(aten.unbind.int, CPU)
def unbind(self: Tensor, dim: int = 0) -> tuple[Tensor, ...]:
    arr = self._edata
    d = S.unbind_dim(arr.ndim, dim)
    if arr.size <= 1:
        lay = layout(self)
        return tuple(_build(self, S.select(lay, d, i)) for i in range(arr.shape[d]))
    lead = (_ALL,) * d
    return tuple(wrap_view(self, arr[lead + (i, ...)]) for i in range(arr.shape[d]))


def _split(self: Tensor, sizes: Sequence[int], d: int) -> tuple[Tensor, ...]:
    arr = self._edata
    small = arr.size <= 1
    lay = layout(self)
    lead = (_ALL,) * d
    out = []
    start = 0
    for n in sizes:
        if small:
            out.append(_build(self, S.slice_(lay, d, start, start + n, 1)))
        elif n:
            out.append(wrap_view(self, arr[lead + (slice(start, start + n),)]))
        else:  # NOTE [empty views]
            out.append(_build(self, S.slice_(lay, d, start, start, 1)))
        start += n
    return tuple(out)


@impl(aten.split.Tensor, CPU)
def split(self: Tensor, split_size: int, dim: int = 0) -> tuple[Tensor, ...]:
    d = S.split_dim(self._edata.ndim, dim)
    return _split(self, S.split_sizes(self._edata.shape[d], split_size), d)


@impl(aten.split_with_sizes.default, CPU)
def split_with_sizes(self: Tensor, split_sizes: Sequence[int], dim: int = 0) -> tuple[Tensor, ...]:
    d = S.split_dim(self._edata.ndim, dim)
    S.check_split_with_sizes(self._edata.shape[d], split_sizes)
    return _split(self, split_sizes, d)


# --------------------------------------------------------------------------- complex numbers


@impl(aten.view_as_real.default, CPU)
def view_as_real(self: Tensor) -> Tensor:
    """A complex tensor's (real, imaginary) pairs along a new last dim, in the real dtype, over
    the same memory (NOTE [complex views] in ``ember/ops/native/views.py``)."""
    arr = self._edata
    shape, strides, _ = view_as_real_layout(layout(self), self.dtype)
    parts = arr.real  # the real dtype, and arr's writeability, for the new array
    item = parts.itemsize
    root = _root(arr)
    start = _address(arr) - _address(root) if math.prod(shape) else 0
    t = wrap_view(self, _from_root(parts, root, shape, tuple(s * item for s in strides), start))
    if not math.prod(shape):  # NOTE [empty views], in real elements
        t.__dict__["_offset"] = 2 * self.storage_offset()
    return t
