"""Stride arithmetic of the view ops, with PyTorch's errors: what shape, strides (in elements)
and storage offset a view gets. Meta rules build views from these; CPU kernels use NumPy's
own views where NumPy gives the same strides, and these where it does not.

Every function takes and returns plain tuples, so it serves any backend without data.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from ember._shape_only import DataDependentShapeError
from ember.dtypes import dtype
from ember.ops.shapes import broadcast_shapes, wrap_dim

Shape = tuple[int, ...]
#: (shape, strides, storage offset)
Layout = tuple[Shape, Shape, int]

INT64_MAX = 2**63 - 1


def contiguous(shape: Sequence[int]) -> Shape:
    """Row-major strides (size-0 and size-1 dims still get one, as in PyTorch)."""
    out = [1] * len(shape)
    acc = 1
    for i in range(len(shape) - 1, -1, -1):
        out[i] = acc
        acc *= max(shape[i], 1)
    return tuple(out)


# --------------------------------------------------------------------------- view / reshape


def infer_size(size: Sequence[int], numel: int) -> Shape:
    """``size`` with its one ``-1`` filled in so the product is ``numel``.

    >>> from ember.ops.strides import infer_size
    >>> infer_size((2, -1), 6)
    (2, 3)
    """
    infer = -1
    known = 1
    for i, n in enumerate(size):
        if n == -1:
            if infer >= 0:
                raise RuntimeError("only one dimension can be inferred")
            infer = i
        elif n < 0:
            raise RuntimeError(f"invalid shape dimension {n}")
        else:
            known *= n
    shape = list(size)
    if infer >= 0:
        if known == 0 or numel % known:
            raise RuntimeError(_bad_shape(size, numel, known == 0))
        shape[infer] = numel // known
    elif known != numel:
        raise RuntimeError(_bad_shape(size, numel, False))
    return tuple(shape)


def _bad_shape(size: Sequence[int], numel: int, ambiguous: bool) -> str:
    msg = f"shape '{list(size)}' is invalid for input of size {numel}"
    if ambiguous:
        msg += " (the -1 dimension is ambiguous when the other sizes multiply to 0)"
    return msg


def view_strides(shape: Sequence[int], strides: Sequence[int], new: Sequence[int]) -> Shape | None:
    """Strides that let a tensor of ``shape``/``strides`` be seen as ``new`` without copying,
    or None. The old dims split into runs that are contiguous with each other; ``new`` must
    split into runs of the same element counts (PyTorch's ``computeStride``)."""
    if not shape:
        return (1,) * len(new)
    if math.prod(shape) == 0:
        return tuple(strides) if tuple(shape) == tuple(new) else contiguous(new)
    out = [0] * len(new)
    vd = len(new) - 1
    base = strides[-1]
    old_n = 1
    new_n = 1
    for td in range(len(shape) - 1, -1, -1):
        old_n *= shape[td]
        if td == 0 or (shape[td - 1] != 1 and strides[td - 1] != old_n * base):
            while vd >= 0 and (new_n < old_n or new[vd] == 1):
                out[vd] = new_n * base
                new_n *= new[vd]
                vd -= 1
            if new_n != old_n:
                return None
            if td > 0:
                base = strides[td - 1]
                old_n = 1
                new_n = 1
    if vd != -1:
        return None
    return tuple(out)


VIEW_ERROR = (
    "view size is not compatible with input tensor's size and stride (at least one dimension "
    "spans across two contiguous subspaces). Use .reshape(...) instead."
)


def view(layout: Layout, size: Sequence[int]) -> Layout:
    """The layout of ``view(size)``; RuntimeError if the strides do not allow it."""
    shape, strides, offset = layout
    new = infer_size(size, math.prod(shape))
    st = view_strides(shape, strides, new)
    if st is None:
        raise RuntimeError(f"view: {VIEW_ERROR} (sizes {list(shape)}, strides {list(strides)})")
    return new, st, offset


# --------------------------------------------------------------------------- dims


def transpose(layout: Layout, dim0: int, dim1: int) -> Layout:
    shape, strides, offset = layout
    n = len(shape)
    d0, d1 = wrap_dim(dim0, n), wrap_dim(dim1, n)
    if n == 0:
        return layout
    sh, st = list(shape), list(strides)
    sh[d0], sh[d1] = sh[d1], sh[d0]
    st[d0], st[d1] = st[d1], st[d0]
    return tuple(sh), tuple(st), offset


def permutation(dims: Sequence[int], ndim: int) -> Shape:
    """``dims`` wrapped and checked to be a permutation of ``range(ndim)``."""
    if len(dims) != ndim:
        raise RuntimeError(
            "permute(): number of dimensions in the tensor input does not match the length of "
            f"the desired ordering of dimensions i.e. input.dim() = {ndim} is not equal to "
            f"len(dims) = {len(dims)}"
        )
    perm = tuple(wrap_dim(d, ndim) for d in dims)
    if len(set(perm)) != ndim:
        raise RuntimeError(f"permute(): duplicate dims are not allowed (got dims {list(dims)})")
    return perm


def permute(layout: Layout, dims: Sequence[int]) -> Layout:
    shape, strides, offset = layout
    perm = permutation(dims, len(shape))
    return tuple(shape[d] for d in perm), tuple(strides[d] for d in perm), offset


def check_t(ndim: int) -> None:
    if ndim > 2:
        raise RuntimeError(
            f"t() expects a tensor with <= 2 dimensions, but self is {ndim}D; use "
            "transpose(dim0, dim1) or .mT for batches of matrices"
        )


def movedim_perm(ndim: int, source: Sequence[int], destination: Sequence[int]) -> Shape:
    """The permutation that moves dims ``source`` to positions ``destination``."""
    if len(source) != len(destination):
        raise RuntimeError(
            f"movedim: Invalid source or destination dims: source ({list(source)} dims) should "
            f"contain the same number of dims as destination ({list(destination)} dims)"
        )
    src = [wrap_dim(d, ndim) for d in source]
    dst = [wrap_dim(d, ndim) for d in destination]
    if ndim == 0:
        return ()
    if len(set(src)) != len(src):
        raise RuntimeError(f"movedim: repeated dim in `source` ({list(source)})")
    if len(set(dst)) != len(dst):
        raise RuntimeError(f"movedim: repeated dim in `destination` ({list(destination)})")
    perm = [-1] * ndim
    for s, d in zip(src, dst, strict=True):
        perm[d] = s
    moved = set(src)
    rest = iter(d for d in range(ndim) if d not in moved)
    return tuple(p if p >= 0 else next(rest) for p in perm) if ndim else ()


def expand(layout: Layout, size: Sequence[int]) -> Layout:
    """Layout of ``expand(size)``: new leading dims and expanded size-1 dims get stride 0."""
    shape, strides, offset = layout
    n, m = len(shape), len(size)
    if m < n:
        raise RuntimeError(
            f"expand: the number of sizes provided ({m}) must be greater or equal to the number "
            f"of dimensions in the tensor ({n}); sizes {list(size)}, tensor sizes {list(shape)}"
        )
    out_sh = [0] * m
    out_st = [0] * m
    for i in range(m - 1, -1, -1):
        j = i - (m - n)
        want = size[i]
        if j < 0:
            if want < 0:
                raise RuntimeError(
                    f"expand: -1 is not allowed in a leading, non-existing dimension {i}; "
                    f"target sizes {list(size)}, tensor sizes {list(shape)}"
                )
            out_sh[i], out_st[i] = want, 0
            continue
        have = shape[j]
        if want == -1:
            want = have
        if have == want:
            out_sh[i], out_st[i] = have, strides[j]
        elif have == 1:
            out_sh[i], out_st[i] = want, 0
        else:
            raise RuntimeError(
                f"The expanded size of the tensor ({want}) must match the existing size ({have}) "
                f"at non-singleton dimension {i}.  Target sizes: {list(size)}.  Tensor sizes: "
                f"{list(shape)}"
            )
    return tuple(out_sh), tuple(out_st), offset


def unsqueeze(layout: Layout, dim: int) -> Layout:
    shape, strides, offset = layout
    n = len(shape)
    d = wrap_dim(dim, n + 1)
    st = 1 if d >= n else shape[d] * strides[d]
    return shape[:d] + (1,) + shape[d:], strides[:d] + (st,) + strides[d:], offset


def squeeze_dims(shape: Shape, dims: Sequence[int] | None) -> Shape:
    """The dims ``squeeze`` removes: the given ones (wrapped) that have size 1, or all size-1."""
    if dims is None:
        return tuple(i for i, n in enumerate(shape) if n == 1)
    n = len(shape)
    wrapped = {wrap_dim(d, n) for d in dims}
    return tuple(i for i in sorted(wrapped) if n and shape[i] == 1)


def squeeze(layout: Layout, dims: Sequence[int] | None) -> Layout:
    shape, strides, offset = layout
    drop = set(squeeze_dims(shape, dims))
    keep = [i for i in range(len(shape)) if i not in drop]
    return tuple(shape[i] for i in keep), tuple(strides[i] for i in keep), offset


# --------------------------------------------------------------------------- sub-ranges


def select_index(shape: Shape, dim: int, index: int) -> tuple[int, int]:
    """``(dim, index)`` wrapped and bounds-checked, with PyTorch's IndexErrors."""
    n = len(shape)
    if n == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = wrap_dim(dim, n)
    size = shape[d]
    if not -size <= index < size:
        raise IndexError(
            f"select(): index {index} out of range for tensor of size {list(shape)} at "
            f"dimension {d}"
        )
    return d, index % size


def select(layout: Layout, dim: int, index: int) -> Layout:
    shape, strides, offset = layout
    d, i = select_index(shape, dim, index)
    return shape[:d] + shape[d + 1 :], strides[:d] + strides[d + 1 :], offset + i * strides[d]


def slice_bounds(
    shape: Shape, dim: int, start: int | None, end: int | None, step: int
) -> tuple[int, int, int, int]:
    """``(dim, start, end, length)`` of ``slice(dim, start, end, step)``, clamped as PyTorch
    does: negative bounds count from the end, then clamp to ``[0, size]``, ``end >= start``."""
    if step <= 0:
        raise RuntimeError(f"slice step must be positive, got {step}")
    n = len(shape)
    if n == 0:
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    d = wrap_dim(dim, n)
    size = shape[d]
    s = 0 if start is None else start
    e = INT64_MAX if end is None else end
    if s < 0:
        s += size
    if e < 0:
        e += size
    s = min(max(s, 0), size)
    e = min(max(e, s), size)
    return d, s, e, (e - s + step - 1) // step


def slice_(layout: Layout, dim: int, start: int | None, end: int | None, step: int) -> Layout:
    shape, strides, offset = layout
    d, s, _, length = slice_bounds(shape, dim, start, end, step)
    sh = shape[:d] + (length,) + shape[d + 1 :]
    st = strides[:d] + (strides[d] * step,) + strides[d + 1 :]
    return sh, st, offset + s * strides[d]


def check_narrow(shape: Shape, dim: int, start: int, length: int) -> tuple[int, int]:
    """``(dim, start)`` of ``narrow``, wrapped and checked."""
    if not shape:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    d = wrap_dim(dim, len(shape))
    size = shape[d]
    if length < 0:
        raise RuntimeError(f"narrow(): length must be non-negative, got {length}")
    if not -size <= start <= size:
        raise IndexError(
            f"start out of range (expected to be in range of [{-size}, {size}], but got {start})"
        )
    if start < 0:
        start += size
    if start + length > size:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({size}).")
    return d, start


def diagonal(layout: Layout, offset: int, dim1: int, dim2: int) -> Layout:
    shape, strides, off = layout
    n = len(shape)
    d1, d2 = wrap_dim(dim1, n), wrap_dim(dim2, n)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    if offset >= 0:
        length = max(min(shape[d1], shape[d2] - offset), 0)
        start = offset * strides[d2]
    else:
        length = max(min(shape[d1] + offset, shape[d2]), 0)
        start = -offset * strides[d1]
    if length == 0:
        start = 0
    keep = [i for i in range(n) if i not in (d1, d2)]
    sh = tuple(shape[i] for i in keep) + (length,)
    st = tuple(strides[i] for i in keep) + (strides[d1] + strides[d2],)
    return sh, st, off + start


def unfold(layout: Layout, dimension: int, size: int, step: int) -> Layout:
    """``Tensor.unfold``: the windows of ``size`` elements, ``step`` apart, along
    ``dimension``; the window index replaces the dim and the window is a new last dim."""
    shape, strides, off = layout
    n = len(shape)
    d = wrap_dim(dimension, n)
    length = shape[d] if n else 1
    if size > length:
        raise RuntimeError(
            f"maximum size for tensor at dimension {d} is {length} but size is {size}"
        )
    if size < 0:
        raise RuntimeError(f"size is {size} but must be >= 0")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    if n == 0:
        return (size,), (1,), off
    sh = (*shape[:d], (length - size) // step + 1, *shape[d + 1 :], size)
    st = (*strides[:d], strides[d] * step, *strides[d + 1 :], strides[d])
    return sh, st, off


# --------------------------------------------------------------------------- splits


def split_sizes(size: int, split_size: int) -> list[int]:
    """Chunk lengths of ``split(split_size)`` along a dim of ``size``."""
    if split_size < 0:
        raise RuntimeError(
            f"split expects split_size be non-negative, but got split_size={split_size}"
        )
    if split_size == 0:
        if size != 0:
            raise RuntimeError(
                f"split_size can only be 0 if dimension size is 0, but got dimension size of {size}"
            )
        return [0]
    full, rest = divmod(size, split_size)
    return [split_size] * full + ([rest] if rest or not full else [])


def check_split_with_sizes(size: int, sizes: Sequence[int]) -> None:
    if any(s < 0 for s in sizes) or sum(sizes) != size:
        raise RuntimeError(
            f"split_with_sizes expects split_sizes to sum exactly to {size} (input tensor's size "
            f"at dimension), but got split_sizes={list(sizes)}"
        )


def chunk_size(size: int, chunks: int) -> int:
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    return -(-size // chunks)


# --------------------------------------------------------------------------- as_strided


def check_as_strided(size: Sequence[int], stride: Sequence[int], offset: int, storage: int) -> None:
    """PyTorch's bounds check: the view must fit in a storage of ``storage`` elements."""
    if len(size) != len(stride):
        raise RuntimeError(
            f"as_strided: mismatch in length of strides and shape: sizes {list(size)}, strides "
            f"{list(stride)}"
        )
    if any(n < 0 for n in size):
        raise RuntimeError(f"as_strided: negative sizes are not allowed, got {list(size)}")
    if any(s < 0 for s in stride):
        raise RuntimeError(f"as_strided: negative strides are not supported, got {list(stride)}")
    if offset < 0:
        raise RuntimeError(f"as_strided: Tensor: invalid storage offset {offset}")
    if math.prod(size) == 0:
        return
    need = offset + 1 + sum((n - 1) * s for n, s in zip(size, stride, strict=True))
    if need > storage:
        raise RuntimeError(
            f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset {offset}, "
            f"requiring a storage size of {need} elements are out of bounds for storage of size "
            f"{storage} elements"
        )


# --------------------------------------------------------------------------- dims of list ops


def unbind_dim(ndim: int, dim: int) -> int:
    if ndim == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    return wrap_dim(dim, ndim)


def split_dim(ndim: int, dim: int) -> int:
    if ndim == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    return wrap_dim(dim, ndim)


# --------------------------------------------------------------------------- view.dtype


def view_dtype(layout: Layout, old: dtype, new: dtype) -> Layout:
    """Layout of ``view(dtype)``: with a different element size the last dim (stride 1)
    grows or shrinks by the ratio and the other strides and the offset rescale."""
    shape, strides, offset = layout
    a, b = old.itemsize, new.itemsize
    if a == b:
        return layout
    what = f"to view {old._short} as {new._short} (different element sizes)"
    if not shape:
        raise RuntimeError(f"self.dim() cannot be 0 {what}")
    if strides[-1] != 1:
        raise RuntimeError(f"self.stride(-1) must be 1 {what}, but got {strides[-1]}")
    last = len(shape) - 1
    if b > a:
        r = b // a
        if shape[-1] % r:
            raise RuntimeError(
                f"self.size(-1) must be divisible by {r} {what}, but got {shape[-1]}"
            )
        if offset % r:
            raise RuntimeError(
                f"self.storage_offset() must be divisible by {r} {what}, but got {offset}"
            )
        for i in range(last):
            if strides[i] % r:
                raise RuntimeError(
                    f"self.stride({i}) must be divisible by {r} {what}, but got {strides[i]}"
                )
        sh = shape[:last] + (shape[-1] // r,)
        return sh, tuple(s // r for s in strides[:last]) + (1,), offset // r
    r = a // b
    sh = shape[:last] + (shape[-1] * r,)
    return sh, tuple(s * r for s in strides[:last]) + (1,), offset * r


# --------------------------------------------------------------------------- advanced indexing

#: an ``index.Tensor`` entry as the shape rules see it: None, or (is_mask, shape)
IndexEntry = tuple[bool, Shape] | None
INDEX_DTYPE_ERROR = "tensors used as indices must be long, int, byte or bool tensors"


def check_indices(shape: Shape, entries: Sequence[IndexEntry]) -> None:
    """PyTorch's value-free checks of ``index``/``index_put`` entries: count, mask shapes,
    and that the integer index shapes broadcast together."""
    ndim = len(shape)
    used = sum(1 if e is None or not e[0] else len(e[1]) for e in entries)
    if used > ndim:
        raise IndexError(f"too many indices for tensor of dimension {ndim} (got {used})")
    dim = 0
    int_shapes = []
    for e in entries:
        if e is None:
            dim += 1
            continue
        is_mask, sh = e
        if is_mask:
            for j, n in enumerate(sh):
                if n != shape[dim + j]:
                    raise IndexError(
                        f"The shape of the mask {list(sh)} at index {j} does not match the shape "
                        f"of the indexed tensor {list(shape)} at index {dim + j}"
                    )
            dim += len(sh)
        else:
            int_shapes.append(sh)
            dim += 1
    try:
        broadcast_shapes(*int_shapes)
    except RuntimeError:
        shown = ", ".join(str(list(s)) for s in int_shapes)
        raise IndexError(
            f"shape mismatch: indexing tensors could not be broadcast together with shapes {shown}"
        ) from None


def index_shape(shape: Shape, entries: Sequence[IndexEntry], op: str = "index.Tensor") -> Shape:
    """The result shape of ``index`` with integer (not mask) index tensors: the broadcast index
    shape replaces the indexed dims, in place if they are adjacent, else in front (NumPy's rule)."""
    check_indices(shape, entries)
    if any(e is not None and e[0] for e in entries):
        raise DataDependentShapeError(
            f"{op}: boolean mask indices give a shape that depends on the mask's values, which "
            "a tensor without data does not have; index with integer tensors (mask.nonzero()) "
            "or run on the cpu device"
        )
    full = list(entries) + [None] * (len(shape) - len(entries))
    picked = [i for i, e in enumerate(full) if e is not None]
    if not picked:
        return shape
    bshape = broadcast_shapes(*(e[1] for e in full if e is not None))
    rest = [shape[i] for i, e in enumerate(full) if e is None]
    if picked[-1] - picked[0] + 1 == len(picked):  # adjacent: in place
        first = picked[0]
        return tuple(rest[:first]) + bshape + tuple(rest[first:])
    return bshape + tuple(rest)


def check_put_dtypes(dst: dtype, src: dtype) -> None:
    """``index_put_`` writes values of the destination's dtype only."""
    if dst is not src:
        raise RuntimeError(
            "Index put requires the source and destination dtypes match, got "
            f"{dst._short} for the destination and {src._short} for the source."
        )
