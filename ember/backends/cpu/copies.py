"""CPU kernels of the copies ops (decompositions: ``ember/ops/native/copies_composite.py``).

Shape, dtype and layout checks are shared with the Meta rules (``ember/backends/meta/copies.py``);
only the checks that read values (index bounds, memory overlap) live here. New tensors are
laid out as NOTE [layout of new tensors] says.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from ember._memory_format import (
    is_non_overlapping_and_dense,
    result_strides,
    suggest_memory_format,
)
from ember._shape_only import ShapeOnlyArray, contiguous_strides
from ember._tensor import Tensor, wrap, wrap_shape_only, wrap_view
from ember.backends.cpu._util import quiet_block
from ember.backends.cpu.shell_dtypes import SHELL_NP, refusal
from ember.backends.cpu.views import _from_root
from ember.backends.meta.copies import (
    cat_layout,
    cat_strides,
    check_copy,
    check_fill_value,
    check_gather,
    check_reduce,
    check_scalar,
    check_scatter,
    check_tri,
    detach_,
    flip_dims,
    index_select_shape,
    masked_fill_checks,
    no_meta_data,
    repeat_shape,
    roll_args,
    set_,
    set_kernels,
    set_layout,
    storage_bytes_needed,
)
from ember.device import device
from ember.dispatch import dispatcher
from ember.dispatch.keys import DispatchKey
from ember.library import impl
from ember.ops.native.copies import to_copy_options
from ember.ops.native.copies_composite import (
    block_diag_plan,
    check_repeats,
    check_stack,
    diag_embed_shape,
    rot90_plan,
)
from ember.ops.native.copies_composite import stack as composite_stack
from ember.ops.registry import ops
from ember.ops.shapes import wrap_dim

aten = ops.aten
CPU = DispatchKey.CPU
CIA = DispatchKey.CompositeImplicitAutograd
_nd = np.ndarray
_copyto = np.copyto

# --------------------------------------------------------------------------- helpers


def _array(x: Tensor, op: str) -> np.ndarray:
    d = x._edata
    if type(d) is not _nd:
        raise no_meta_data(op)
    return d


def empty_strided(shape: tuple[int, ...], strides: tuple[int, ...], npdt: Any) -> np.ndarray:
    """An uninitialised ndarray with exactly these strides (in elements), owning its memory."""
    if strides == contiguous_strides(shape):
        return np.empty(shape, npdt)
    numel = int(np.prod(shape))
    buf = np.empty(max(numel, 1), npdt)
    item = buf.itemsize
    return np.ndarray(shape, npdt, buffer=buf, strides=tuple(s * item for s in strides))


def empty_like(x: Tensor, npdt: Any = None, mf: Any = None, op: str = "") -> np.ndarray:
    """An uninitialised ndarray shaped like ``x``, laid out as ``mf`` says (default preserve)."""
    d = x._edata
    shape = d.shape
    strides = x.stride()
    if strides != contiguous_strides(shape) or mf is not None:
        strides = result_strides(shape, strides, mf, op)
    return empty_strided(shape, strides, d.dtype if npdt is None else npdt)


_warned_complex = [False]


def cast(a: np.ndarray, npdt: np.dtype[Any]) -> np.ndarray:
    """``a`` converted to ``npdt`` as PyTorch converts: complex to real keeps the real part
    (with PyTorch's warning), floats reach uint8 through int64 (wrapping negatives)."""
    if a.dtype is npdt or a.dtype == npdt:
        return a
    kind, to = a.dtype.kind, npdt.kind
    if kind == "c" and to not in "cb":
        warnings.warn(
            "Casting complex values to real discards the imaginary part", UserWarning, stacklevel=3
        )
        a = a.real
        kind = "f"
    with quiet_block():  # NaN/inf to integers: as PyTorch, no error
        if kind == "f" and to == "u":
            a = a.astype(np.int64)
        return a.astype(npdt)


def copy_into(dst: np.ndarray, src: np.ndarray) -> None:
    """Write ``src`` (broadcast) into ``dst``, converting its dtype as PyTorch does."""
    _copyto(dst, src if src.dtype == dst.dtype else cast(src, dst.dtype))


def _full_index(index: np.ndarray, dim: int) -> tuple[Any, ...]:
    """The NumPy index that addresses ``out[i][j][index[i][j]]...`` for every index element."""
    grids = list(np.indices(index.shape, sparse=True))
    grids[dim] = index
    return tuple(grids)


def _check_bounds(index: np.ndarray, size: int, dim: int, op: str) -> None:
    if index.size and (index.min() < 0 or index.max() >= size):
        bad = index[(index < 0) | (index >= size)].flat[0]
        raise RuntimeError(
            f"{op}: index {bad} is out of bounds for dimension {dim} with size {size}"
        )


def _check_partial_overlap(dst: np.ndarray, src: np.ndarray, op: str) -> None:
    """PyTorch refuses to copy between dense tensors whose memory partly overlaps."""
    if not np.may_share_memory(dst, src):
        return
    ranges = []
    for a in (dst, src):
        item = a.itemsize
        shape, strides = a.shape, tuple(s // item for s in a.strides)
        if not is_non_overlapping_and_dense(shape, strides):
            return  # PyTorch can't tell either: it lets the copy run
        start = a.__array_interface__["data"][0]
        ranges.append((start, start + a.nbytes))
    if ranges[0] != ranges[1]:
        raise RuntimeError(
            f"{op}: unsupported operation: some elements of the input tensor and the written-to "
            "tensor refer to a single memory location. Please clone() the tensor before "
            "performing the operation."
        )


# --------------------------------------------------------------------------- copies of one tensor


@impl(aten.clone.default, CPU)
def clone(self: Tensor, *, memory_format: Any = None) -> Tensor:
    d = self._edata
    out = empty_like(self, mf=memory_format, op="clone")
    _copyto(out, d)
    return wrap(out)


@impl(aten.lift_fresh_copy.default, CPU)
def lift_fresh_copy(self: Tensor) -> Tensor:
    return clone(self)


@impl(aten.lift_fresh.default, CPU)
def lift_fresh(self: Tensor) -> Tensor:
    return self


@impl(aten._to_copy.default, CPU)
def _to_copy(self: Tensor, **options: Any) -> Tensor:
    dtype, kind, memory_format = to_copy_options(**options)
    d = self._edata
    npdt = d.dtype if dtype is None else dtype.np
    if kind == "meta":
        strides = result_strides(d.shape, self.stride(), memory_format, "_to_copy")
        return wrap_shape_only(ShapeOnlyArray(d.shape, npdt, strides))
    if kind is not None and kind != "cpu":
        # another device's own _to_copy kernel takes a cpu tensor in (the Lazy key's does)
        return aten._to_copy.default.redispatch(dispatcher.device_keys(kind), self, **options)
    out = empty_like(self, npdt, memory_format, "_to_copy")
    copy_into(out, d)
    return wrap(out)


@impl(aten._to_copy.out, CPU)
def _to_copy_out(
    self: Tensor, *, non_blocking: bool = False, memory_format: Any = None, out: Tensor
) -> Tensor:
    d = self._edata
    if out._edata.shape != d.shape:
        out._edata = np.empty(d.shape, out._edata.dtype)
    copy_into(_array(out, "_to_copy.out"), d)
    out._bump_version()
    return out


@impl(aten.detach.default, CPU)
def detach(self: Tensor) -> Tensor:
    d = self._edata
    t = wrap_view(self, d.view())
    del t._base  # shares data and version counter, but is no view: as PyTorch's, _base None
    if not d.size:  # NOTE [empty views] in views.py
        t.__dict__["_offset"] = self.storage_offset()
    return t


impl(aten.detach_.default, CPU, detach_)
impl(aten.set_.source_Tensor, CPU, set_)

_CPU_DEVICE = device("cpu")


@impl(aten.set_.source_Storage_storage_offset, CPU)
def set_storage_offset(
    self: Tensor,
    source: Any,
    storage_offset: int,
    size: Sequence[int],
    stride: Sequence[int] = (),
) -> Tensor:
    """``self`` over the bytes of the storage ``source``: ``size`` and ``stride`` from
    ``storage_offset`` elements of ``self``'s dtype in (the bytes read as that dtype)."""
    size, stride = set_layout(_CPU_DEVICE, source, storage_offset, size, stride)
    item = self._edata.itemsize
    need = storage_bytes_needed(size, stride, storage_offset, item)
    root = source._owner  # the ndarray owning the storage's memory (NOTE [one storage object])
    if need > source.nbytes():
        raise RuntimeError(
            f"set_: sizes {list(size)}, strides {list(stride)}, storage offset "
            f"{storage_offset}, and itemsize {item} requiring a storage size of {need} are out "
            f"of bounds for storage of size {source.nbytes()}; ember cannot grow a storage in "
            "place (PyTorch may resize it): make one large enough first"
        )
    empty = math.prod(size) == 0
    start = 0 if empty else storage_offset * item
    self._edata = _from_root(self._edata, root, size, tuple(st * item for st in stride), start)
    if empty:
        self.__dict__["_offset"] = storage_offset
    self._bump_version()
    return self


_set_storage, _set_tensor_storage_offset = set_kernels(set_storage_offset)
impl(aten.set_.source_Storage, CPU, _set_storage)
impl(aten.set_.source_Tensor_storage_offset, CPU, _set_tensor_storage_offset)


@impl(aten.set_.default, CPU)
def set_empty(self: Tensor) -> Tensor:
    """``set_()``: empty, on a new storage of no bytes."""
    self._edata = np.empty(0, self._edata.dtype)
    self.__dict__.pop("_offset", None)
    self._bump_version()
    return self


# --------------------------------------------------------------------------- writing values


@impl(aten.copy_.default, CPU)
def copy_(self: Tensor, src: Tensor, non_blocking: bool = False) -> Tensor:
    d, s = self._edata, src._edata
    if d.shape != s.shape or 0 in d.strides:
        check_copy(self, src)
    if self is not src:
        _check_partial_overlap(d, s, "copy_")
        copy_into(d, s)
    self._bump_version()
    return self


@impl(aten.copy.default, CPU)
def copy(self: Tensor, src: Tensor, non_blocking: bool = False) -> Tensor:
    check_copy(self, src, "copy")
    out = empty_like(self)
    copy_into(out, src._edata)
    return wrap(out)


@impl(aten.fill_.Scalar, CPU)
def fill_(self: Tensor, value: Any) -> Tensor:
    self._edata[...] = check_scalar(value, self.dtype, "fill_")
    self._bump_version()
    return self


@impl(aten.fill_.Tensor, CPU)
def fill_tensor_(self: Tensor, value: Tensor) -> Tensor:
    check_fill_value(value)
    copy_into(self._edata, _array(value, "fill_"))
    self._bump_version()
    return self


@impl(aten.zero_.default, CPU)
def zero_(self: Tensor) -> Tensor:
    self._edata[...] = 0
    self._bump_version()
    return self


@impl(aten.fill.Scalar, CPU)
def fill(self: Tensor, value: Any) -> Tensor:
    out = empty_like(self)
    out[...] = check_scalar(value, self.dtype, "fill")
    return wrap(out)


@impl(aten.fill.Tensor, CPU)
def fill_tensor(self: Tensor, value: Tensor) -> Tensor:
    check_fill_value(value)
    out = empty_like(self)
    copy_into(out, value._edata)
    return wrap(out)


@impl(aten.zero.default, CPU)
def zero(self: Tensor) -> Tensor:
    return wrap(np.zeros_like(self._edata, order="K"))


def _masked_fill(self: Tensor, mask: Tensor, value: Any) -> Tensor:
    d = self._edata
    shape = masked_fill_checks(self, mask, value, "masked_fill")
    out = np.empty(shape, d.dtype)
    _copyto(out, d)
    v = check_scalar(value, self.dtype, "masked_fill")
    _copyto(out, cast(np.asarray(v), d.dtype), where=mask._edata)
    return wrap(out)


impl(aten.masked_fill.Scalar, CPU, _masked_fill)
impl(aten.masked_fill.Tensor, CPU, _masked_fill)


def _scatter(
    self: Tensor, dim: int, index: Tensor, src: Any, reduce: str | None, op: str
) -> Tensor:
    d = check_scatter(self, dim, index, src if isinstance(src, Tensor) else None, op)
    if reduce is not None:
        check_reduce(reduce)
    data = self._edata
    out = np.array(data, order="C")  # PyTorch's out-of-place scatter is contiguous
    idx = index._edata
    if idx.size == 0:  # PyTorch runs no kernel: the value is not even checked
        return wrap(out)
    if not isinstance(src, Tensor):  # the value is converted to self's dtype first
        src = cast(np.asarray(check_scalar(src, self.dtype, op)), data.dtype)
    flat = out.reshape(1) if out.ndim == 0 else out
    _check_bounds(idx, flat.shape[d], d, op)
    where = _full_index(idx.reshape(1) if idx.ndim == 0 else idx, d)
    if isinstance(src, Tensor):
        s = src._edata.reshape(1) if src._edata.ndim == 0 else src._edata
        values: Any = s[tuple(slice(0, n) for n in where[d].shape)]
    else:
        values = src
    if reduce is None:
        flat[where] = values
    elif reduce == "add":
        np.add.at(flat, where, values)
    else:
        np.multiply.at(flat, where, values)
    return wrap(out)


@impl(aten.scatter.src, CPU)
def scatter_src(self: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    return _scatter(self, dim, index, src, None, "scatter")


@impl(aten.scatter.value, CPU)
def scatter_value(self: Tensor, dim: int, index: Tensor, value: Any) -> Tensor:
    return _scatter(self, dim, index, value, None, "scatter")


@impl(aten.scatter.reduce, CPU)
def scatter_reduce(self: Tensor, dim: int, index: Tensor, src: Tensor, *, reduce: str) -> Tensor:
    return _scatter(self, dim, index, src, reduce, "scatter")


@impl(aten.scatter.value_reduce, CPU)
def scatter_value_reduce(
    self: Tensor, dim: int, index: Tensor, value: Any, *, reduce: str
) -> Tensor:
    return _scatter(self, dim, index, value, reduce, "scatter")


@impl(aten.scatter_add.default, CPU)
def scatter_add(self: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    return _scatter(self, dim, index, src, "add", "scatter_add")


# --------------------------------------------------------------------------- new tensors


@impl(aten.cat.default, CPU)
def cat(tensors: list[Tensor], dim: int = 0) -> Tensor:
    kept, d, shape, dt = cat_layout(tensors, dim)
    if not kept:
        return wrap(np.empty((0,), dt.np))
    arrays = [_array(t, "cat") for t in kept]
    out = empty_strided(shape, cat_strides(kept, shape), dt.np)  # not NumPy's choice
    np.concatenate(arrays, axis=d, out=out, casting="unsafe")
    return wrap(out)


@impl(aten.stack.default, CPU)
def stack(tensors: list[Tensor], dim: int = 0) -> Tensor:
    """One NumPy ``stack`` when every input is a C-contiguous array of one dtype (a batch of
    samples: DataLoader's collate); otherwise the composition (each unsqueezed, then
    ``cat``'s promotion and layout)."""
    check_stack(tensors)
    arrays = [t._edata for t in tensors]
    first = arrays[0]
    dt = first.dtype
    if all(type(a) is np.ndarray and a.dtype == dt and a.flags.c_contiguous for a in arrays):
        return wrap(np.stack(arrays, axis=wrap_dim(dim, first.ndim + 1, "stack")))
    return composite_stack(tensors, dim)


@impl(aten.flip.default, CPU)
def flip(self: Tensor, dims: list[int]) -> Tensor:
    d = self._edata
    axes = flip_dims(d.ndim, dims)
    out = empty_like(self)
    _copyto(out, np.flip(d, axes) if d.ndim else d)
    return wrap(out)


@impl(aten.roll.default, CPU)
def roll(self: Tensor, shifts: Any, dims: Any = ()) -> Tensor:
    d = self._edata
    sh, axes = roll_args(d.ndim, shifts, dims)
    # laid out as PyTorch's: contiguous, or channels-last for a channels-last input (not a
    # permuted input's layout: a view of fftshift's result failed; found by a random program)
    out = empty_like(self, mf=suggest_memory_format(d.shape, self.stride()), op="roll")
    if d.ndim == 0 or d.size == 0:
        _copyto(out, d)
    elif not axes:
        _copyto(out, np.roll(d.reshape(-1), sh[0]).reshape(d.shape))
    else:
        _copyto(out, np.roll(d, sh, axes))
    return wrap(out)


@impl(aten.repeat.default, CPU)
def repeat(self: Tensor, repeats: list[int]) -> Tensor:
    d = self._edata
    padded, shape = repeat_shape(d.shape, repeats)
    out = np.empty(shape, d.dtype)
    # view the result as (r0, n0, r1, n1, ...) and broadcast the input over the r's
    interleaved = [x for pair in zip(repeats, padded, strict=True) for x in pair]
    spread = [x for n in padded for x in (1, n)]
    _copyto(out.reshape(interleaved), d.reshape(spread))
    return wrap(out)


@impl(aten.tril.default, CPU)
def tril(self: Tensor, diagonal: int = 0) -> Tensor:
    check_tri(self, "tril")
    return wrap(np.ascontiguousarray(np.tril(self._edata, diagonal)))


@impl(aten.triu.default, CPU)
def triu(self: Tensor, diagonal: int = 0) -> Tensor:
    check_tri(self, "triu")
    return wrap(np.ascontiguousarray(np.triu(self._edata, diagonal)))


@impl(aten.gather.default, CPU)
def gather(self: Tensor, dim: int, index: Tensor, *, sparse_grad: bool = False) -> Tensor:
    d = check_gather(self, dim, index)
    data, idx = self._edata, index._edata
    if idx.size == 0:
        return wrap(np.empty(idx.shape, data.dtype))
    src = data.reshape(1) if data.ndim == 0 else data
    i = idx.reshape(1) if idx.ndim == 0 else idx
    _check_bounds(i, src.shape[d], d, "gather")
    out = src[_full_index(i, d)]
    return wrap(np.ascontiguousarray(out).reshape(idx.shape))


@impl(aten.index_select.default, CPU)
def index_select(self: Tensor, dim: int, index: Tensor) -> Tensor:
    d, shape = index_select_shape(self, dim, index)
    data, idx = self._edata, index._edata.reshape(-1)
    if data.ndim <= 1 and data.dtype in SHELL_NP:  # PyTorch copies rows of any dtype
        raise refusal("index_select", self.dtype)
    size = data.shape[d] if data.ndim else 1
    if idx.size and (idx.min() < 0 or idx.max() >= size):
        raise IndexError(
            f"index_select: index out of range in self (dim {d} has size {size}, got index "
            f"{idx[(idx < 0) | (idx >= size)][0]})"
        )
    src = data.reshape(1) if data.ndim == 0 else data
    return wrap(np.take(src, idx, axis=d).reshape(shape))


@impl(aten.nonzero.default, CPU)
def nonzero(self: Tensor) -> Tensor:
    # laid out as PyTorch's: (n, ndim) with strides (1, n), the transpose of a contiguous
    # (ndim, n) (a clone of its transpose is then contiguous, and .view works on it)
    found = np.argwhere(self._edata)
    out = np.empty((found.shape[1], found.shape[0]), dtype=np.int64).T
    out[...] = found
    return wrap(out)


# --------------------------------------------------------------------------- diagonals, blocks,
# rotations, repeats (shape rules shared with the Meta rules: ember/ops/native/copies_composite.py)


@impl(aten.diag_embed.default, CPU)
def diag_embed(self: Tensor, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    d = self._edata
    shape, d1, d2 = diag_embed_shape(d.shape, offset, dim1, dim2)
    out = np.zeros(shape, d.dtype)
    n = d.shape[-1] if d.ndim else 1
    plane = np.moveaxis(out, (d1, d2), (-2, -1))  # a view: writes reach ``out``
    rows = np.arange(n) + max(-offset, 0)
    plane[..., rows, rows + offset] = d
    return wrap(out)


@impl(aten.block_diag.default, CPU)
def block_diag(tensors: list[Tensor]) -> Tensor:
    mats, shape, dt = block_diag_plan([t._edata.shape for t in tensors], [t.dtype for t in tensors])
    out = np.zeros(shape, dt.np)
    r = c = 0
    for t, (h, w) in zip(tensors, mats, strict=True):
        copy_into(out[r : r + h, c : c + w], _array(t, "block_diag").reshape(h, w))
        r, c = r + h, c + w
    return wrap(out)


@impl(aten.rot90.default, CPU)
def rot90(self: Tensor, k: int = 1, dims: Any = (0, 1)) -> Tensor:
    d = self._edata
    k, d0, d1 = rot90_plan(d.ndim, k, dims)
    if k == 0:
        return wrap(np.array(d, order="C"))  # a contiguous copy
    # laid out as PyTorch's: a flip (which keeps the input's layout), transposed for odd k
    out = empty_like(self, op="flip")
    if k == 2:
        _copyto(out, np.flip(d, (d0, d1)))
        return wrap(out)
    _copyto(out, np.flip(d, d1 if k == 1 else d0))
    return wrap(np.swapaxes(out, d0, d1))


@impl(aten.repeat_interleave.Tensor, CPU)
def repeat_interleave(repeats: Tensor, *, output_size: int | None = None) -> Tensor:
    check_repeats(repeats)
    r = repeats._edata
    if r.size and r.min() < 0:
        raise RuntimeError("repeat_interleave: repeats can not be negative")
    out = np.repeat(np.arange(r.size, dtype=r.dtype), r)
    if output_size is not None and out.size != output_size:
        raise RuntimeError(
            f"repeat_interleave: allocated size does not match required size (output_size "
            f"{output_size}, repeats sum to {out.size})"
        )
    return wrap(out)
