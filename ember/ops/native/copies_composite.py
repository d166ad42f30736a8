"""The copies ops PyTorch writes as compositions of others (CompositeImplicitAutograd), so
``__torch_dispatch__`` code and the lazy device see their parts, as on PyTorch: the NumPy-style
joins (``concat``, ``hstack``, ``vstack``, ``dstack``, ``column_stack``), ``diag``,
``meshgrid``, ``cartesian_prod``, ``combinations``, ``repeat_interleave`` of a tensor and
``diff``. Each differentiates through its parts. Also the shape rules the new copies kernels
(``diag_embed``, ``block_diag``, ``rot90``, ``repeat_interleave.Tensor``) share with their
Meta rules.
"""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Sequence
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

import numpy as np

from ember import _memory_format, dtypes
from ember._memory_format import format_name, is_contiguous_for, suggest_memory_format
from ember.device import as_device
from ember.ops.native._define import OUT_CHECKS
from ember.ops.registry import impl, ops
from ember.ops.shapes import wrap_dim

if TYPE_CHECKING:
    from ember._tensor import Tensor

aten = ops.aten
CIA = "CompositeImplicitAutograd"
Shape = tuple[int, ...]


# --------------------------------------------------------------------------- shared rules


def diag_embed_shape(shape: Shape, offset: int, dim1: int, dim2: int) -> tuple[Shape, int, int]:
    """(result shape, wrapped dim1, wrapped dim2) of ``diag_embed``: the last dim of the input
    becomes a diagonal of two new dims of size ``n + |offset|``.

    >>> from ember.ops.native.copies_composite import diag_embed_shape
    >>> diag_embed_shape((2, 3), 1, -2, -1)
    ((2, 4, 4), 1, 2)
    """
    ndim = len(shape) + 1
    d1, d2 = wrap_dim(dim1, ndim, "diag_embed"), wrap_dim(dim2, ndim, "diag_embed")
    if d1 == d2:
        raise RuntimeError(f"diag_embed: diagonal dimensions cannot be identical {dim1}, {dim2}")
    n = (shape[-1] if shape else 1) + abs(offset)
    rest = list(shape[:-1])
    out = []
    for i in range(ndim):
        out.append(n if i in (d1, d2) else rest.pop(0))
    return tuple(out), d1, d2


def block_diag_plan(
    shapes: Sequence[Shape], dts: Sequence[dtypes.dtype]
) -> tuple[list[Shape], Shape, dtypes.dtype]:
    """(each input as a matrix shape, result shape, result dtype) of ``block_diag``."""
    mats: list[Shape] = []
    for i, s in enumerate(shapes):
        if len(s) > 2:
            raise RuntimeError(
                f"torch.block_diag: Input tensors must have 2 or fewer dimensions. Input {i} has "
                f"{len(s)} dimensions"
            )
        mats.append((1, 1) if not s else (1, s[0]) if len(s) == 1 else (s[0], s[1]))
    if not shapes:
        return [], (1, 0), dtypes.get_default_dtype()
    # PyTorch's result type: a 0-dim input counts below the others of its category
    # (float32 and a float64 scalar give float32)
    d = dtypes.result_type_of(
        [SimpleNamespace(dtype=x, ndim=len(s)) for s, x in zip(shapes, dts, strict=True)]
    )
    return mats, (sum(m[0] for m in mats), sum(m[1] for m in mats)), d


def rot90_plan(ndim: int, k: int, dims: Sequence[int]) -> tuple[int, int, int]:
    """(k modulo 4, wrapped dim0, wrapped dim1) of ``rot90``, with PyTorch's checks."""
    dims = list(dims)
    if len(dims) != 2:
        raise RuntimeError(f"rot90: expected total rotation dims == 2, but got dims = {len(dims)}")
    if ndim < 2:
        raise RuntimeError(f"rot90: expected total dims >= 2, but got total dims = {ndim}")
    d0, d1 = wrap_dim(dims[0], ndim, "rot90"), wrap_dim(dims[1], ndim, "rot90")
    if d0 == d1:
        raise RuntimeError(
            f"rot90: expected rotation dims to be different, but got dim0 = {dims[0]} and "
            f"dim1 = {dims[1]}"
        )
    return k % 4, d0, d1


