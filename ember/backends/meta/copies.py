"""Meta rules of the copies ops, and the checks the CPU kernels share with them.

Everything here reads shapes, strides and dtypes only, so the CPU kernel and the Meta rule of
an op call the same check and cannot disagree. Checks that need values (index bounds) live in
the CPU kernels (``ember/backends/cpu/copies.py``).

The layout of new tensors is NOTE [layout of new tensors] in ``ember/_memory_format.py``.

# NOTE [data-dependent shapes]
``nonzero``'s result has one row per nonzero element: its shape depends on values a Meta
tensor does not have. PyTorch's Meta kernel raises ``NotImplementedError``, and so does
ember's rather than guess a size (an upper bound like ``(numel, ndim)`` would be a wrong
shape that later ops would silently trust). The op is tagged ``dynamic_output_shape``, as in
PyTorch, so tracing layers can tell such ops apart.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ember import dtypes
from ember._memory_format import (
    channels_last_strides,
    is_contiguous_for,
    result_strides,
    suggest_memory_format,
)
from ember._shape_only import ShapeOnlyArray, contiguous_strides
from ember._tensor import Tensor, wrap_shape_only, wrap_view
from ember.dispatch import marks
from ember.dispatch.keys import DispatchKey
from ember.library import impl
from ember.ops.native.copies import to_copy_options
from ember.ops.native.copies_composite import (
    block_diag_plan,
    check_repeats,
    diag_embed_shape,
    rot90_plan,
    rot90_shape,
)
from ember.ops.registry import ops
from ember.ops.shapes import broadcast_shapes, wrap_dim

aten = ops.aten
Meta = DispatchKey.Meta
_nd = np.ndarray
Shape = tuple[int, ...]

# --------------------------------------------------------------------------- layouts


def strides_of(t: Tensor) -> Shape:
    """A tensor's strides in elements (what ``t.stride()`` gives)."""
    return tuple(t.stride())


def is_contiguous_as(t: Tensor, mf: Any, op: str) -> bool:
    """``t.is_contiguous(memory_format=mf)`` for every memory format."""
    return is_contiguous_for(tuple(t.shape), tuple(t.stride()), mf, op)


def meta_like(t: Tensor, dtype: dtypes.dtype | None = None, mf: Any = None, op: str = "") -> Tensor:
    """A new meta tensor shaped like ``t``, laid out as ``mf`` says."""
    shape = tuple(t.shape)
    strides = result_strides(shape, strides_of(t), mf, op)
    npdt = t._edata.dtype if dtype is None else dtype.np
    return wrap_shape_only(ShapeOnlyArray(shape, npdt, strides))


def meta_new(shape: Sequence[int], dtype: Any) -> Tensor:
    npdt = dtype.np if isinstance(dtype, dtypes.dtype) else dtype
    return wrap_shape_only(ShapeOnlyArray(tuple(shape), npdt))


# --------------------------------------------------------------------------- shared checks


def has_data(t: Any) -> bool:
    return isinstance(t, Tensor) and type(t._edata) is _nd


def check_no_cpu(op: str, *tensors: Any) -> None:
    """A Meta rule got a cpu tensor mixed with meta ones: PyTorch's device-mismatch error."""
    for t in tensors:
        if has_data(t):
            raise RuntimeError(
                f"{op}: Tensor on device cpu is not on the expected device meta! Move every "
                "operand to one device with .to()"
            )


