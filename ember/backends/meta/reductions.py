"""Meta rules of the reduction ops: the result shape and dtype, from the same rules the CPU
kernels use (``ember/ops/native/reductions.py``), so both raise the same errors."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ember import dtypes
from ember._memory_format import result_strides
from ember._shape_only import ShapeOnlyArray
from ember._tensor import Tensor, wrap_shape_only
from ember.dispatch.keys import DispatchKey
from ember.dtypes import dtype
from ember.library import impl
from ember.ops.native import reductions as checks
from ember.ops.registry import ops
from ember.ops.shapes import wrap_dim
from ember.return_types import aminmax as aminmax_t
from ember.return_types import cummax as cummax_t
from ember.return_types import cummin as cummin_t
from ember.return_types import max as max_t
from ember.return_types import min as min_t
from ember.return_types import sort as sort_t
from ember.return_types import topk as topk_t

aten = ops.aten
Meta = DispatchKey.Meta


def _new(shape: Sequence[int], d: dtype) -> Tensor:
    return wrap_shape_only(ShapeOnlyArray(tuple(shape), d.np))


def _reduce(self: Tensor, dim: Any, keepdim: bool, d: dtype, op: str, **kw: Any) -> Tensor:
    shape = tuple(self.shape)
    return _new(
        checks.reduced_shape(shape, checks.reduction_axes(shape, dim, op, **kw), keepdim), d
    )


def _with_dtype(name: str, result_dtype: Any) -> Any:
    """The rules of ``sum``, ``mean`` and ``prod``: whole tensor, and along ``dim``."""

    def whole(self: Tensor, *, dtype: dtype | None = None) -> Tensor:
        return _new((), result_dtype(self.dtype, dtype))

    def along(
        self: Tensor, dim: Any, keepdim: bool = False, *, dtype: dtype | None = None
    ) -> Tensor:
        return _reduce(self, dim, keepdim, result_dtype(self.dtype, dtype), name)

    whole.__name__, along.__name__ = f"{name}_all", f"{name}_dim"
    return whole, along


for _name, _dim_overload, _dtype_fn in (
    ("sum", "dim_IntList", checks.sum_dtype),
    ("mean", "dim", checks.mean_dtype),
    ("prod", "dim_int", checks.sum_dtype),
):
    _packet = getattr(aten, _name)
    _whole, _along = _with_dtype(_name, _dtype_fn)
    impl(_packet.default, Meta, _whole)
    impl(getattr(_packet, _dim_overload), Meta, _along)


def _extreme_all(name: str) -> Any:
    def rule(self: Tensor) -> Tensor:
        checks.check_not_complex(self.dtype, name, NotImplementedError)
        checks.check_nonempty(tuple(self.shape), (), None, name)
        return _new((), self.dtype)

    return rule


def _extreme_dim(name: str, result: Any) -> Any:
    def rule(self: Tensor, dim: int, keepdim: bool = False) -> Any:
        shape = tuple(self.shape)
        axes = checks.reduction_axes(shape, dim, name)
        checks.check_nonempty(shape, axes, dim, name)
        checks.check_not_complex(self.dtype, name)
        out = checks.reduced_shape(shape, axes, keepdim)
        return result(_new(out, self.dtype), _new(out, dtypes.int64))

    return rule


def _amax(name: str) -> Any:
    def rule(self: Tensor, dim: Any = (), keepdim: bool = False) -> Tensor:
        shape = tuple(self.shape)
        if 0 not in shape:
            checks.check_not_complex(self.dtype, name, NotImplementedError)
        axes = checks.reduction_axes(shape, dim, name)
        checks.check_nonempty(shape, axes, dim, name)
        return _new(checks.reduced_shape(shape, axes, keepdim), self.dtype)

    return rule


def _argext(name: str) -> Any:
    def rule(self: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
        shape = tuple(self.shape)
        axes = checks.check_argext(shape, self.dtype, dim, name)
        return _new(checks.reduced_shape(shape, axes, keepdim), dtypes.int64)

    return rule


for _name, _t in (("max", max_t), ("min", min_t)):
    impl(getattr(aten, _name).default, Meta, _extreme_all(_name))
    impl(getattr(aten, _name).dim, Meta, _extreme_dim(_name, _t))
    impl(getattr(aten, "a" + _name).default, Meta, _amax("a" + _name))
    impl(getattr(aten, "arg" + _name).default, Meta, _argext("arg" + _name))


def _var(name: str, with_mean: bool) -> Any:
    def rule(
        self: Tensor, dim: Any = None, *, correction: Any = None, keepdim: bool = False
    ) -> Any:
        v = _reduce(self, dim, keepdim, checks.var_dtype(self.dtype, name), name)
        return (v, _new(tuple(v.shape), self.dtype)) if with_mean else v

    return rule


impl(aten.var.correction, Meta, _var("var", False))
impl(aten.std.correction, Meta, _var("std", False))
impl(aten.var_mean.correction, Meta, _var("var_mean", True))
impl(aten.std_mean.correction, Meta, _var("std_mean", True))


@impl(aten.logsumexp.default, Meta)
def logsumexp(self: Tensor, dim: Any, keepdim: bool = False) -> Tensor:
    d = self.dtype if self.dtype.category >= dtypes.FLOATING else dtypes.get_default_dtype()
    return _reduce(self, dim, keepdim, d, "logsumexp")


def _softmax(name: str) -> Any:
    def rule(self: Tensor, dim: int, half_to_float: bool) -> Tensor:
        d = checks.softmax_dtype(self.dtype, half_to_float, name, self.numel())
        wrap_dim(dim, self.ndim, name)
        return _new(tuple(self.shape), d)

    return rule


impl(aten._softmax.default, Meta, _softmax("softmax"))
impl(aten._log_softmax.default, Meta, _softmax("log_softmax"))


def _softmax_backward(name: str) -> Any:
    def rule(grad_output: Tensor, output: Tensor, dim: int, input_dtype: dtype) -> Tensor:
        shapes = (tuple(grad_output.shape), tuple(output.shape))
        d = checks.softmax_backward_dtype(
            grad_output.dtype, output.dtype, shapes, input_dtype, name
        )
        wrap_dim(dim, grad_output.ndim, name)
        return _new(shapes[0], d)

    return rule


impl(aten._softmax_backward_data.default, Meta, _softmax_backward("_softmax_backward_data"))
impl(aten._log_softmax_backward_data.default, Meta,
     _softmax_backward("_log_softmax_backward_data"))  # fmt: skip


def _logical(name: str) -> tuple[Any, Any, Any]:
    def whole(self: Tensor) -> Tensor:
        return _new((), checks.all_any_dtype(self.dtype))

    def one(self: Tensor, dim: int, keepdim: bool = False) -> Tensor:
        return _reduce(self, dim, keepdim, checks.all_any_dtype(self.dtype), name)

    def many(self: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:
        d = checks.all_any_dtype(self.dtype)
        return _reduce(self, dim, keepdim, d, name, empty_means_all=False)

    return whole, one, many


for _name in ("all", "any"):
    for _ov, _rule in zip(("default", "dim", "dims"), _logical(_name), strict=True):
        impl(getattr(getattr(aten, _name), _ov), Meta, _rule)


@impl(aten.linalg_vector_norm.default, Meta)
def vector_norm(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    plan = checks.vector_norm_plan(self, *args, **kwargs)
    return _new(checks.reduced_shape(tuple(self.shape), plan.axes, plan.keepdim), plan.result)


def _scan(name: str) -> Any:
    def rule(self: Tensor, dim: int, *, dtype: dtype | None = None) -> Tensor:
        wrap_dim(dim, self.ndim, name)
        return _new(tuple(self.shape), checks.sum_dtype(self.dtype, dtype))

    return rule


impl(aten.cumsum.default, Meta, _scan("cumsum"))
impl(aten.cumprod.default, Meta, _scan("cumprod"))


def _sort_rule(self: Tensor, dim: int) -> Any:
    checks.check_sortable(self.dtype, "sort")
    wrap_dim(dim, self.ndim, "sort")
    shape = tuple(self.shape)
    # laid out as the input, as PyTorch's (NOTE [result layouts] in the cpu kernels)
    strides = result_strides(shape, self.stride(), "preserve_format", "sort")
    return sort_t(
        wrap_shape_only(ShapeOnlyArray(shape, self.dtype.np, strides)),
        wrap_shape_only(ShapeOnlyArray(shape, dtypes.int64.np, strides)),
    )


@impl(aten.sort.default, Meta)
def sort(self: Tensor, dim: int = -1, descending: bool = False) -> Any:
    return _sort_rule(self, dim)


@impl(aten.sort.stable, Meta)
def sort_stable(
    self: Tensor, *, stable: bool | None, dim: int = -1, descending: bool = False
) -> Any:
    return _sort_rule(self, dim)


@impl(aten.topk.default, Meta)
def topk(self: Tensor, k: int, dim: int = -1, largest: bool = True, sorted: bool = True) -> Any:
    shape = tuple(self.shape)
    axis = wrap_dim(dim, len(shape), "topk")
    checks.check_topk(shape, self.dtype, k, axis)
    out = tuple(k if i == axis else n for i, n in enumerate(shape))
    return topk_t(_new(out, self.dtype), _new(out, dtypes.int64))


@impl(aten.trace.default, Meta)
def trace(self: Tensor) -> Tensor:
    return _new((), checks.trace_dtype(tuple(self.shape), self.dtype))


@impl(aten.nansum.default, Meta)
def nansum(
    self: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: dtype | None = None
) -> Tensor:
    checks.check_nansum(self)
    return _reduce(self, dim, keepdim, checks.sum_dtype(self.dtype, dtype), "sum")


@impl(aten.count_nonzero.dim_IntList, Meta)
def count_nonzero(self: Tensor, dim: Any) -> Tensor:
    shape = tuple(self.shape)
    axes = checks.reduction_axes(shape, dim, "count_nonzero")
    return _new(checks.reduced_shape(shape, axes, False) if axes else shape, dtypes.int64)


@impl(aten.count_nonzero.default, Meta)
def count_nonzero_one(self: Tensor, dim: int | None = None) -> Tensor:
    return count_nonzero(self, [] if dim is None else [dim])


@impl(aten.aminmax.default, Meta)
def aminmax(self: Tensor, *, dim: int | None = None, keepdim: bool = False) -> Any:
    axes = checks.check_aminmax(self, dim)
    out = checks.reduced_shape(tuple(self.shape), axes, keepdim)
    return aminmax_t(_new(out, self.dtype), _new(out, self.dtype))


def _cum_extreme(name: str, result: Any) -> Any:
    def rule(self: Tensor, dim: int) -> Any:
        checks.check_scan_extreme(self, dim, name)
        shape = tuple(self.shape)
        return result(_new(shape, self.dtype), _new(shape, dtypes.int64))

    return rule


impl(aten.cummax.default, Meta, _cum_extreme("cummax", cummax_t))
impl(aten.cummin.default, Meta, _cum_extreme("cummin", cummin_t))


@impl(aten.logcumsumexp.default, Meta)
def logcumsumexp(self: Tensor, dim: int) -> Tensor:
    checks.check_logcumsumexp(self, dim)
    return _new(tuple(self.shape), self.dtype)
