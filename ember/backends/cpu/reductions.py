"""CPU kernels of the reduction ops: NumPy ufunc reductions (``np.add.reduce`` rather than
``np.sum``, whose Python wrapper costs more than a small reduction itself).

Shape and dtype rules (which dims, result dtype, the errors) live beside the schemas in
``ember/ops/native/reductions.py`` and are shared with the Meta rules. float16 inputs are
accumulated in float32 and the result cast back, as PyTorch does on CPU.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ember import dtypes
from ember._memory_format import result_strides
from ember.backends.cpu._util import ERRSTATE, IGNORE, Tensor, quiet_block, wrap
from ember.backends.cpu.copies import empty_strided
from ember.dispatch.keys import DispatchKey
from ember.dtypes import dtype
from ember.library import impl
from ember.ops.native.reductions import (
    all_any_dtype,
    check_aminmax,
    check_argext,
    check_logcumsumexp,
    check_nansum,
    check_nonempty,
    check_not_complex,
    check_scan_extreme,
    check_sortable,
    check_topk,
    mean_dtype,
    reduction_axes,
    softmax_backward_dtype,
    softmax_dtype,
    sum_dtype,
    trace_dtype,
    var_dtype,
    vector_norm_plan,
)
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
CPU = DispatchKey.CPU

_nd = np.ndarray
_asarray = np.asarray
_add_reduce = np.add.reduce
_mul_reduce = np.multiply.reduce
_max_reduce = np.maximum.reduce
_min_reduce = np.minimum.reduce
_FROM_NP = dtypes.FROM_NUMPY
_F16 = np.dtype(np.float16)
_F32 = np.dtype(np.float32)
_I64 = np.dtype(np.int64)
#: bfloat16's ndarray dtype once ml_dtypes has loaded (NOTE [bfloat16] in ember/dtypes.py)
_BF16: Any = None


def _acc(res: np.dtype[Any]) -> np.dtype[Any]:
    """The dtype to accumulate a ``res`` result in (float32 for the 16-bit floats)."""
    return _F32 if res is _F16 or res is _BF16 else res


def _out(r: Any, res: np.dtype[Any]) -> Tensor:
    """Wrap a NumPy result (a scalar for 0-d results), cast to ``res`` if it is not already,
    laid out contiguously (NOTE [result layouts])."""
    if type(r) is not _nd:
        r = _asarray(r)
    if r.dtype is res:
        return wrap(r if r.flags.c_contiguous else np.ascontiguousarray(r))
    if res is _F16 or res is _BF16:  # overflow to inf is silent in PyTorch
        with quiet_block():
            return wrap(r.astype(res, order="C"))
    return wrap(r.astype(res, order="C"))


# NOTE [result layouts]
# PyTorch allocates the results of reductions (sum, max(dim) and its indices, argmax, var,
# logsumexp, norms, all/any), scans (cumsum, cumprod) and softmax contiguous, whatever the
# input's strides; NumPy lays them out in the input's order, so a permuted input gave a
# permuted result, and a later .view() failed where PyTorch's works. Sort keeps the input's
# layout in PyTorch (values and indices ``empty_like`` it). The Meta rules say the same.


def _contiguous(a: np.ndarray) -> np.ndarray:
    return a if a.flags.c_contiguous else np.ascontiguousarray(a)


def _cast_input(x: np.ndarray, to: dtype | None) -> np.ndarray:
    """The input converted to ``dtype=`` (complex to real drops the imaginary part)."""
    if to is None or x.dtype is to.np:
        return x
    if x.dtype.kind == "c" and to.np.kind != "c":
        x = x.real
    with quiet_block():  # inf or NaN to an integer dtype: PyTorch's cast is silent
        return x.astype(to.np)


def _moveaxis_1d(x: np.ndarray) -> np.ndarray:
    """0-dim arrays as 1-element 1-dim ones (NumPy has no axis 0 on a 0-dim array)."""
    return x.reshape(1) if x.ndim == 0 else x


# --------------------------------------------------------------------------- sum, mean, prod

#: input ndarray dtype -> (accumulate dtype, result dtype) of sum/prod with no dtype=
_SUM_PLAN = {
    d.np: (_acc(sum_dtype(d, None).np), sum_dtype(d, None).np)
    for d in dtypes.ALL_DTYPES + dtypes.SHELL_DTYPES
}


def _bfloat16_loaded(d: np.dtype[Any]) -> None:
    """bfloat16's entries, when ml_dtypes loads (NOTE [bfloat16] in ember/dtypes.py)."""
    global _BF16
    _BF16 = d
    _SUM_PLAN[d] = (_F32, d)  # accumulated in float32, as PyTorch's


