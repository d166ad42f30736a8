"""Meta rules of the ops built on sorted order: shapes and dtypes from the rules the CPU
kernels share (``ember/ops/native/sorting.py``). ``unique`` and ``bincount`` results have
value-dependent lengths: their rules raise (NOTE [data-dependent shapes])."""

from __future__ import annotations

from typing import Any

from ember import dtypes
from ember._shape_only import ShapeOnlyArray
from ember._tensor import Tensor, wrap_shape_only
from ember.dispatch.keys import DispatchKey
from ember.library import impl
from ember.ops.native.sorting import (
    along,
    check_bincount,
    check_boundaries,
    check_histc,
    check_kthvalue,
    check_mode,
    check_order_statistic,
    check_unique,
    search_plan,
    unique_dim_of,
)
from ember.ops.registry import ops
from ember.return_types import kthvalue as kthvalue_t
from ember.return_types import median as median_t
from ember.return_types import mode as mode_t
from ember.return_types import nanmedian as nanmedian_t

aten = ops.aten
Meta = DispatchKey.Meta


def _new(shape: tuple[int, ...], d: dtypes.dtype) -> Tensor:
    return wrap_shape_only(ShapeOnlyArray(tuple(shape), d.np))


def _whole(name: str) -> Any:
    def rule(self: Tensor) -> Tensor:
        check_order_statistic(self.dtype, name)
        return _new((), self.dtype)

    return rule


def _selection(name: str, result: Any, check: Any) -> Any:
    def rule(self: Tensor, dim: int, keepdim: bool = False) -> Any:
        _, shape = along(tuple(self.shape), dim, keepdim, name)
        if name != "mode" or (self.ndim and self.numel()):  # (mode: itself, or empty)
            check(self.dtype)
        return result(_new(shape, self.dtype), _new(shape, dtypes.int64))

    return rule


impl(aten.median.default, Meta, _whole("median"))
impl(aten.nanmedian.default, Meta, _whole("nanmedian"))
for _name, _result in (("median", median_t), ("nanmedian", nanmedian_t)):
    _check = lambda d, name=_name: check_order_statistic(d, name)  # noqa: E731
    impl(getattr(aten, _name).dim, Meta, _selection(_name, _result, _check))
_mode = _selection("mode", mode_t, check_mode)


@impl(aten.mode.default, Meta)
def mode(self: Tensor, dim: int = -1, keepdim: bool = False) -> Any:
    return _mode(self, dim, keepdim)


@impl(aten.kthvalue.default, Meta)
def kthvalue(self: Tensor, k: int, dim: int = -1, keepdim: bool = False) -> Any:
    d, shape = along(tuple(self.shape), dim, keepdim, "kthvalue")
    check_kthvalue(tuple(self.shape), k, d)
    if self.ndim:
        check_order_statistic(self.dtype, "kthvalue")
    return kthvalue_t(_new(shape, self.dtype), _new(shape, dtypes.int64))


def _dynamic(op: str, self: Tensor) -> NotImplementedError:
    return NotImplementedError(
        f"{op}: the result's length depends on the values of the input (shape "
        f"{list(self.shape)}), which a meta tensor does not have (NOTE [data-dependent "
        f"shapes]); run {op} on the cpu device"
    )


@impl(aten._unique2.default, Meta)
def unique2(self: Tensor, *args: Any, **kwargs: Any) -> Any:
    check_unique(self.dtype)
    raise _dynamic("unique", self)


@impl(aten.unique_dim.default, Meta)
def unique_dim(self: Tensor, dim: int, *args: Any, **kwargs: Any) -> Any:
    check_unique(self.dtype, "unique_dim")
    unique_dim_of(tuple(self.shape), dim)
    raise _dynamic("unique_dim", self)


@impl(aten.unique_consecutive.default, Meta)
def unique_consecutive(
    self: Tensor, return_inverse: bool = False, return_counts: bool = False, dim: int | None = None
) -> Any:
    check_unique(self.dtype, "unique_consecutive")
    if dim is not None and not (self.ndim == 1 and dim == 0):
        unique_dim_of(tuple(self.shape), dim, "unique_consecutive")
    raise _dynamic("unique_consecutive", self)


def _search(seq: Tensor, value: Any, out_int32: bool, right: bool, side: Any, sorter: Any) -> Any:
    scalar = not isinstance(value, Tensor)
    _, rdt = search_plan(
        tuple(seq.shape),
        seq.dtype,
        None if scalar else tuple(value.shape),
        None if scalar else value.dtype,
        out_int32,
        right,
        side,
        sorter,
    )
    return _new(() if scalar else tuple(value.shape), rdt)


def _searchsorted(sorted_sequence: Tensor, self: Any, **kwargs: Any) -> Tensor:
    kw = {"out_int32": False, "right": False, "side": None, "sorter": None, **kwargs}
    return _search(sorted_sequence, self, **kw)


def _bucketize(self: Any, boundaries: Tensor, **kwargs: Any) -> Tensor:
    check_boundaries(boundaries)
    out_int32, right = kwargs.get("out_int32", False), kwargs.get("right", False)
    return _search(boundaries, self, out_int32, right, None, None)


# one rule for the Tensor and the Scalar overload of each
for _packet, _rule in ((aten.searchsorted, _searchsorted), (aten.bucketize, _bucketize)):
    impl(_packet.Tensor, Meta, _rule)
    impl(_packet.Scalar, Meta, _rule)


@impl(aten.bincount.default, Meta)
def bincount(self: Tensor, weights: Tensor | None = None, minlength: int = 0) -> Tensor:
    check_bincount(self, weights, minlength)
    raise _dynamic("bincount", self)


@impl(aten.histc.default, Meta)
def histc(self: Tensor, bins: int = 100, min: Any = 0, max: Any = 0) -> Tensor:
    check_histc(self.dtype, bins, min, max)
    return _new((bins,), self.dtype)