def rot90_shape(shape: Shape, k: int, d0: int, d1: int) -> Shape:
    out = list(shape)
    if k % 2:
        out[d0], out[d1] = shape[d1], shape[d0]
    return tuple(out)


def check_repeats(repeats: Tensor, op: str = "repeat_interleave") -> None:
    """``repeat_interleave.Tensor``'s checks that need no values."""
    if repeats.dtype not in (dtypes.int64, dtypes.int32):
        raise NotImplementedError(
            f"\"repeat_interleave_cpu\" not implemented for '{repeats.dtype._short}': repeats "
            "has to be a Long or Int tensor"
        )
    if repeats.ndim != 1:
        raise RuntimeError(
            f"{op}: repeat_interleave only accept 1D vector as repeat (got shape "
            f"{list(repeats.shape)})"
        )


def check_diff_out(shape: Shape, n: int, dim: int, lengths: Sequence[int]) -> None:
    """``diff.out``'s check (PyTorch's out= kernel narrows before it clamps ``n``): an empty
    differencing dim raises IndexError, where the functional form returns it empty.
    ``lengths``: the sizes along ``dim`` of prepend/append, if given."""
    if not shape or n <= 0:
        return
    d = wrap_dim(dim, len(shape), "diff")
    if shape[d] + sum(lengths) == 0:
        raise IndexError(
            "diff: start out of range (expected to be in range of [0, 0], but got 1): the "
            f"differencing dim {d} of the input (shape {list(shape)}) is empty"
        )


def check_diff_args(
    self: Tensor,
    n: int = 1,
    dim: int = -1,
    prepend: Tensor | None = None,
    append: Tensor | None = None,
) -> None:
    """``check_diff_out`` for ``diff.out``'s arguments (the sizes along ``dim`` of the
    prepend/append tensors that are given): its out check (``OUT_CHECKS``), which every
    backend's derived ``diff.out`` runs."""
    lengths = []
    if self.ndim:
        d = wrap_dim(dim, self.ndim, "diff")
        lengths = [t.shape[d] for t in (prepend, append) if t is not None and t.ndim == self.ndim]
    check_diff_out(tuple(self.shape), n, dim, lengths)


OUT_CHECKS[aten.diff.out] = check_diff_args

# --------------------------------------------------------------------------- joins


def _nonempty(tensors: Sequence[Tensor], op: str) -> None:
    if not tensors:
        raise RuntimeError(f"{op} expects a non-empty TensorList")


@impl(aten.concat.default, CIA)
def concat(tensors: list[Tensor], dim: int = 0) -> Tensor:
    return aten.cat.default(tensors, dim)


@impl(aten.concatenate.default, CIA)
def concatenate(tensors: list[Tensor], dim: int = 0) -> Tensor:
    return aten.cat.default(tensors, dim)


def _at_least(t: Tensor, n: int) -> Tensor:
    """``atleast_{n}d`` of one tensor, with the parts PyTorch uses."""
    if t.ndim >= n:
        return t
    if t.ndim == 0:
        return aten.reshape.default(t, [1] * n)
    if n == 2:
        return aten.unsqueeze.default(t, 0)
    if t.ndim == 1:
        return aten.unsqueeze.default(aten.unsqueeze.default(t, 0), -1)
    return aten.unsqueeze.default(t, -1)


@impl(aten.hstack.default, CIA)
def hstack(tensors: list[Tensor]) -> Tensor:
    _nonempty(tensors, "hstack")
    rep = [_at_least(t, 1) for t in tensors]
    return aten.cat.default(rep, 0 if rep[0].ndim == 1 else 1)