dtypes.on_bfloat16(_bfloat16_loaded)


def _sum_plan(x: np.ndarray, dtype: dtype | None) -> tuple[np.ndarray, Any, Any]:
    """A sum's input (cast to ``dtype`` if given), accumulate dtype and result dtype."""
    if dtype is None:
        acc, res = _SUM_PLAN[x.dtype]
        return x, acc, res
    res = dtype.np
    return _cast_input(x, dtype), _acc(res), res


@impl(aten.sum.default, CPU)
def sum_all(self: Tensor, *, dtype: dtype | None = None) -> Tensor:
    x, acc, res = _sum_plan(self._edata, dtype)
    token = ERRSTATE.set(IGNORE)  # inf + -inf: nan, silently (quiet(), inlined)
    try:
        r = _add_reduce(x, None, acc)
    finally:
        ERRSTATE.reset(token)
    return _out(r, res)


@impl(aten.sum.dim_IntList, CPU)
def sum_dim(self: Tensor, dim: Any, keepdim: bool = False, *, dtype: dtype | None = None) -> Tensor:
    x, acc, res = _sum_plan(self._edata, dtype)
    axes = reduction_axes(x.shape, dim, "sum")
    token = ERRSTATE.set(IGNORE)  # inf + -inf: nan, silently (quiet(), inlined)
    try:
        r = _add_reduce(x, axes, acc, None, keepdim)
    finally:
        ERRSTATE.reset(token)
    return _out(r, res)


def _mean(self: Tensor, dim: Any, keepdim: bool, dtype: dtype | None) -> Tensor:
    res = mean_dtype(self.dtype, dtype).np
    x = _cast_input(self._edata, dtype)
    axes = reduction_axes(x.shape, dim, "mean")
    n = math.prod(x.shape[a] for a in axes)
    with quiet_block():  # 0/0 for empty reductions, inf + -inf: nan, silently
        return _out(_add_reduce(x, axes, _acc(res), None, keepdim) / n, res)


@impl(aten.mean.default, CPU)
def mean_all(self: Tensor, *, dtype: dtype | None = None) -> Tensor:
    return _mean(self, None, False, dtype)


@impl(aten.mean.dim, CPU)
def mean_dim(
    self: Tensor, dim: Any, keepdim: bool = False, *, dtype: dtype | None = None
) -> Tensor:
    return _mean(self, dim, keepdim, dtype)


@impl(aten.prod.default, CPU)
def prod_all(self: Tensor, *, dtype: dtype | None = None) -> Tensor:
    x = _cast_input(self._edata, dtype)
    res = sum_dtype(self.dtype, dtype).np
    with quiet_block():  # inf * 0: nan, silently
        return _out(_mul_reduce(x, None, _acc(res)), res)


@impl(aten.prod.dim_int, CPU)
def prod_dim(
    self: Tensor, dim: int, keepdim: bool = False, *, dtype: dtype | None = None
) -> Tensor:
    x = _cast_input(self._edata, dtype)
    res = sum_dtype(self.dtype, dtype).np
    axes = reduction_axes(x.shape, dim, "prod")
    with quiet_block():  # inf * 0: nan, silently
        return _out(_mul_reduce(x, axes, _acc(res), None, keepdim), res)


# --------------------------------------------------------------------------- max, min, arg*


def _extreme_all(name: str, reduce: Any) -> Any:
    def kernel(self: Tensor) -> Tensor:
        x = self._edata
        check_not_complex(self.dtype, name, NotImplementedError)
        check_nonempty(x.shape, (), None, name)
        return _out(reduce(x, None), x.dtype)

    kernel.__name__ = name
    return kernel