def check_scalar(value: Any, d: dtypes.dtype, op: str) -> Any:
    """``value`` as a Python number storable in ``d``; RuntimeError if it overflows ``d``
    (PyTorch's ``checked_convert``: imaginary parts, NaN for integers, out-of-range values)."""
    if isinstance(value, Tensor):
        value = value.item()
    if d is dtypes.bool_:
        return value
    if isinstance(value, (complex, np.complexfloating)):
        if d.category == dtypes.COMPLEX:
            limit = float(np.finfo(d.np).max)
            parts = (value.real, value.imag)
            if any(math.isfinite(p) and abs(p) > limit for p in parts):
                raise _overflow(value, d, op)
            return value
        if value.imag != 0:
            raise _overflow(value, d, op)
        value = value.real
    if d.category == dtypes.INTEGRAL:
        info = np.iinfo(d.np)
        if isinstance(value, (float, np.floating)):
            if not (info.min <= value <= info.max):  # NaN fails both comparisons
                raise _overflow(value, d, op)
        elif not (info.min <= value <= info.max):
            # unsigned targets take negatives down to -max: they wrap (c10's ``overflows``)
            if not (info.min == 0 and -info.max <= value < 0):
                raise _overflow(value, d, op)
            return int(value) % (info.max + 1)
        return value
    real = d.to_real()
    # NumPy's finfo does not know ml_dtypes' bfloat16 (NOTE [bfloat16] in ember/dtypes.py)
    limit = _BFLOAT16_MAX if real.name == "bfloat16" else float(np.finfo(real.np).max)
    if math.isfinite(value) and abs(value) > limit:
        raise _overflow(value, d, op)
    return value


_BFLOAT16_MAX = 3.3895313892515355e38


def _overflow(value: Any, d: dtypes.dtype, op: str) -> RuntimeError:
    return RuntimeError(
        f"{op}: value cannot be converted to type {d.name} without overflow (got {value!r}); "
        "use a dtype that can hold it"
    )


def check_index_dtype(op: str, index: Tensor, allowed: tuple[dtypes.dtype, ...]) -> None:
    if index.dtype not in allowed:
        names = "/".join(d.name for d in allowed)
        raise RuntimeError(
            f"{op}(): Expected dtype {names} for index, got {index.dtype.name}; convert it with "
            "index.long()"
        )


def check_copy(self: Tensor, src: Tensor, op: str = "copy_") -> None:
    """``src`` must broadcast to ``self``, and ``self`` must not write one element twice."""
    shape, sshape = self._edata.shape, src._edata.shape
    if shape != sshape and broadcast_shapes(shape, sshape, op=op) != shape:
        raise RuntimeError(
            f"{op}: output with shape {list(shape)} doesn't match the broadcast shape "
            f"{list(broadcast_shapes(shape, sshape))}"
        )
    check_internal_overlap(self, op)


def check_internal_overlap(self: Tensor, op: str) -> None:
    if any(s == 0 and n > 1 for n, s in zip(self._edata.shape, self.stride(), strict=True)):
        raise RuntimeError(
            f"{op}: unsupported operation: more than one element of the written-to tensor refers "
            "to a single memory location. Please clone() the tensor before performing the "
            "operation."
        )


def cat_layout(
    tensors: Sequence[Tensor], dim: int
) -> tuple[list[Tensor], int, Shape, dtypes.dtype]:
    """The inputs ``cat`` concatenates (legacy empty 1-D tensors left out), the wrapped dim, the
    result shape and dtype (every input promoted, as PyTorch does)."""
    if not tensors:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    out_dtype = tensors[0].dtype
    for i, t in enumerate(tensors):
        if t._edata.ndim == 0:
            raise RuntimeError(
                f"cat: zero-dimensional tensor (at position {i}) cannot be concatenated; "
                "unsqueeze it or use stack"
            )
        out_dtype = dtypes.promote_types(out_dtype, t.dtype)
    kept = [t for t in tensors if t._edata.shape != (0,)]  # legacy: 1-D empty tensors skip
    if not kept:
        return [], 0, (0,), out_dtype
    ref = kept[0]._edata.shape
    d = wrap_dim(dim, len(ref), "cat")
    total = 0
    for i, t in enumerate(tensors):
        s = t._edata.shape
        if s == (0,):
            continue
        if len(s) != len(ref):
            raise RuntimeError(
                f"cat: Tensors must have same number of dimensions: got {len(ref)} and {len(s)}"
            )
        for k, (a, b) in enumerate(zip(ref, s, strict=True)):
            if k != d and a != b:
                raise RuntimeError(
                    f"cat: Sizes of tensors must match except in dimension {d}. Expected size "
                    f"{a} but got size {b} for tensor number {i} in the list."
                )
        total += s[d]
    return kept, d, (*ref[:d], total, *ref[d + 1 :]), out_dtype


