"""Meta rules of ``scatter_reduce``, ``index_reduce`` and ``put``: the CPU kernels' checks
and a contiguous result like ``self``."""

from __future__ import annotations

from typing import Any

from ember._shape_only import ShapeOnlyArray
from ember._tensor import Tensor, wrap_shape_only
from ember.backends.meta.copies import check_scatter
from ember.dispatch.keys import DispatchKey
from ember.library import impl
from ember.ops.native.scatter_reduce import check_index_reduce, check_put, check_scatter_reduce
from ember.ops.registry import ops

aten = ops.aten
Meta = DispatchKey.Meta


def _like(self: Tensor) -> Tensor:
    return wrap_shape_only(ShapeOnlyArray(tuple(self.shape), self._edata.dtype))


@impl(aten.scatter_reduce.two, Meta)
def scatter_reduce(
    self: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str, **kwargs: Any
) -> Tensor:
    check_scatter_reduce(reduce)
    check_scatter(self, dim, index, src, "scatter_reduce")
    return _like(self)


@impl(aten.index_reduce.default, Meta)
def index_reduce(
    self: Tensor, dim: int, index: Tensor, source: Tensor, reduce: str, **kwargs: Any
) -> Tensor:
    check_index_reduce(self, dim, index, source, reduce)
    return _like(self)


@impl(aten.put.default, Meta)
def put(self: Tensor, index: Tensor, source: Tensor, accumulate: bool = False) -> Tensor:
    check_put(self, index, source)
    return _like(self)