def _extreme_dim(name: str, reduce: Any, arg: Any, result: Any) -> Any:
    def kernel(self: Tensor, dim: int, keepdim: bool = False) -> Any:
        x = self._edata
        axes = reduction_axes(x.shape, dim, name)
        check_nonempty(x.shape, axes, dim, name)
        check_not_complex(self.dtype, name)
        if not axes:  # a 0-dim input: itself, at index 0
            return result(wrap(x.copy()), wrap(np.zeros((), _I64)))
        a = axes[0]
        values = reduce(x, a, None, None, keepdim)
        indices = _asarray(arg(x, axis=a, keepdims=keepdim), _I64)  # (a scalar for 1-D x)
        return result(_out(values, x.dtype), wrap(_contiguous(indices)))

    kernel.__name__ = name
    return kernel


impl(aten.max.default, CPU, _extreme_all("max", _max_reduce))
impl(aten.min.default, CPU, _extreme_all("min", _min_reduce))
impl(aten.max.dim, CPU, _extreme_dim("max", _max_reduce, np.argmax, max_t))
impl(aten.min.dim, CPU, _extreme_dim("min", _min_reduce, np.argmin, min_t))


def _amax(name: str, reduce: Any) -> Any:
    def kernel(self: Tensor, dim: Any = (), keepdim: bool = False) -> Tensor:
        x = self._edata
        if x.size:  # PyTorch runs no kernel, so checks no dtype, for an empty input
            check_not_complex(self.dtype, name, NotImplementedError)
        axes = reduction_axes(x.shape, dim, name)
        check_nonempty(x.shape, axes, dim, name)
        return _out(reduce(x, axes, None, None, keepdim), x.dtype)

    kernel.__name__ = name
    return kernel


impl(aten.amax.default, CPU, _amax("amax", _max_reduce))
impl(aten.amin.default, CPU, _amax("amin", _min_reduce))