def cat_strides(kept: Sequence[Tensor], shape: Shape) -> Shape:
    """The layout of ``cat``'s result, as PyTorch's: channels-last when every input is
    (unambiguously) channels-last, else contiguous, whatever the inputs' strides."""
    if len(shape) in (4, 5):
        name = "channels_last" if len(shape) == 4 else "channels_last_3d"
        if all(is_contiguous_as(t, name, "cat") and not t.is_contiguous() for t in kept):
            return channels_last_strides(shape)
    return contiguous_strides(shape)


def flip_dims(ndim: int, dims: Sequence[int]) -> tuple[int, ...]:
    out = tuple(wrap_dim(d, ndim, "flip") for d in dims)
    if len(set(out)) != len(out):
        dup = next(d for d in out if out.count(d) > 1)
        raise RuntimeError(f"flip: dim {dup} appears multiple times in the list of dims")
    return out


def roll_args(ndim: int, shifts: Any, dims: Any) -> tuple[tuple[int, ...], tuple[int, ...]]:
    shifts = (shifts,) if isinstance(shifts, int) else tuple(shifts)
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    if not shifts:
        raise RuntimeError("roll: `shifts` required")
    if (not dims and len(shifts) != 1) or (dims and len(dims) != len(shifts)):
        raise RuntimeError(
            f"roll: shifts and dimensions must align. shifts: {len(shifts)}, dims:{len(dims)}"
        )
    return shifts, tuple(wrap_dim(d, ndim, "roll") for d in dims)


def repeat_shape(shape: Shape, repeats: Sequence[int]) -> tuple[Shape, Shape]:
    """(input shape padded with leading 1s, result shape) of ``repeat``."""
    repeats = tuple(repeats)
    if len(repeats) < len(shape):
        raise RuntimeError(
            "repeat: Number of dimensions of repeat dims can not be smaller than number of "
            f"dimensions of tensor (got {len(repeats)} repeats for shape {list(shape)})"
        )
    padded = (1,) * (len(repeats) - len(shape)) + tuple(shape)
    out = tuple(a * r for a, r in zip(padded, repeats, strict=True))
    if any(n < 0 for n in out):
        bad = next(n for n in out if n < 0)
        raise RuntimeError(
            f"repeat: Trying to create tensor with negative dimension {bad}: {list(out)}"
        )
    return padded, out


def check_tri(self: Tensor, op: str) -> None:
    if self._edata.ndim < 2:
        raise RuntimeError(
            f"{op}: input tensor must have at least 2 dimensions (got shape {list(self.shape)})"
        )


_GATHER_INDEX = (dtypes.int64, dtypes.int32)


def _nonempty(shape: Shape) -> Shape:
    return shape or (1,)


def check_gather(self: Tensor, dim: int, index: Tensor) -> int:
    """``gather``'s checks: index dtype, rank, and sizes; returns the wrapped dim."""
    check_index_dtype("gather", index, _GATHER_INDEX)
    d = wrap_dim(dim, self._edata.ndim, "gather")
    ss, ish = _nonempty(self._edata.shape), _nonempty(index._edata.shape)
    if index._edata.size == 0:
        return d
    if len(ss) != len(ish):
        raise RuntimeError(
            "gather: Index tensor must have the same number of dimensions as input tensor "
            f"(index {list(index.shape)}, input {list(self.shape)})"
        )
    for k, (a, b) in enumerate(zip(ss, ish, strict=True)):
        if k != d and b > a:
            raise RuntimeError(
                f"gather: Size does not match at dimension {k} expected index {list(ish)} to be "
                f"no larger than self {list(ss)} apart from dimension {d}"
            )
    return d