@impl(aten.vstack.default, CIA)
def vstack(tensors: list[Tensor]) -> Tensor:
    _nonempty(tensors, "vstack")
    return aten.cat.default([_at_least(t, 2) for t in tensors], 0)


@impl(aten.row_stack.default, CIA)
def row_stack(tensors: list[Tensor]) -> Tensor:
    """``vstack``'s alias."""
    return aten.vstack.default(tensors)


@impl(aten.dstack.default, CIA)
def dstack(tensors: list[Tensor]) -> Tensor:
    _nonempty(tensors, "dstack")
    return aten.cat.default([_at_least(t, 3) for t in tensors], 2)


@impl(aten.column_stack.default, CIA)
def column_stack(tensors: list[Tensor]) -> Tensor:
    _nonempty(tensors, "column_stack")
    cols = [aten.reshape.default(t, [t.numel(), 1]) if t.ndim <= 1 else t for t in tensors]
    return aten.cat.default(cols, 1)


# --------------------------------------------------------------------------- grids


def _meshgrid(tensors: Sequence[Tensor], indexing: str) -> list[Tensor]:
    if not tensors:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    for t in tensors[1:]:
        if t.dtype is not tensors[0].dtype:
            raise RuntimeError(
                f"meshgrid expects all tensors to have the same dtype (got {tensors[0].dtype} "
                f"and {t.dtype})"
            )
        if t.device != tensors[0].device:
            raise RuntimeError("meshgrid expects all tensors to have the same device")
    if indexing not in ("ij", "xy"):
        raise RuntimeError(
            f'torch.meshgrid: indexing must be one of "xy" or "ij", but received: {indexing}'
        )
    refs = list(tensors)
    swap = indexing == "xy" and len(refs) >= 2
    if swap:
        refs[0], refs[1] = refs[1], refs[0]
    for t in refs:
        if t.ndim > 1:
            raise RuntimeError(
                "torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got a tensor of "
                f"shape {list(t.shape)}"
            )
    shape = [t.numel() for t in refs]
    grids = []
    for i, t in enumerate(refs):
        view = [1] * len(refs)
        view[i] = -1
        grids.append(aten.expand.default(aten.view.default(t, view), shape))
    if swap:
        grids[0], grids[1] = grids[1], grids[0]
    return grids


@impl(aten.meshgrid.default, CIA)
def meshgrid(tensors: list[Tensor]) -> list[Tensor]:
    warnings.warn(
        "torch.meshgrid: in an upcoming release, it will be required to pass the indexing "
        "argument.",
        UserWarning,
        stacklevel=3,
    )
    return _meshgrid(tensors, "ij")


@impl(aten.meshgrid.indexing, CIA)
def meshgrid_indexing(tensors: list[Tensor], *, indexing: str) -> list[Tensor]:
    return _meshgrid(tensors, indexing)


def _check_vector(t: Tensor, op: str) -> None:
    if t.ndim != 1:
        raise RuntimeError(f"{op}: Expect a 1D vector, but got shape {list(t.shape)}")


@impl(aten.cartesian_prod.default, CIA)
def cartesian_prod(tensors: list[Tensor]) -> Tensor:
    for t in tensors:
        _check_vector(t, "cartesian_prod")
    if len(tensors) == 1:
        return tensors[0]
    grids = _meshgrid(tensors, "ij")
    return aten.stack.default([aten.flatten.using_ints(g) for g in grids], 1)


