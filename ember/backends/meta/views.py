"""Meta rules of the view ops: the layout PyTorch gives each view (shape, strides, storage
offset), from ``ember/ops/strides.py``, built with ``wrap_view`` over a
``ShapeOnlyArray`` so version counter and base are shared as on CPU."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ember import dtypes
from ember._shape_only import ShapeOnlyArray
from ember._tensor import Tensor, wrap_shape_only_like, wrap_view
from ember.dispatch.keys import DispatchKey
from ember.library import impl
from ember.ops import strides as S
from ember.ops.native.views import view_as_real_layout
from ember.ops.registry import ops

aten = ops.aten
Meta = DispatchKey.Meta


def layout(x: Tensor) -> S.Layout:
    return tuple(x._edata.shape), x.stride(), x.storage_offset()


def _array(x: Tensor, lay: S.Layout, np_dtype: Any = None) -> ShapeOnlyArray:
    d = x._edata
    return ShapeOnlyArray(
        lay[0], d.dtype if np_dtype is None else np_dtype, lay[1], lay[2], d.device
    )


def build(x: Tensor, lay: S.Layout) -> Tensor:
    return wrap_view(x, _array(x, lay))


@impl(aten.view.default, Meta)
def view(self: Tensor, size: Sequence[int]) -> Tensor:
    return build(self, S.view(layout(self), size))


@impl(aten._unsafe_view.default, Meta)
def _unsafe_view(self: Tensor, size: Sequence[int]) -> Tensor:
    return wrap_shape_only_like(_array(self, S.view(layout(self), size)), self)


@impl(aten.view.dtype, Meta)
def view_dtype(self: Tensor, dtype: dtypes.dtype) -> Tensor:
    lay = S.view_dtype(layout(self), self.dtype, dtype)
    return wrap_view(self, _array(self, lay, dtype.np))


@impl(aten.alias.default, Meta)
def alias(self: Tensor) -> Tensor:
    return build(self, layout(self))


@impl(aten.as_strided.default, Meta)
def as_strided(
    self: Tensor, size: Sequence[int], stride: Sequence[int], storage_offset: int | None = None
) -> Tensor:
    offset = self.storage_offset() if storage_offset is None else storage_offset
    S.check_as_strided(size, stride, offset, 2**62)  # the storage size is unknown here
    return build(self, (tuple(size), tuple(stride), offset))


@impl(aten.transpose.int, Meta)
def transpose(self: Tensor, dim0: int, dim1: int) -> Tensor:
    return build(self, S.transpose(layout(self), dim0, dim1))


@impl(aten.t.default, Meta)
def t(self: Tensor) -> Tensor:
    S.check_t(self.ndim)
    return build(self, S.transpose(layout(self), 0, -1) if self.ndim == 2 else layout(self))


@impl(aten.permute.default, Meta)
def permute(self: Tensor, dims: Sequence[int]) -> Tensor:
    return build(self, S.permute(layout(self), dims))


@impl(aten.expand.default, Meta)
def expand(self: Tensor, size: Sequence[int], *, implicit: bool = False) -> Tensor:
    return build(self, S.expand(layout(self), size))


@impl(aten.unsqueeze.default, Meta)
def unsqueeze(self: Tensor, dim: int) -> Tensor:
    return build(self, S.unsqueeze(layout(self), dim))


@impl(aten.squeeze.default, Meta)
def squeeze(self: Tensor) -> Tensor:
    return build(self, S.squeeze(layout(self), None))


@impl(aten.squeeze.dim, Meta)
def squeeze_dim(self: Tensor, dim: int) -> Tensor:
    return build(self, S.squeeze(layout(self), (dim,)))


@impl(aten.squeeze.dims, Meta)
def squeeze_dims(self: Tensor, dim: Sequence[int]) -> Tensor:
    return build(self, S.squeeze(layout(self), dim))


@impl(aten.select.int, Meta)
def select(self: Tensor, dim: int, index: int) -> Tensor:
    return build(self, S.select(layout(self), dim, int(index)))


@impl(aten.slice.Tensor, Meta)
def slice_(
    self: Tensor, dim: int = 0, start: int | None = None, end: int | None = None, step: int = 1
) -> Tensor:
    return build(self, S.slice_(layout(self), dim, start, end, step))


@impl(aten.unfold.default, Meta)
def unfold(self: Tensor, dimension: int, size: int, step: int) -> Tensor:
    return build(self, S.unfold(layout(self), dimension, size, step))


@impl(aten.diagonal.default, Meta)
def diagonal(self: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    return build(self, S.diagonal(layout(self), offset, dim1, dim2))


@impl(aten.unbind.int, Meta)
def unbind(self: Tensor, dim: int = 0) -> tuple[Tensor, ...]:
    lay = layout(self)
    d = S.unbind_dim(len(lay[0]), dim)
    return tuple(build(self, S.select(lay, d, i)) for i in range(lay[0][d]))


def _split(self: Tensor, sizes: Sequence[int], d: int) -> tuple[Tensor, ...]:
    lay = layout(self)
    out = []
    start = 0
    for n in sizes:
        out.append(build(self, S.slice_(lay, d, start, start + n, 1)))
        start += n
    return tuple(out)


@impl(aten.split.Tensor, Meta)
def split(self: Tensor, split_size: int, dim: int = 0) -> tuple[Tensor, ...]:
    d = S.split_dim(self.ndim, dim)
    return _split(self, S.split_sizes(self.shape[d], split_size), d)


@impl(aten.split_with_sizes.default, Meta)
def split_with_sizes(self: Tensor, split_sizes: Sequence[int], dim: int = 0) -> tuple[Tensor, ...]:
    d = S.split_dim(self.ndim, dim)
    S.check_split_with_sizes(self.shape[d], split_sizes)
    return _split(self, split_sizes, d)


@impl(aten.view_as_real.default, Meta)
def view_as_real(self: Tensor) -> Tensor:
    lay = view_as_real_layout(layout(self), self.dtype)
    return wrap_view(self, _array(self, lay, self.dtype.to_real().np))