def check_scatter(self: Tensor, dim: int, index: Tensor, src: Any, op: str) -> int:
    """``scatter``'s checks: index dtype, src dtype, ranks and sizes; returns the wrapped dim."""
    check_index_dtype(op, index, _GATHER_INDEX)
    if isinstance(src, Tensor) and src.dtype is not self.dtype:
        raise RuntimeError(
            f"{op}(): Expected self.dtype to be equal to src.dtype (got {self.dtype.name} and "
            f"{src.dtype.name}); convert src with .to(self.dtype)"
        )
    d = wrap_dim(dim, self._edata.ndim, op)
    if index._edata.size == 0:
        return d
    ss, ish = _nonempty(self._edata.shape), _nonempty(index._edata.shape)
    if len(ss) != len(ish):
        raise RuntimeError(
            f"{op}: Index tensor must have the same number of dimensions as self tensor "
            f"(index {list(index.shape)}, self {list(self.shape)})"
        )
    srcs = _nonempty(src._edata.shape) if isinstance(src, Tensor) else None
    if srcs is not None and len(srcs) != len(ish):
        raise RuntimeError(
            f"{op}: Index tensor must have the same number of dimensions as src tensor "
            f"(index {list(index.shape)}, src {list(src.shape)})"
        )
    too_big = any(k != d and b > a for k, (a, b) in enumerate(zip(ss, ish, strict=True)))
    if srcs is not None:
        too_big = too_big or any(b > c for b, c in zip(ish, srcs, strict=True))
    if too_big:
        tail = f" and to be no larger size than src {list(srcs)}" if srcs is not None else ""
        raise RuntimeError(
            f"{op}: Expected index {list(ish)} to be no larger than self {list(ss)} apart from "
            f"dimension {d}{tail}"
        )
    return d


def check_reduce(reduce: str) -> None:
    if reduce not in ("add", "multiply"):
        raise RuntimeError(
            f"scatter: reduce argument must be either add or multiply (got {reduce!r}); use "
            "scatter_reduce for other reductions"
        )


def index_select_shape(self: Tensor, dim: int, index: Tensor) -> tuple[int, Shape]:
    """``index_select``'s checks; returns the wrapped dim and the result shape."""
    if index._edata.ndim > 1:
        raise IndexError(
            f"index_select(): Index is supposed to be a vector, got shape {list(index.shape)}"
        )
    check_index_dtype("index_select", index, (dtypes.int32, dtypes.int64))
    shape = self._edata.shape
    d = wrap_dim(dim, len(shape), "index_select")
    n = index._edata.size
    if not shape:
        if n != 1:
            raise RuntimeError(
                f"index_select(): Index to scalar can have only 1 value, got {n} value(s)"
            )
        return d, ()
    return d, (*shape[:d], n, *shape[d + 1 :])


def masked_fill_checks(self: Tensor, mask: Tensor, value: Any, op: str) -> Shape:
    """``masked_fill``'s checks; returns the result shape (``self`` and ``mask`` broadcast)."""
    if mask.dtype is not dtypes.bool_:
        raise RuntimeError(
            f"{op}: masked_fill_ only supports boolean masks, but got mask with dtype "
            f"{mask.dtype.name}; compare it (mask != 0) to get one"
        )
    if isinstance(value, Tensor):
        if value._edata.ndim != 0:
            raise RuntimeError(
                f"{op}: masked_fill_ only supports a 0-dimensional value tensor, but got tensor "
                f"with {value._edata.ndim} dimension(s)."
            )
    return broadcast_shapes(self._edata.shape, mask._edata.shape, op=op)