@impl(aten.combinations.default, CIA)
def combinations(self: Tensor, r: int = 2, with_replacement: bool = False) -> Tensor:
    """Every ``r``-element combination of a vector's elements, in lexicographic order of their
    positions (as ``itertools.combinations``), one per row: an ``index_select`` of ``self``
    by positions computed from its length alone (no values), so Meta and the lazy device run it.
    """
    _check_vector(self, "combinations")
    if r < 0:
        raise RuntimeError(f"combinations: Expect a non-negative number, but got {r}")
    if r == 0:
        return aten.new_empty.default(self, [0])
    n = self.shape[0]
    pick = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    rows = np.fromiter(itertools.chain.from_iterable(pick(range(n), r)), np.int64)
    from ember._factory import tensor  # cycle: ember._factory imports the catalogue (ops/)

    index = tensor(rows, device=self.device)
    return aten.view.default(aten.index_select.default(self, 0, index), [rows.size // r, r])


# --------------------------------------------------------------------------- diag


@impl(aten.diag.default, CIA)
def diag(self: Tensor, diagonal: int = 0) -> Tensor:
    if self.ndim == 1:
        return aten.diag_embed.default(self, diagonal, 0, 1)
    if self.ndim == 2:
        return aten.clone.default(aten.diagonal.default(self, diagonal))
    raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {self.ndim}D")


@impl(aten.diagflat.default, CIA)
def diagflat(self: Tensor, offset: int = 0) -> Tensor:
    """The flattened input as the ``offset`` diagonal of a square matrix."""
    return aten.diag_embed.default(aten.reshape.default(self, [-1]), offset, 0, 1)


@impl(aten.argwhere.default, CIA)
def argwhere(self: Tensor) -> Tensor:
    return aten.nonzero.default(self)


# --------------------------------------------------------------------------- repeats


@impl(aten.repeat_interleave.self_Tensor, CIA)
def repeat_interleave_tensor(
    self: Tensor, repeats: Tensor, dim: int | None = None, *, output_size: int | None = None
) -> Tensor:
    x = self
    if dim is None:
        x, dim = aten.flatten.using_ints(self), 0
    d = wrap_dim(dim, x.ndim, "repeat_interleave")
    size = x.shape[d] if x.ndim else 1
    if repeats.ndim == 0 or (repeats.ndim == 1 and repeats.shape[0] == 1):
        repeats = aten.expand.default(aten.reshape.default(repeats, [1]), [size])
    elif repeats.ndim == 1:
        if repeats.shape[0] != size:
            raise RuntimeError(
                "repeat_interleave: repeats must have the same size as input along dim, but got "
                f"repeats.size(0) = {repeats.shape[0]} and input.size({d}) = {size}"
            )
    else:
        raise RuntimeError("repeat_interleave: repeats must be 0-dim or 1-dim tensor")
    index = aten.repeat_interleave.Tensor(repeats, output_size=output_size)
    return aten.index_select.default(x, d, index)


@impl(aten.repeat_interleave.self_int, CIA)
def repeat_interleave_int(
    self: Tensor, repeats: int, dim: int | None = None, *, output_size: int | None = None
) -> Tensor:
    x = self if dim is not None else aten.flatten.using_ints(self)
    d = wrap_dim(0 if dim is None else dim, self.ndim, "repeat_interleave")
    if repeats < 0:
        raise RuntimeError(f"repeat_interleave: Repeats must be non-negative, got {repeats}")
    x = aten.unsqueeze.default(x, d + 1)
    shape = list(x.shape)
    shape[d + 1] = repeats
    if output_size is not None and output_size != repeats * shape[d]:
        raise RuntimeError(
            f"repeat_interleave: Invalid output_size, expected {repeats * shape[d]} but got "
            f"{output_size}"
        )
    x = aten.clone.default(aten.expand.default(x, shape), memory_format="contiguous_format")
    return aten.flatten.using_ints(x, d, d + 1)


# --------------------------------------------------------------------------- diff


def _check_diff_operand(self: Tensor, other: Tensor | None, dim: int) -> None:
    if other is None:
        return
    if other.ndim != self.ndim:
        raise RuntimeError(
            "diff expects prepend or append to be the same dimension as input (input has "
            f"{self.ndim} dims, got {other.ndim})"
        )
    for i, (a, b) in enumerate(zip(self.shape, other.shape, strict=True)):
        if i != dim and a != b:
            raise RuntimeError(
                "diff expects the shape of tensor to prepend or append to match that of input "
                f"except along the differencing dimension; input.size({i}) = {a}, but got "
                f"tensor.size({i}) = {b}"
            )


@impl(aten.diff.default, CIA)
def diff(
    self: Tensor,
    n: int = 1,
    dim: int = -1,
    prepend: Tensor | None = None,
    append: Tensor | None = None,
) -> Tensor:
    if self.ndim == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    d = wrap_dim(dim, self.ndim, "diff")
    if n < 0:
        raise RuntimeError(f"diff: order must be non-negative but got {n}")
    _check_diff_operand(self, prepend, d)
    _check_diff_operand(self, append, d)
    if n == 0:
        return aten.clone.default(self)
    x = self
    if prepend is not None or append is not None:
        parts = [t for t in (prepend, self, append) if t is not None]
        x = aten.cat.default(parts, d)
    length = x.shape[d] - 1
    xor = x.dtype is dtypes.bool_
    for _ in range(min(n, x.shape[d])):
        hi, lo = aten.narrow.default(x, d, 1, length), aten.narrow.default(x, d, 0, length)
        x = aten.logical_xor.default(hi, lo) if xor else aten.sub.Tensor(hi, lo)
        length -= 1
    return x


def check_stack(tensors: Sequence[Tensor]) -> None:
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    first = tensors[0]._edata.shape
    for i, t in enumerate(tensors):
        if t._edata.shape != first:
            raise RuntimeError(
                f"stack expects each tensor to be equal size, but got {list(first)} at entry 0 "
                f"and {list(t._edata.shape)} at entry {i}"
            )


# --------------------------------------------------------------------------- contiguous, to, stack
# (moved here from ember/backends/cpu/copies.py: decompositions serve every backend)


def _format_object(memory_format: Any) -> Any:
    """The ``ember.memory_format`` object of a format or its name (a schema default parses to
    the name; PyTorch's handlers see the object)."""
    return (
        getattr(_memory_format, memory_format) if isinstance(memory_format, str) else memory_format
    )


@impl(aten.contiguous.default, CIA)
def contiguous(self: Tensor, *, memory_format: Any = "contiguous_format") -> Tensor:
    if is_contiguous_for(tuple(self.shape), tuple(self.stride()), memory_format, "contiguous"):
        return self
    if format_name(memory_format, "contiguous") == "preserve_format":
        raise RuntimeError("contiguous: preserve memory format is unsupported by the contiguous "
                           "operator; pass contiguous_format")  # fmt: skip
    return aten.clone.default(self, memory_format=_format_object(memory_format))


def _to(
    self: Tensor,
    dtype: dtypes.dtype | None = None,
    device: Any = None,
    non_blocking: bool = False,
    copy: bool = False,
    memory_format: Any = None,
    **rest: Any,
) -> Tensor:
    """``to`` returns ``self`` when nothing would change, else a ``_to_copy``: as PyTorch's,
    a ``memory_format`` the tensor's layout reads as (``suggest_memory_format``) changes
    nothing, even where the tensor is not contiguous in it.

    Every ``to`` overload reaches here (``to.dtype_layout`` as it is, with ``layout`` and
    ``pin_memory`` in ``rest``); the others name their dtype and device positionally.
    """
    if (
        not copy
        and (dtype is None or dtype is self.dtype)
        and (device is None or as_device(device) == self.device)
        and format_name(memory_format, "to")
        in ("preserve_format", suggest_memory_format(tuple(self.shape), tuple(self.stride())))
    ):
        return self
    kwargs = {k: v for k, v in rest.items() if v is not None}
    if dtype is not None:
        kwargs["dtype"] = dtype
    if device is not None:
        kwargs["device"] = device
    if non_blocking:
        kwargs["non_blocking"] = non_blocking
    if memory_format is not None:
        kwargs["memory_format"] = memory_format
    return aten._to_copy.default(self, **kwargs)


impl(aten.to.dtype_layout, CIA, _to)


@impl(aten.to.device, CIA)
def to_device(self: Tensor, device: Any, dtype: dtypes.dtype, *flags: Any, **kw: Any) -> Tensor:
    return _to(self, dtype, device, *flags, **kw)


@impl(aten.to.dtype, CIA)
def to_dtype(self: Tensor, dtype: dtypes.dtype, *flags: Any, **kw: Any) -> Tensor:
    return _to(self, dtype, None, *flags, **kw)


@impl(aten.to.other, CIA)
def to_other(self: Tensor, other: Tensor, *flags: Any, **kw: Any) -> Tensor:
    return _to(self, other.dtype, other.device, *flags, **kw)


# --------------------------------------------------------------------------- view scatters

# NOTE [scatter into a view]
# ``slice_scatter``, ``select_scatter``, ``diagonal_scatter`` and ``as_strided_scatter`` are
# the out-of-place forms of writing ``src`` into a view of ``self``: a copy of ``self`` (its
# layout kept) with the view's elements replaced by ``src`` (cast to ``self``'s dtype), as
# functionalization writes ``view.copy_(src)``. One op each above autograd, as PyTorch's (a
# dispatch mode sees ``slice_scatter``; the gradients are the view of the output's gradient
# for ``src`` and the gradient scattered with zeros for ``self``); below, every backend runs
# the same composition of clone, the view and ``copy_``.


def _scatter_into(self: Tensor, src: Tensor, view: Tensor, clone: Tensor) -> Tensor:
    if tuple(src.shape) != tuple(view.shape):
        raise RuntimeError(
            "expected src to have a size equal to the slice of self. src size = "
            f"{list(src.shape)}, slice size = {list(view.shape)}"
        )
    aten.copy_.default(view, src)
    return clone


@impl(aten.slice_scatter.default, "CompositeExplicitAutograd")
def slice_scatter(
    self: Tensor,
    src: Tensor,
    dim: int = 0,
    start: int | None = None,
    end: int | None = None,
    step: int = 1,
) -> Tensor:
    out = aten.clone.default(self)
    view = aten.slice.Tensor(out, dim, start, end, step)
    return _scatter_into(self, src, view, out)


@impl(aten.select_scatter.default, "CompositeExplicitAutograd")
def select_scatter(self: Tensor, src: Tensor, dim: int, index: int) -> Tensor:
    out = aten.clone.default(self)
    return _scatter_into(self, src, aten.select.int(out, dim, index), out)


@impl(aten.diagonal_scatter.default, "CompositeExplicitAutograd")
def diagonal_scatter(
    self: Tensor, src: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1
) -> Tensor:
    out = aten.clone.default(self)
    return _scatter_into(self, src, aten.diagonal.default(out, offset, dim1, dim2), out)


@impl(aten.as_strided_scatter.default, "CompositeExplicitAutograd")
def as_strided_scatter(
    self: Tensor,
    src: Tensor,
    size: Sequence[int],
    stride: Sequence[int],
    storage_offset: int | None = None,
) -> Tensor:
    """(The sizes and strides address the storage of a copy of ``self`` laid out with
    ``self``'s strides from offset 0, as PyTorch's.)"""
    out = aten.empty_strided.default(
        list(self.shape), list(self.stride()), dtype=self.dtype, device=self.device
    )
    aten.copy_.default(out, self)
    view = aten.as_strided.default(out, size, stride, storage_offset)
    return _scatter_into(self, src, view, out)


@impl(aten.narrow_copy.default, CIA)
def narrow_copy(self: Tensor, dim: int, start: int, length: int) -> Tensor:
    """``narrow`` copied into a tensor of its own (contiguous)."""
    view = aten.narrow.default(self, dim, start, length)
    return aten.clone.default(view, memory_format=_memory_format.contiguous_format)  # type: ignore[no-any-return]


@impl(aten.fliplr.default, CIA)
def fliplr(self: Tensor) -> Tensor:
    if self.ndim < 2:
        raise RuntimeError(f"Input must be >= 2-d. (fliplr got a {self.ndim}-d tensor)")
    return aten.flip.default(self, [1])  # type: ignore[no-any-return]


@impl(aten.flipud.default, CIA)
def flipud(self: Tensor) -> Tensor:
    if self.ndim < 1:
        raise RuntimeError("Input must be >= 1-d. (flipud got a 0-d tensor)")
    return aten.flip.default(self, [0])  # type: ignore[no-any-return]


@impl(aten.stack.default, "CompositeExplicitAutograd")
def stack(tensors: list[Tensor], dim: int = 0) -> Tensor:
    """One op above autograd, as PyTorch's (a dispatch mode sees ``stack``, its gradient is
    an ``unbind``); below, the unsqueezed inputs are concatenated."""
    check_stack(tensors)
    d = wrap_dim(dim, tensors[0].ndim + 1, "stack")
    unsqueeze = aten.unsqueeze.default
    return aten.cat.default([unsqueeze(t, d) for t in tensors], d)


@impl(aten.stack.out, CIA)
def stack_out(tensors: list[Tensor], dim: int = 0, *, out: Tensor) -> Tensor:
    check_stack(tensors)
    d = wrap_dim(dim, tensors[0].ndim + 1, "stack")
    unsqueeze = aten.unsqueeze.default
    return aten.cat.out([unsqueeze(t, d) for t in tensors], d, out=out)


# --------------------------------------------------------------------------- tile, where


@impl(aten.tile.default, CIA)
def tile(self: Tensor, dims: Sequence[int]) -> Tensor:
    """``repeat`` with ``dims`` padded by leading 1s to ``self``'s rank (NumPy's ``tile``)."""
    reps = [1] * (self.ndim - len(dims)) + list(dims)
    return aten.repeat.default(self, reps)


@impl(aten.nonzero_numpy.default, CIA)
def nonzero_numpy(self: Tensor) -> tuple[Tensor, ...]:
    """One tensor of indices per dim (a 0-dim input counts as 1-D)."""
    if self.ndim == 0:
        self = aten.unsqueeze.default(self, 0)
    return tuple(aten.unbind.int(aten.nonzero.default(self), 1))


@impl(aten.where.default, CIA)
def where(condition: Tensor) -> tuple[Tensor, ...]:
    """``where(condition)``: the indices of the nonzero elements, one tensor per dim."""
    return aten.nonzero_numpy.default(condition)


@impl(aten.fill_diagonal_.default, CIA)
def fill_diagonal_(self: Tensor, fill_value: Any, wrap: bool = False) -> Tensor:
    """Fill the main diagonal (every index equal) in place; with ``wrap``, a tall matrix's
    diagonal starts again every ``columns + 1`` rows (NumPy's ``fill_diagonal``)."""
    n = self.ndim
    if n < 2:
        raise RuntimeError("dimensions must larger than 1")
    height, width = self.shape[0], self.shape[1]
    if n > 2 and any(s != height for s in self.shape[1:]):
        raise RuntimeError("all dimensions of input must be of equal length")
    stride = sum(self.stride())
    offset = self.storage_offset()
    size = min(height, width)
    aten.fill_.Scalar(aten.as_strided.default(self, [size], [stride], offset), fill_value)
    if wrap and n == 2 and height > width + 1:
        step = width + 1
        count = (self.numel() + step - 1) // step - size
        start = offset + self.stride(0) * (width + 1)
        aten.fill_.Scalar(aten.as_strided.default(self, [count], [stride], start), fill_value)
    return self