def _argext(name: str, arg: Any) -> Any:
    def kernel(self: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
        x = self._edata
        axes = check_argext(x.shape, self.dtype, dim, name)
        if dim is None:
            r = _asarray(arg(x), _I64)
            return wrap(r.reshape((1,) * x.ndim) if keepdim else r)
        if not axes:
            return wrap(np.zeros((), _I64))
        r = _asarray(arg(x, axis=axes[0], keepdims=keepdim), _I64)  # (1-D x: a scalar)
        return wrap(_contiguous(r))

    kernel.__name__ = name
    return kernel


impl(aten.argmax.default, CPU, _argext("argmax", np.argmax))
impl(aten.argmin.default, CPU, _argext("argmin", np.argmin))


# --------------------------------------------------------------------------- var, std


def _var(self: Tensor, dim: Any, correction: Any, keepdim: bool, name: str) -> tuple[Any, Any]:
    """(variance, mean) as ndarrays in the result dtype's precision."""
    var_dtype(self.dtype, name)  # raises for bool and integer inputs
    x = self._edata
    axes = reduction_axes(x.shape, dim, name)
    if x.dtype is _F16 or x.dtype is _BF16:
        x = x.astype(_F32)
    n = math.prod(x.shape[a] for a in axes)
    c = 1 if correction is None else correction
    with quiet_block():
        mean = _add_reduce(x, axes, None, None, True) / n
        d = x - mean
        sq = d.real * d.real + d.imag * d.imag if d.dtype.kind == "c" else d * d
        var = _add_reduce(sq, axes, None, None, keepdim) / max(n - c, 0)
    if not keepdim:
        mean = mean.reshape(var.shape)
    return var, mean


@impl(aten.var.correction, CPU)
def var(self: Tensor, dim: Any = None, *, correction: Any = None, keepdim: bool = False) -> Tensor:
    v, _ = _var(self, dim, correction, keepdim, "var")
    return _out(v, self.dtype.to_real().np)


@impl(aten.std.correction, CPU)
def std(self: Tensor, dim: Any = None, *, correction: Any = None, keepdim: bool = False) -> Tensor:
    v, _ = _var(self, dim, correction, keepdim, "std")
    return _out(np.sqrt(v), self.dtype.to_real().np)


@impl(aten.var_mean.correction, CPU)
def var_mean(
    self: Tensor, dim: Any = None, *, correction: Any = None, keepdim: bool = False
) -> tuple[Tensor, Tensor]:
    v, m = _var(self, dim, correction, keepdim, "var_mean")
    return _out(v, self.dtype.to_real().np), _out(m, self.dtype.np)


@impl(aten.std_mean.correction, CPU)
def std_mean(
    self: Tensor, dim: Any = None, *, correction: Any = None, keepdim: bool = False
) -> tuple[Tensor, Tensor]:
    v, m = _var(self, dim, correction, keepdim, "std_mean")
    return _out(np.sqrt(v), self.dtype.to_real().np), _out(m, self.dtype.np)


# --------------------------------------------------------------------------- logsumexp, softmax


@impl(aten.logsumexp.default, CPU)
def logsumexp(self: Tensor, dim: Any, keepdim: bool = False) -> Tensor:
    d = self.dtype
    res = (d if d.category >= dtypes.FLOATING else dtypes.get_default_dtype()).np
    x = self._edata.astype(_acc(res), copy=False)
    axes = reduction_axes(x.shape, dim, "logsumexp")
    with quiet_block():
        if x.size == 0:
            return _out(np.log(_add_reduce(np.exp(x), axes, None, None, keepdim)), res)
        m = _max_reduce(x, axes, None, None, True)
        m = np.where(np.isfinite(m), m, 0)
        r = np.log(_add_reduce(np.exp(x - m), axes, None, None, True)) + m
    return _out(
        r if keepdim else r.reshape([n for i, n in enumerate(x.shape) if i not in axes]), res
    )


_SOFTMAX_FAST = frozenset({_F32, np.dtype(np.float64)})  # dtypes computed in place, unwidened
_exp, _log, _subtract, _multiply = np.exp, np.log, np.subtract, np.multiply


def _softmax_kernel(name: str, log: bool) -> Any:
    def kernel(self: Tensor, dim: int, half_to_float: bool) -> Tensor:
        x = self._edata
        if (
            type(x) is _nd and x.dtype in _SOFTMAX_FAST and not half_to_float
            and x.size and type(dim) is int and -x.ndim <= dim < x.ndim
        ):  # fmt: skip
            if not x.flags.c_contiguous:  # NOTE [result layouts]: ufuncs follow x's order
                x = np.ascontiguousarray(x)
            token = ERRSTATE.set(IGNORE)  # inf - inf: nan, silently (quiet(), inlined)
            try:  # the common case: four ufunc calls, the buffers reused
                z = _subtract(x, _max_reduce(x, dim, None, None, True))
                e = _exp(z)
                s = _add_reduce(e, dim, None, None, True)
                if log:
                    return wrap(_subtract(z, _log(s, out=s), out=z))
                return wrap(np.divide(e, s, out=e))
            finally:
                ERRSTATE.reset(token)
        res = softmax_dtype(self.dtype, half_to_float, name, x.size).np
        axis = wrap_dim(dim, x.ndim, name)
        if x.size == 0:
            return wrap(np.empty(x.shape, res))
        shape = x.shape
        x = _moveaxis_1d(x).astype(_acc(res), copy=False)
        with quiet_block():
            z = x - _max_reduce(x, axis, None, None, True)
            if log:
                r = z - np.log(_add_reduce(np.exp(z), axis, None, None, True))
            else:
                e = np.exp(z)
                r = e / _add_reduce(e, axis, None, None, True)
        return _out(r.reshape(shape), res)

    kernel.__name__ = name
    return kernel


impl(aten._softmax.default, CPU, _softmax_kernel("softmax", log=False))
impl(aten._log_softmax.default, CPU, _softmax_kernel("log_softmax", log=True))


def _softmax_backward_kernel(name: str, log: bool) -> Any:
    """``g - exp(out) * sum(g)`` (log_softmax) or ``out * (g - sum(g * out))`` (softmax)
    along ``dim``, in one kernel, computed in float32 for half tensors."""

    def kernel(grad_output: Tensor, output: Tensor, dim: int, input_dtype: dtype) -> Tensor:
        g, out = grad_output._edata, output._edata
        if (
            type(g) is _nd and type(out) is _nd and g.dtype in _SOFTMAX_FAST
            and out.dtype is g.dtype and g.shape == out.shape and g.size
            and input_dtype.np is g.dtype and type(dim) is int and -g.ndim <= dim < g.ndim
        ):  # fmt: skip
            if not g.flags.c_contiguous:  # NOTE [result layouts]
                g = np.ascontiguousarray(g)
            token = ERRSTATE.set(IGNORE)
            try:  # the common case, in three or four ufunc calls
                if log:
                    r = _exp(out)
                    _multiply(r, _add_reduce(g, dim, None, None, True), out=r)
                    return wrap(_subtract(g, r, out=r))
                r = _multiply(g, out)
                r = _subtract(g, _add_reduce(r, dim, None, None, True), out=r)
                return wrap(_multiply(out, r, out=r))
            finally:
                ERRSTATE.reset(token)
        res = softmax_backward_dtype(
            grad_output.dtype, output.dtype, (g.shape, out.shape), input_dtype, name
        ).np
        axis = wrap_dim(dim, g.ndim, name)
        if g.size == 0:
            return wrap(np.empty(g.shape, res))
        g, out = _moveaxis_1d(g).astype(_acc(res), copy=False), _moveaxis_1d(out)
        out = out.astype(g.dtype, copy=False)
        with quiet_block():
            if log:
                r = g - np.exp(out) * _add_reduce(g, axis, None, None, True)
            else:
                r = out * (g - _add_reduce(g * out, axis, None, None, True))
        return _out(r.reshape(grad_output._edata.shape), res)

    kernel.__name__ = name
    return kernel


impl(aten._softmax_backward_data.default, CPU,
     _softmax_backward_kernel("_softmax_backward_data", log=False))  # fmt: skip
impl(aten._log_softmax_backward_data.default, CPU,
     _softmax_backward_kernel("_log_softmax_backward_data", log=True))  # fmt: skip


# --------------------------------------------------------------------------- all, any


def _logical(name: str, fn: Any) -> tuple[Any, Any, Any]:
    def whole(self: Tensor) -> Tensor:
        return _out(fn(self._edata), all_any_dtype(self.dtype).np)

    def one(self: Tensor, dim: int, keepdim: bool = False) -> Tensor:
        x = self._edata
        axes = reduction_axes(x.shape, dim, name)
        return _out(fn(x, axis=axes, keepdims=keepdim), all_any_dtype(self.dtype).np)

    def many(self: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:
        x = self._edata
        axes = reduction_axes(x.shape, dim, name, empty_means_all=False)
        return _out(fn(x, axis=axes, keepdims=keepdim), all_any_dtype(self.dtype).np)

    return whole, one, many


for _name, _fn in (("all", np.all), ("any", np.any)):
    _packet = getattr(aten, _name)
    for _ov, _k in zip(("default", "dim", "dims"), _logical(_name, _fn), strict=True):
        impl(getattr(_packet, _ov), CPU, _k)


# --------------------------------------------------------------------------- norms


@impl(aten.linalg_vector_norm.default, CPU)
def vector_norm(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    p, axes, keepdim, dtype, result = vector_norm_plan(self, *args, **kwargs)
    res = result.np
    x = self._edata
    if dtype is not None:
        x = _cast_input(x, dtype if x.dtype.kind != "c" else dtype.to_complex())
    a = np.abs(x).astype(_acc(res), copy=False)
    with quiet_block():
        if p == 2:
            r = np.sqrt(_add_reduce(a * a, axes, None, None, keepdim))
        elif p == 1:
            r = _add_reduce(a, axes, None, None, keepdim)
        elif p == float("inf"):
            r = _max_reduce(a, axes, None, None, keepdim)
        elif p == float("-inf"):
            r = _min_reduce(a, axes, None, None, keepdim)
        elif p == 0:
            r = _add_reduce(a != 0, axes, a.dtype, None, keepdim)
        else:
            r = _add_reduce(a**p, axes, None, None, keepdim) ** (1.0 / p)
    return _out(r, res)


# --------------------------------------------------------------------------- scans


def _scan(name: str, fn: Any) -> Any:
    def kernel(self: Tensor, dim: int, *, dtype: dtype | None = None) -> Tensor:
        x = _cast_input(self._edata, dtype)
        res = sum_dtype(self.dtype, dtype).np
        axis = wrap_dim(dim, x.ndim, name)
        with quiet_block():  # inf - inf, inf * 0: nan, silently
            return _out(fn(_moveaxis_1d(x), axis, _acc(res)).reshape(x.shape), res)

    kernel.__name__ = name
    return kernel


impl(aten.cumsum.default, CPU, _scan("cumsum", np.cumsum))
impl(aten.cumprod.default, CPU, _scan("cumprod", np.cumprod))


# --------------------------------------------------------------------------- sorting


def stable_argsort(x: np.ndarray, axis: int, descending: bool) -> np.ndarray:
    """Indices sorting ``x`` along ``axis``, equal elements in input order, NaN largest."""
    if not descending:
        return np.argsort(x, axis=axis, kind="stable")
    # sort the reversed array ascending, then reverse back: ties keep input order
    idx = np.flip(np.argsort(np.flip(x, axis), axis=axis, kind="stable"), axis)
    return (x.shape[axis] - 1) - idx


def _sort(self: Tensor, dim: int, descending: bool, name: str) -> Any:
    check_sortable(self.dtype, name)
    x = self._edata
    axis = wrap_dim(dim, x.ndim, name)
    if x.ndim == 0:
        return sort_t(wrap(x.copy()), wrap(np.zeros((), _I64)))
    idx = stable_argsort(x, axis, descending)
    strides = result_strides(x.shape, self.stride(), "preserve_format", name)
    values, indices = (
        empty_strided(x.shape, strides, x.dtype),
        empty_strided(x.shape, strides, _I64),
    )
    values[...] = np.take_along_axis(x, idx, axis)  # laid out as the input (NOTE [result
    indices[...] = idx  # layouts])
    return sort_t(wrap(values), wrap(indices))


@impl(aten.sort.default, CPU)
def sort(self: Tensor, dim: int = -1, descending: bool = False) -> Any:
    return _sort(self, dim, descending, "sort")


@impl(aten.sort.stable, CPU)
def sort_stable(
    self: Tensor, *, stable: bool | None, dim: int = -1, descending: bool = False
) -> Any:
    return _sort(self, dim, descending, "sort")


@impl(aten.topk.default, CPU)
def topk(self: Tensor, k: int, dim: int = -1, largest: bool = True, sorted: bool = True) -> Any:
    x = self._edata
    axis = wrap_dim(dim, x.ndim, "topk")
    check_topk(x.shape, self.dtype, k, axis)
    if x.ndim == 0:
        return topk_t(wrap(x.copy()), wrap(np.zeros((), _I64)))
    idx = np.take(stable_argsort(x, axis, largest), np.arange(k), axis)
    return topk_t(wrap(np.take_along_axis(x, idx, axis)), wrap(idx.astype(_I64, copy=False)))


# --------------------------------------------------------------------------- trace


@impl(aten.trace.default, CPU)
def trace(self: Tensor) -> Tensor:
    res = trace_dtype(self._edata.shape, self.dtype).np
    return _out(np.trace(self._edata, dtype=_acc(res)), res)


# --------------------------------------------------------------------------- nansum, counts


@impl(aten.nansum.default, CPU)
def nansum(
    self: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: dtype | None = None
) -> Tensor:
    """``sum`` with every NaN counted as 0."""
    check_nansum(self)
    x = self._edata
    if x.dtype.kind == "f" or x.dtype is _BF16:
        x = np.where(np.isnan(x), np.zeros((), x.dtype), x)
    return sum_dim(wrap(x), dim, keepdim, dtype=dtype)


@impl(aten.count_nonzero.dim_IntList, CPU)
def count_nonzero(self: Tensor, dim: Any) -> Tensor:
    x = self._edata
    axes = reduction_axes(x.shape, dim, "count_nonzero")
    return _out(np.count_nonzero(x, axis=axes) if axes else (x != 0).astype(_I64), _I64)


@impl(aten.count_nonzero.default, CPU)
def count_nonzero_one(self: Tensor, dim: int | None = None) -> Tensor:
    return count_nonzero(self, [] if dim is None else [dim])


@impl(aten.aminmax.default, CPU)
def aminmax(self: Tensor, *, dim: int | None = None, keepdim: bool = False) -> Any:
    axes = check_aminmax(self, dim)
    x = self._edata
    if dim is None and keepdim:  # every dim kept, with size 1
        lo, hi = _min_reduce(x, axes, None, None, True), _max_reduce(x, axes, None, None, True)
    elif dim is None:
        lo, hi = _min_reduce(x, None), _max_reduce(x, None)
    else:
        lo, hi = (
            _min_reduce(x, axes, None, None, keepdim),
            _max_reduce(x, axes, None, None, keepdim),
        )
    return aminmax_t(_out(lo, x.dtype), _out(hi, x.dtype))


# --------------------------------------------------------------------------- running extremes


def _cum_extreme(name: str, accumulate: Any, result: Any) -> Any:
    """``cummax``/``cummin``: at each position the extreme so far and the last index where it
    was reached (a tie or a NaN moves the index; a NaN stays the extreme)."""

    def kernel(self: Tensor, dim: int) -> Any:
        d = check_scan_extreme(self, dim, name)
        x = _moveaxis_1d(self._edata)
        if x.size == 0:
            return result(_out(x.copy(), x.dtype), wrap(np.zeros(self._edata.shape, _I64)))
        running = accumulate(x, axis=d)
        hit = x == running
        if x.dtype.kind in "fc" or x.dtype is _F16 or x.dtype is _BF16:
            hit |= np.isnan(x.astype(_F32) if x.dtype is _BF16 else x)
        shape = [1] * x.ndim
        shape[d] = x.shape[d]
        positions = np.arange(x.shape[d], dtype=_I64).reshape(shape)
        indices = np.maximum.accumulate(np.where(hit, positions, 0), axis=d)
        values = np.take_along_axis(x, indices, axis=d)  # the elements themselves (-0.0)
        shape0 = self._edata.shape
        return result(_out(values.reshape(shape0), x.dtype), _out(indices.reshape(shape0), _I64))

    kernel.__name__ = name
    return kernel


impl(aten.cummax.default, CPU, _cum_extreme("cummax", np.maximum.accumulate, cummax_t))
impl(aten.cummin.default, CPU, _cum_extreme("cummin", np.minimum.accumulate, cummin_t))


def _complex_logcumsumexp(x: np.ndarray, d: int) -> np.ndarray:
    """Complex ``logaddexp`` accumulated element by element along ``d``, as PyTorch's: the
    operand with the larger real part plus ``log1p(exp(other - it))``, so the imaginary part
    accumulates unwrapped (it is not brought back into (-pi, pi])."""
    out = np.moveaxis(x.copy(), d, 0)
    for i in range(1, out.shape[0]):
        a, b = out[i - 1], out[i]
        first = a.real >= b.real
        big, small = np.where(first, a, b), np.where(first, b, a)
        out[i] = big + np.log1p(np.exp(small - big))
    return np.moveaxis(out, 0, d)


@impl(aten.logcumsumexp.default, CPU)
def logcumsumexp(self: Tensor, dim: int) -> Tensor:
    """``log(cumsum(exp(x)))`` without overflow: ``logaddexp`` accumulated."""
    d = check_logcumsumexp(self, dim)
    x = _moveaxis_1d(self._edata)
    res = x.dtype
    with quiet_block():
        if x.dtype.kind == "c":
            r = _complex_logcumsumexp(x, d)
        else:
            r = np.logaddexp.accumulate(x.astype(_acc(res)), axis=d)
    return _out(r.reshape(self._edata.shape), res)