def check_fill_value(value: Tensor) -> None:
    if value._edata.ndim != 0:
        raise RuntimeError(
            "fill_ only supports 0-dimension value tensor but got tensor with "
            f"{value._edata.ndim} dimensions."
        )


def detach_(self: Tensor) -> Tensor:
    """``detach_`` on every backend: drop ``self`` from autograd (views raise, as in PyTorch)."""
    if self._base is not None:
        raise RuntimeError(
            "detach_: Can't detach views in-place. Use detach() instead (it returns a new view "
            "that does not require grad)."
        )
    marks.unmark_autograd(self)
    self.grad_fn = None
    return self


def _check_set_dtype(self: Tensor, source: Tensor) -> None:
    if self._edata.dtype != source._edata.dtype:
        raise RuntimeError(
            f"set_: Could not set tensor of type {source.dtype} to a tensor of type "
            f"{self.dtype}; convert the source with .to({self.dtype}) first"
        )


def set_(self: Tensor, source: Tensor) -> Tensor:
    """``set_`` on every backend: ``self`` takes ``source``'s storage, sizes and strides (a
    write PyTorch does not differentiate: autograd records a ``NotImplemented`` node). Like
    every ``set_`` kernel it reads no guarded member, so ``__torch_function__`` sees nothing
    (NOTE [set_ forms] in ``ember/_tensor_set.py``)."""
    _check_set_dtype(self, source)
    if not marks.same_backend(self, source):
        raise RuntimeError(
            f"set_: source is on {source.device} but the tensor on {self.device}; move one "
            "with .to(device)"
        )
    self._edata = source._edata
    if "_offset" in source.__dict__:  # an empty view's offset (NOTE [empty views])
        self.__dict__["_offset"] = source.__dict__["_offset"]
    self._bump_version()
    return self


def set_layout(
    dev: Any, source: Any, storage_offset: int, size: Sequence[int], stride: Sequence[int]
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The sizes and strides ``set_`` gives a tensor on ``dev`` over the storage
    ``source``, checked as PyTorch's ``setStorage`` checks them (strides ``[]``:
    contiguous)."""
    if source.device != dev:
        raise RuntimeError(
            f'set_: Attempted to set the storage of a tensor on device "{dev}" to a storage '
            f'on different device "{source.device}".  This is no longer allowed; the devices '
            "must match."
        )
    size = tuple(int(n) for n in size)
    stride = tuple(int(n) for n in stride) if len(stride) else contiguous_strides(size)
    if len(stride) != len(size):
        raise RuntimeError(
            f"set_: unequal size length ({len(size)}) and stride length ({len(stride)})"
        )
    if storage_offset < 0:
        raise RuntimeError(f"set_: Tensor: invalid storage offset {storage_offset}")
    if any(n < 0 for n in size) or any(st < 0 for st in stride):
        raise RuntimeError(
            f"set_: Storage size calculation overflowed with sizes={list(size)} and "
            f"strides={list(stride)}"
        )
    return size, stride


def storage_bytes_needed(
    size: Sequence[int], stride: Sequence[int], storage_offset: int, itemsize: int
) -> int:
    """The bytes a layout reaches into its storage (PyTorch's ``computeStorageNbytes``)."""
    if any(n == 0 for n in size):
        return 0
    extent = sum((n - 1) * st for n, st in zip(size, stride, strict=True))
    return itemsize * (storage_offset + 1 + extent)


def set_kernels(
    on_storage: Any,
) -> tuple[Any, Any]:
    """The ``source_Storage`` and ``source_Tensor_storage_offset`` kernels of a backend,
    from its ``source_Storage_storage_offset`` one."""

    def set_storage(self: Tensor, source: Any) -> Tensor:
        """``set_(storage)``: the whole storage, as one dimension of ``self``'s dtype."""
        return on_storage(self, source, 0, [source.nbytes() // self._edata.itemsize], [])  # type: ignore[no-any-return]

    def set_tensor_storage_offset(
        self: Tensor,
        source: Tensor,
        storage_offset: int,
        size: Sequence[int],
        stride: Sequence[int] = (),
    ) -> Tensor:
        """``set_(tensor, offset, size, stride)``: ``source``'s storage, the offset counted
        from ``source``'s own first element (as PyTorch counts it)."""
        _check_set_dtype(self, source)
        offset = source.storage_offset() + storage_offset  # (a direct aten call's path only)
        return on_storage(self, source.untyped_storage(), offset, size, stride)  # type: ignore[no-any-return]

    return set_storage, set_tensor_storage_offset


def set_storage_offset(
    self: Tensor,
    source: Any,
    storage_offset: int,
    size: Sequence[int],
    stride: Sequence[int] = (),
) -> Tensor:
    """``set_(storage, storage_offset, size, stride)`` of a tensor without data: its
    layout over the storage, as PyTorch's meta tensors keep it."""
    d = self._edata
    size, stride = set_layout(d.device, source, storage_offset, size, stride)
    self._edata = ShapeOnlyArray(size, d.dtype, stride, storage_offset, d.device)
    self._bump_version()
    return self


def set_empty(self: Tensor) -> Tensor:
    """``set_()`` of a tensor without data: empty, on a new storage of no bytes."""
    d = self._edata
    self._edata = ShapeOnlyArray((0,), d.dtype, (1,), 0, d.device)
    self._bump_version()
    return self


def no_meta_data(op: str) -> NotImplementedError:
    return NotImplementedError(
        f"{op}: Cannot copy out of meta tensor; no data! A meta tensor has only a shape and a "
        "dtype: build the tensor on the cpu device instead."
    )


# --------------------------------------------------------------------------- Meta rules


@impl(aten.clone.default, Meta)
def clone(self: Tensor, *, memory_format: Any = None) -> Tensor:
    return meta_like(self, mf=memory_format, op="clone")


@impl(aten.lift_fresh_copy.default, Meta)
def lift_fresh_copy(self: Tensor) -> Tensor:
    return meta_like(self, op="lift_fresh_copy")


@impl(aten.lift_fresh.default, Meta)
def lift_fresh(self: Tensor) -> Tensor:
    return self


@impl(aten._to_copy.default, Meta)
def _to_copy(self: Tensor, **options: Any) -> Tensor:
    dtype, device, memory_format = to_copy_options(**options)
    if device is not None and device != "meta":
        raise no_meta_data("_to_copy")
    return meta_like(self, dtype, memory_format, "_to_copy")


@impl(aten._to_copy.out, Meta)
def _to_copy_out(
    self: Tensor, *, non_blocking: bool = False, memory_format: Any = None, out: Tensor
) -> Tensor:
    if has_data(out):
        raise no_meta_data("_to_copy.out")
    if out._edata.shape != self._edata.shape:
        out._edata = ShapeOnlyArray(self._edata.shape, out._edata.dtype)
    out._bump_version()
    return out


def _alias(self: Tensor) -> Tensor:
    d = self._edata
    return wrap_view(self, ShapeOnlyArray(d.shape, d.dtype, d.element_strides, d.offset, d.device))


def _detach(self: Tensor) -> Tensor:
    t = _alias(self)
    del t._base  # no view: as PyTorch's, _base None (the CPU kernel's comment)
    return t


impl(aten.detach.default, Meta, _detach)


impl(aten.detach_.default, Meta, detach_)
impl(aten.set_.source_Tensor, Meta, set_)
impl(aten.set_.default, Meta, set_empty)
impl(aten.set_.source_Storage_storage_offset, Meta, set_storage_offset)
_set_storage, _set_tensor_storage_offset = set_kernels(set_storage_offset)
impl(aten.set_.source_Storage, Meta, _set_storage)
impl(aten.set_.source_Tensor_storage_offset, Meta, _set_tensor_storage_offset)


@impl(aten.copy.default, Meta)
def copy(self: Tensor, src: Tensor, non_blocking: bool = False) -> Tensor:
    if has_data(self) or has_data(src):
        check_no_cpu("copy", self, src)
    check_copy(self, src, "copy")
    return meta_like(self, op="copy")


@impl(aten.copy_.default, Meta)
def copy_(self: Tensor, src: Tensor, non_blocking: bool = False) -> Tensor:
    """Meta is the highest key of a call mixing cpu and meta tensors: a meta ``self`` takes any
    ``src`` (nothing to write), a cpu ``self`` can't read a meta ``src``."""
    if has_data(self):
        raise no_meta_data("copy_")
    check_copy(self, src)
    self._bump_version()
    return self


@impl(aten.fill.Scalar, Meta)
def fill_scalar(self: Tensor, value: Any) -> Tensor:
    check_scalar(value, self.dtype, "fill")
    return meta_like(self, op="fill")


@impl(aten.fill.Tensor, Meta)
def fill_tensor(self: Tensor, value: Tensor) -> Tensor:
    check_fill_value(value)
    return meta_like(self, op="fill")


@impl(aten.zero.default, Meta)
def zero(self: Tensor) -> Tensor:
    return meta_like(self, op="zero")


@impl(aten.masked_fill.Scalar, Meta)
def masked_fill_scalar(self: Tensor, mask: Tensor, value: Any) -> Tensor:
    check_no_cpu("masked_fill", self, mask)
    shape = masked_fill_checks(self, mask, value, "masked_fill")
    check_scalar(value, self.dtype, "masked_fill")
    return meta_new(shape, self._edata.dtype)


@impl(aten.masked_fill.Tensor, Meta)
def masked_fill_tensor(self: Tensor, mask: Tensor, value: Tensor) -> Tensor:
    check_no_cpu("masked_fill", self, mask)
    shape = masked_fill_checks(self, mask, value, "masked_fill")
    return meta_new(shape, self._edata.dtype)


def _scatter(op: str, self: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    check_no_cpu(op, self, index, src)
    check_scatter(self, dim, index, src, op)
    return meta_new(tuple(self.shape), self._edata.dtype)  # contiguous, as the cpu kernel


@impl(aten.scatter.src, Meta)
def scatter_src(self: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    return _scatter("scatter", self, dim, index, src)


@impl(aten.scatter.value, Meta)
def scatter_value(self: Tensor, dim: int, index: Tensor, value: Any) -> Tensor:
    check_no_cpu("scatter", self, index)
    check_scatter(self, dim, index, None, "scatter")
    if math.prod(index.shape):  # an empty index runs no kernel: the value is not checked
        check_scalar(value, self.dtype, "scatter")
    return meta_new(tuple(self.shape), self._edata.dtype)


@impl(aten.scatter.reduce, Meta)
def scatter_reduce(self: Tensor, dim: int, index: Tensor, src: Tensor, *, reduce: str) -> Tensor:
    check_reduce(reduce)
    return scatter_src(self, dim, index, src)


@impl(aten.scatter.value_reduce, Meta)
def scatter_value_reduce(
    self: Tensor, dim: int, index: Tensor, value: Any, *, reduce: str
) -> Tensor:
    check_reduce(reduce)
    return scatter_value(self, dim, index, value)


@impl(aten.scatter_add.default, Meta)
def scatter_add(self: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    return _scatter("scatter_add", self, dim, index, src)


@impl(aten.cat.default, Meta)
def cat(tensors: list[Tensor], dim: int = 0) -> Tensor:
    check_no_cpu("cat", *tensors)
    kept, _, shape, dt = cat_layout(tensors, dim)
    return wrap_shape_only(ShapeOnlyArray(shape, dt.np, cat_strides(kept, shape)))


@impl(aten.flip.default, Meta)
def flip(self: Tensor, dims: list[int]) -> Tensor:
    flip_dims(self._edata.ndim, dims)
    return meta_like(self, op="flip")


@impl(aten.roll.default, Meta)
def roll(self: Tensor, shifts: Any, dims: Any = ()) -> Tensor:
    roll_args(self._edata.ndim, shifts, dims)
    return meta_like(self, mf=suggest_memory_format(tuple(self.shape), strides_of(self)), op="roll")


@impl(aten.repeat.default, Meta)
def repeat(self: Tensor, repeats: list[int]) -> Tensor:
    _, shape = repeat_shape(self._edata.shape, repeats)
    return meta_new(shape, self._edata.dtype)


@impl(aten.tril.default, Meta)
def tril(self: Tensor, diagonal: int = 0) -> Tensor:
    check_tri(self, "tril")
    return meta_like(self, mf="contiguous_format")


@impl(aten.triu.default, Meta)
def triu(self: Tensor, diagonal: int = 0) -> Tensor:
    check_tri(self, "triu")
    return meta_like(self, mf="contiguous_format")


@impl(aten.gather.default, Meta)
def gather(self: Tensor, dim: int, index: Tensor, *, sparse_grad: bool = False) -> Tensor:
    check_no_cpu("gather", self, index)
    check_gather(self, dim, index)
    return meta_new(index._edata.shape, self._edata.dtype)


@impl(aten.index_select.default, Meta)
def index_select(self: Tensor, dim: int, index: Tensor) -> Tensor:
    check_no_cpu("index_select", self, index)
    _, shape = index_select_shape(self, dim, index)
    return meta_new(shape, self._edata.dtype)


@impl(aten.nonzero.default, Meta)
def nonzero(self: Tensor) -> Tensor:
    """See NOTE [data-dependent shapes]."""
    raise NotImplementedError(
        f"nonzero: the result's shape depends on the values of the input (shape "
        f"{list(self.shape)}), which a meta tensor does not have (NOTE [data-dependent shapes]). "
        "Run nonzero on the cpu device."
    )


# --------------------------------------------------------------------------- diagonals, blocks,
# rotations, repeats (rules shared with the CPU kernels: ember/ops/native/copies_composite.py)


@impl(aten.diag_embed.default, Meta)
def diag_embed(self: Tensor, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    shape, _, _ = diag_embed_shape(tuple(self.shape), offset, dim1, dim2)
    return meta_new(shape, self.dtype)


@impl(aten.block_diag.default, Meta)
def block_diag(tensors: list[Tensor]) -> Tensor:
    _, shape, dt = block_diag_plan([tuple(t.shape) for t in tensors], [t.dtype for t in tensors])
    return meta_new(shape, dt)


@impl(aten.rot90.default, Meta)
def rot90(self: Tensor, k: int = 1, dims: Any = (0, 1)) -> Tensor:
    k, d0, d1 = rot90_plan(self.ndim, k, dims)
    if k == 0:
        return meta_new(tuple(self.shape), self.dtype)
    flipped = meta_like(self, op="flip")  # laid out as the CPU kernel's
    if k == 2:
        return flipped
    strides = list(flipped.stride())
    strides[d0], strides[d1] = strides[d1], strides[d0]
    shape = rot90_shape(tuple(self.shape), k, d0, d1)
    return wrap_shape_only(ShapeOnlyArray(shape, self._edata.dtype, tuple(strides)))


@impl(aten.repeat_interleave.Tensor, Meta)
def repeat_interleave(repeats: Tensor, *, output_size: int | None = None) -> Tensor:
    """With ``output_size`` the shape is known; without it, it depends on the values (NOTE
    [data-dependent shapes])."""
    check_repeats(repeats)
    if output_size is None:
        raise NotImplementedError(
            "repeat_interleave: the result's length is the sum of the repeats' values, which a "
            "meta tensor does not have (NOTE [data-dependent shapes]); pass output_size="
        )
    return meta_new((output_size,), repeats.dtype)
