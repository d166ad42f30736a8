"""The reduction ops: schemas (catalogue), and the shape and dtype rules that the CPU kernels
and the Meta rules share, so the two cannot disagree.

# NOTE [reduction dims]
A reduction's ``dim`` may be one int, a list of ints, ``None`` or ``[]``. ``None`` and ``[]``
reduce every dimension (except for ``all.dims``/``any.dims``, where ``[]`` reduces none).
Negative dims count from the end; a 0-dim tensor accepts dims 0 and -1 (and reduces
nothing); a dim named twice is a RuntimeError, as in PyTorch.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from ember import dtypes
from ember.dispatch.keys import DispatchKey
from ember.dtypes import BOOL, COMPLEX, FLOATING, INTEGRAL, dtype
from ember.ops.native._define import FUNCTIONAL_OF, VARIANTS_OF, define
from ember.ops.registry import OpOverload, define_op, impl, ops
from ember.ops.shapes import wrap_dim

if TYPE_CHECKING:
    from ember._tensor import Tensor


def define_with_out(schema: str, out_schema: str, **kwargs: Any) -> OpOverload:
    """Declare ``schema`` and an ``out=`` overload whose schema PyTorch names irregularly
    (``max.dim_max(..., *, Tensor(a!) max, Tensor(b!) max_values)``)."""
    op = define(schema, **kwargs)
    out = define_op(out_schema, "aten", op.tags, ())
    VARIANTS_OF[op] = (VARIANTS_OF.get(op, (None, None))[0], out)
    FUNCTIONAL_OF[out] = op
    return op


# fmt: off
# sum, mean, prod
define("sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, "
       "ScalarType? dtype=None) -> Tensor", out=True, out_overload="IntList_out")
define("sum(Tensor self, *, ScalarType? dtype=None) -> Tensor", out=True)
define("mean(Tensor self, *, ScalarType? dtype=None) -> Tensor", out=True, out_overload="dtype_out")
define("mean.dim(Tensor self, int[1]? dim, bool keepdim=False, *, "
       "ScalarType? dtype=None) -> Tensor", out=True)
define("prod(Tensor self, *, ScalarType? dtype=None) -> Tensor", out=True)
define("prod.dim_int(Tensor self, int dim, bool keepdim=False, *, "
       "ScalarType? dtype=None) -> Tensor", out=True, out_overload="int_out")

# max, min (values and indices), amax, amin, argmax, argmin
define("max(Tensor self) -> Tensor", out=True, out_overload="unary_out")
define_with_out(
    "max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)",
    "max.dim_max(Tensor self, int dim, bool keepdim=False, *, Tensor(a!) max, "
    "Tensor(b!) max_values) -> (Tensor(a!) values, Tensor(b!) indices)")
define("max.other(Tensor self, Tensor other) -> Tensor", out=True)
define("min(Tensor self) -> Tensor", out=True, out_overload="unary_out")
define_with_out(
    "min.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)",
    "min.dim_min(Tensor self, int dim, bool keepdim=False, *, Tensor(a!) min, "
    "Tensor(b!) min_indices) -> (Tensor(a!) values, Tensor(b!) indices)")
define("min.other(Tensor self, Tensor other) -> Tensor", out=True)
define("amax(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor", out=True)
define("amin(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor", out=True)
define("argmax(Tensor self, int? dim=None, bool keepdim=False) -> Tensor", out=True)
define("argmin(Tensor self, int? dim=None, bool keepdim=False) -> Tensor", out=True)

# var, std: the correction overloads compute; the unbiased/dim ones decompose into them.
# var.dim comes first so ``x.var(1)`` resolves to it, as in PyTorch.
for _name in ("var", "std"):
    define(f"{_name}.dim(Tensor self, int[1]? dim, bool unbiased=True, "
           "bool keepdim=False) -> Tensor", out=True)
    define(f"{_name}.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, "
           "bool keepdim=False) -> Tensor", out=True, out_overload="correction_out")
    define(f"{_name}(Tensor self, bool unbiased=True) -> Tensor")
    define_with_out(
        f"{_name}_mean.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, "
        "bool keepdim=False) -> (Tensor, Tensor)",
        f"{_name}_mean.correction_out(Tensor self, int[1]? dim=None, *, Scalar? correction=None, "
        "bool keepdim=False, Tensor(a!) out0, Tensor(b!) out1) -> (Tensor(a!), Tensor(b!))")

# log-sum-exp and softmax (softmax.int/log_softmax.int decompose into _softmax/_log_softmax)
define("logsumexp(Tensor self, int[1] dim, bool keepdim=False) -> Tensor", out=True)
define("softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor",
       out=True, out_overload="int_out")
define("log_softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor",
       out=True, out_overload="int_out")
define("_softmax(Tensor self, int dim, bool half_to_float) -> Tensor", out=True)
define("_log_softmax(Tensor self, int dim, bool half_to_float) -> Tensor", out=True)
# their backward ops: one kernel each, as PyTorch dispatches them (not the four ops of the
# formula); differentiable themselves (double backward)
for _name, _out_arg in (("_softmax_backward_data", "grad_input"),
                        ("_log_softmax_backward_data", "out")):  # fmt: skip
    define(f"{_name}(Tensor grad_output, Tensor output, int dim, ScalarType input_dtype) -> Tensor",
           out=True, out_arg=_out_arg)  # fmt: skip

# all, any
for _name in ("all", "any"):
    define(f"{_name}(Tensor self) -> Tensor", out=True, out_overload="all_out")
    define(f"{_name}.dim(Tensor self, int dim, bool keepdim=False) -> Tensor", out=True)
    define(f"{_name}.dims(Tensor self, int[]? dim=None, bool keepdim=False) -> Tensor",
           out=True, out_overload="dims_out")

# norms: Tensor.norm decomposes into linalg_vector_norm, as torch.norm does
define("linalg_vector_norm(Tensor self, Scalar ord=2, int[1]? dim=None, bool keepdim=False, *, "
       "ScalarType? dtype=None) -> Tensor", variants=(), out=True)
define("norm.Scalar(Tensor self, Scalar p=2) -> Tensor", out=True, out_overload="Scalar_out")
define("norm.ScalarOpt_dim(Tensor self, Scalar? p, int[1] dim, bool keepdim=False) -> Tensor",
       out=True)

# scans
define("cumsum(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor", inplace=True, out=True)
define("cumprod(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor", inplace=True, out=True)

# sorting
define("sort(Tensor self, int dim=-1, bool descending=False) -> (Tensor values, Tensor indices)",
       out=True, out_overload="values")
define("sort.stable(Tensor self, *, bool? stable, int dim=-1, bool descending=False) -> "
       "(Tensor values, Tensor indices)", out=True, out_overload="values_stable")
define("argsort(Tensor self, int dim=-1, bool descending=False) -> Tensor")
define("argsort.stable(Tensor self, *, bool stable, int dim=-1, bool descending=False) -> Tensor",
       out=True, out_overload="stable_out")
define("msort(Tensor self) -> Tensor", out=True)
define("topk(Tensor self, SymInt k, int dim=-1, bool largest=True, bool sorted=True) -> "
       "(Tensor values, Tensor indices)", out=True, out_overload="values")

# the sum of a matrix's diagonal
define("trace(Tensor self) -> Tensor", out=True)

# NaN-ignoring sums and means, counts of non-zeros, both extremes at once
define("nansum(Tensor self, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) "
       "-> Tensor", out=True)
define("nanmean(Tensor self, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) "
       "-> Tensor", out=True)
define("count_nonzero.dim_IntList(Tensor self, int[] dim) -> Tensor", out=True,
       out_overload="dim_IntList_out")
define("count_nonzero(Tensor self, int? dim=None) -> Tensor", out=True)
define_with_out(
    "aminmax(Tensor self, *, int? dim=None, bool keepdim=False) -> (Tensor min, Tensor max)",
    "aminmax.out(Tensor self, *, int? dim=None, bool keepdim=False, Tensor(a!) min, "
    "Tensor(b!) max) -> (Tensor(a!) min, Tensor(b!) max)")
# running extremes (values and the index of each) and the running log-sum-exp
for _name in ("cummax", "cummin"):
    define_with_out(
        f"{_name}(Tensor self, int dim) -> (Tensor values, Tensor indices)",
        f"{_name}.out(Tensor self, int dim, *, Tensor(a!) values, Tensor(b!) indices) -> "
        "(Tensor(a!) values, Tensor(b!) indices)")
define("logcumsumexp(Tensor self, int dim) -> Tensor", out=True)
# integrals of samples by the trapezoid rule, and Vandermonde matrices (compositions)
define("trapezoid.x(Tensor y, Tensor x, *, int dim=-1) -> Tensor", variants=("function",))
define("trapz.x(Tensor y, Tensor x, *, int dim=-1) -> Tensor", variants=("function",))
define("trapz.dx(Tensor y, *, float dx=1, int dim=-1) -> Tensor", variants=("function",))
define("sum_to_size(Tensor self, SymInt[] size) -> Tensor", variants=("method",))
define("dist(Tensor self, Tensor other, Scalar p=2) -> Tensor", out=True)
define("renorm(Tensor self, Scalar p, int dim, Scalar maxnorm) -> Tensor", inplace=True, out=True)
define("trapezoid.dx(Tensor y, *, Scalar dx=1, int dim=-1) -> Tensor", variants=("function",))
define("cumulative_trapezoid.x(Tensor y, Tensor x, *, int dim=-1) -> Tensor",
       variants=("function",))
define("cumulative_trapezoid.dx(Tensor y, *, Scalar dx=1, int dim=-1) -> Tensor",
       variants=("function",))
define("vander(Tensor x, int? N=None, bool increasing=False) -> Tensor", variants=("function",))
# covariance and correlation matrices of the rows' variables (compositions)
define("cov(Tensor self, *, int correction=1, Tensor? fweights=None, Tensor? aweights=None) "
       "-> Tensor", tags=("data_dependent_output",))  # (it reads the degrees of freedom)
define("corrcoef(Tensor self) -> Tensor", tags=("data_dependent_output",))
# fmt: on


# --------------------------------------------------------------------------- shared rules


def reduction_axes(
    shape: Sequence[int], dim: Any, op: str, *, empty_means_all: bool = True
) -> tuple[int, ...]:
    """The NumPy axes ``dim`` reduces over (NOTE [reduction dims]).

    >>> from ember.ops.native.reductions import reduction_axes
    >>> reduction_axes((2, 3), -1, "sum")
    (1,)
    """
    ndim = len(shape)
    if dim is None:
        return tuple(range(ndim))
    if type(dim) is int:
        d = wrap_dim(dim, ndim, op)
        return (d,) if ndim else ()
    if not dim:
        return tuple(range(ndim)) if empty_means_all else ()
    if len(dim) == 1:  # the common list: one dim (a bias gradient's sum)
        d = wrap_dim(int(dim[0]), ndim, op)
        return (d,) if ndim else ()
    axes = tuple(wrap_dim(int(d), ndim, op) for d in dim)
    if len(set(axes)) != len(axes):
        seen: set[int] = set()
        twice = next(a for a in axes if a in seen or seen.add(a))  # type: ignore[func-returns-value]
        raise RuntimeError(
            f"{op}: dim {twice} appears multiple times in the list of dims {list(dim)}"
        )
    return axes if ndim else ()


def reduced_shape(shape: Sequence[int], axes: tuple[int, ...], keepdim: bool) -> tuple[int, ...]:
    """The result shape of reducing ``axes`` of ``shape``.

    >>> from ember.ops.native.reductions import reduced_shape
    >>> reduced_shape((2, 3), (1,), True)
    (2, 1)
    """
    if keepdim:
        return tuple(1 if i in axes else n for i, n in enumerate(shape))
    return tuple(n for i, n in enumerate(shape) if i not in axes)


def sum_dtype(self_dtype: dtype, out: dtype | None) -> dtype:
    """sum/prod/cumsum: ``dtype=`` if given, else int64 for bool and integer inputs."""
    if out is not None:
        return out
    return dtypes.int64 if self_dtype.category <= INTEGRAL else self_dtype


def mean_dtype(self_dtype: dtype, out: dtype | None, op: str = "mean") -> dtype:
    """mean: ``dtype=`` or the input's, which must be floating point or complex."""
    d = self_dtype if out is None else out
    if d.category < FLOATING:
        which = "Input" if out is None else "Optional"
        raise RuntimeError(
            f"{op}(): could not infer output dtype. {which} dtype must be either a floating point "
            f"or complex dtype. Got: {d._short}. Pass dtype=ember.float32 or convert the input."
        )
    return d


def var_dtype(self_dtype: dtype, op: str) -> dtype:
    """var/std: floating or complex inputs only; complex gives its real dtype."""
    if self_dtype.category < FLOATING:
        raise RuntimeError(
            f"{op}: std and var only support floating point and complex dtypes, got "
            f"{self_dtype._short}; convert the input with .float()"
        )
    return self_dtype.to_real()


def check_not_complex(self_dtype: dtype, op: str, error: type[Exception] = RuntimeError) -> None:
    if self_dtype.category == COMPLEX:
        raise error(f"{op}(): does not support complex input ({self_dtype._short})")


def check_nonempty(shape: Sequence[int], axes: tuple[int, ...], dim: Any, op: str) -> None:
    """max/min/amax/argmax have no identity: reducing an empty dim (or all of an empty
    tensor) raises as in PyTorch (IndexError for a named dim, RuntimeError for all)."""
    if dim is None or (not isinstance(dim, int) and not dim):
        if 0 in shape:
            raise (IndexError if op in ("argmax", "argmin") else RuntimeError)(
                f"{op}(): Expected reduction dim to be specified for input.numel() == 0 "
                f"(shape {list(shape)}). Specify the reduction dim with the 'dim' argument."
            )
        return
    for a in axes:
        if shape[a] == 0:
            raise IndexError(
                f"{op}(): Expected reduction dim {a} to have non-zero size (shape {list(shape)})."
            )


def check_argext(
    shape: Sequence[int], self_dtype: dtype, dim: int | None, op: str
) -> tuple[int, ...]:
    """``argmax``/``argmin``'s checks (no bool or complex input, a nonempty reduced dim);
    returns the reduced axes (``reduction_axes``).

    >>> from ember.ops.native.reductions import check_argext
    >>> check_argext((2, 3), ember.float32, 1, "argmax")
    (1,)
    """
    if self_dtype is dtypes.bool_:
        raise RuntimeError(f"{op}(): does not support bool input; convert it with .int()")
    check_not_complex(self_dtype, op)
    axes = reduction_axes(shape, dim, op)
    check_nonempty(shape, axes, dim, op)
    return axes


def all_any_dtype(self_dtype: dtype) -> dtype:
    """all/any give bool, except uint8 inputs, which give uint8 (PyTorch's legacy rule)."""
    return dtypes.uint8 if self_dtype is dtypes.uint8 else dtypes.bool_


def norm_dtype(self_dtype: dtype, out: dtype | None, op: str = "linalg.vector_norm") -> dtype:
    """linalg_vector_norm: floating/complex inputs; the result is real."""
    if self_dtype.category < FLOATING:
        raise RuntimeError(
            f"{op}: Expected a floating point or complex tensor as input. Got "
            f"{self_dtype._short}; convert it with .float()"
        )
    if out is None:
        return self_dtype.to_real()
    if out.category < FLOATING:
        raise RuntimeError(f"{op}: dtype should be floating point or complex, but got {out._short}")
    if self_dtype.category == FLOATING and out.category == COMPLEX:
        raise RuntimeError(f"{op}: dtype should be real for real inputs, but got {out._short}")
    if self_dtype.category == COMPLEX and out.category != COMPLEX:
        raise RuntimeError(
            f"{op}: dtype should be complex for complex inputs, but got {out._short}"
        )
    return out.to_real()


def check_norm_empty(shape: Sequence[int], axes: tuple[int, ...], ord: Any, op: str) -> None:
    if ord < 0 or ord == float("inf"):
        if any(shape[a] == 0 for a in axes) or (not axes and 0 in shape):
            raise RuntimeError(
                f"{op} cannot compute the {_fmt_ord(ord)} norm on an empty tensor because the "
                f"operation does not have an identity (shape {list(shape)})"
            )


class VectorNorm(NamedTuple):
    """What ``linalg.vector_norm`` computes: ``ord`` over ``axes``, giving ``result``."""

    ord: Any
    axes: tuple[int, ...]
    keepdim: bool
    dtype: dtypes.dtype | None  # the ``dtype=`` asked for (the input is cast to it first)
    result: dtypes.dtype


def vector_norm_plan(
    self: Tensor,
    ord: Any = 2,
    dim: Any = None,
    keepdim: bool = False,
    *,
    dtype: dtype | None = None,
) -> VectorNorm:
    """``linalg.vector_norm``'s arguments, checked, with its result dtype and reduced axes.

    >>> from ember.ops.native.reductions import vector_norm_plan
    >>> vector_norm_plan(ember.ones(2, 3), 2, 1).axes
    (1,)
    """
    op = "linalg.vector_norm"
    result = norm_dtype(self.dtype, dtype, op)
    shape = tuple(self.shape)
    axes = reduction_axes(shape, dim, op)
    check_norm_empty(shape, axes, ord, op)
    return VectorNorm(ord, axes, keepdim, dtype, result)


def _fmt_ord(ord: Any) -> str:
    if ord == float("inf"):
        return "inf"
    if ord == float("-inf"):
        return "-inf"
    return str(int(ord)) if float(ord).is_integer() else str(ord)


def softmax_dtype(self_dtype: dtype, half_to_float: bool, op: str, numel: int) -> dtype:
    """_softmax/_log_softmax: floating inputs (an empty one is returned unchecked, as in
    PyTorch, which runs no kernel for it); no half-to-float conversion on CPU."""
    if half_to_float:
        raise RuntimeError(
            f"{op}: softmax with half to float conversion is not supported on CPU; "
            "pass half_to_float=False"
        )
    if self_dtype.category != FLOATING and numel:
        raise NotImplementedError(f"\"{op}\" not implemented for '{self_dtype._short}'")
    return self_dtype


def softmax_backward_dtype(
    grad: dtype, output: dtype, shapes: tuple[Any, Any], input_dtype: dtype, op: str
) -> dtype:
    numel = math.prod(shapes[0])
    """``_softmax_backward_data``/``_log_softmax_backward_data``: floating gradient and
    output of one shape and dtype; the result has the gradient's dtype. A float gradient for
    a half input would be half-to-float softmax, which CPU kernels don't do."""
    if grad.category != FLOATING and numel:  # an empty one runs no kernel, as in PyTorch
        raise NotImplementedError(f"\"{op}\" not implemented for '{grad._short}'")
    if output is not grad:
        raise RuntimeError(
            f"{op}: expected scalar type {grad._short} but found {output._short} (grad_output "
            "and output must have one dtype)"
        )
    if tuple(shapes[0]) != tuple(shapes[1]):
        raise RuntimeError(
            f"{op}: grad_output of shape {list(shapes[0])} does not match output of shape "
            f"{list(shapes[1])}"
        )
    if grad is dtypes.float32 and input_dtype is dtypes.float16:
        raise RuntimeError(
            f"{op}: expected scalar type Float but found Half: a half-to-float softmax "
            "backward is not supported on CPU"
        )
    return grad


def trace_dtype(shape: Sequence[int], self_dtype: dtype) -> dtype:
    """trace: a matrix, any dtype but bool; the result dtype is sum's."""
    if self_dtype is dtypes.bool_:
        raise NotImplementedError("\"trace\" not implemented for 'Bool'")
    if len(shape) != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {len(shape)}")
    return sum_dtype(self_dtype, None)


def check_sortable(self_dtype: dtype, op: str) -> None:
    if self_dtype.category == COMPLEX:
        raise RuntimeError(f"{op}: does not support complex dtypes on CPU ({self_dtype._short})")


def check_topk(shape: Sequence[int], self_dtype: dtype, k: int, axis: int) -> None:
    if self_dtype.category in (BOOL, COMPLEX):
        kind = "bool" if self_dtype.category == BOOL else "complex"
        raise RuntimeError(f"topk does not support {kind} dtypes on CPU")
    n = shape[axis] if shape else 1
    if not 0 <= k <= n:
        raise RuntimeError(f"topk: selected index k out of range: k={k}, but dim has size {n}")


# --------------------------------------------------------------------------- decompositions
# The ops PyTorch marks CompositeImplicitAutograd: they run on every backend through their
# parts, which is what __torch_dispatch__ code sees (``x.var(1)`` shows ``var.correction``).

aten = ops.aten
_CIA = DispatchKey.CompositeImplicitAutograd


@impl(aten.max.other, _CIA)
def max_other(self: Tensor, other: Tensor) -> Tensor:
    return aten.maximum.default(self, other)


@impl(aten.min.other, _CIA)
def min_other(self: Tensor, other: Tensor) -> Tensor:
    return aten.minimum.default(self, other)


def _unbiased_overloads(correction_op: OpOverload) -> tuple[Any, Any]:
    def by_dim(self: Tensor, dim: Any, unbiased: bool = True, keepdim: bool = False) -> Tensor:
        return correction_op(self, dim, correction=1 if unbiased else 0, keepdim=keepdim)

    def whole(self: Tensor, unbiased: bool = True) -> Tensor:
        return correction_op(self, correction=1 if unbiased else 0)

    return by_dim, whole


for _packet in (aten.var, aten.std):
    _by_dim, _whole = _unbiased_overloads(_packet.correction)
    impl(_packet.dim, _CIA, _by_dim)
    impl(_packet.default, _CIA, _whole)


@impl(aten.softmax.int, _CIA)
def softmax(self: Tensor, dim: int, dtype: dtype | None = None) -> Tensor:
    if dtype is not None:
        self = aten._to_copy.default(self, dtype=dtype)
    return aten._softmax.default(self, dim, False)


@impl(aten.log_softmax.int, _CIA)
def log_softmax(self: Tensor, dim: int, dtype: dtype | None = None) -> Tensor:
    if dtype is not None:
        self = aten._to_copy.default(self, dtype=dtype)
    return aten._log_softmax.default(self, dim, False)


@impl(aten.norm.Scalar, _CIA)
def norm(self: Tensor, p: Any = 2) -> Tensor:
    return aten.linalg_vector_norm.default(self, p)


@impl(aten.norm.ScalarOpt_dim, _CIA)
def norm_dim(self: Tensor, p: Any, dim: Any, keepdim: bool = False) -> Tensor:
    return aten.linalg_vector_norm.default(self, 2 if p is None else p, dim, keepdim)


@impl(aten.nanmean.default, _CIA)
def nanmean(
    self: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: dtype | None = None
) -> Tensor:
    """``nansum / (number of non-NaNs)`` over ``dim``; floating and complex inputs only."""
    if self.dtype.category < FLOATING:
        raise RuntimeError(
            "nanmean(): expected input to have floating point or complex dtype but got "
            f"{self.dtype._short}"
        )
    count = aten.sum.dim_IntList(aten.logical_not.default(aten.isnan.default(self)), dim, keepdim)
    return aten.div.Tensor(aten.nansum.default(self, dim, keepdim, dtype=dtype), count)


def _trapezoid_dx(y: Tensor, x: Tensor, d: int, op: str) -> Tensor:
    """The spacings ``x[i + 1] - x[i]`` along ``d``: a 1-D ``x`` is laid along ``d``."""
    if x.ndim == 1:
        if x.shape[0] != y.shape[d]:
            raise RuntimeError(
                f"{op}: There must be one `x` value for each sample point (x has "
                f"{x.shape[0]}, y has {y.shape[d]} along dim {d})"
            )
        sizes = [1] * y.ndim
        sizes[d] = x.shape[0]
        x = aten.view.default(x, sizes)
    n = x.shape[d]
    return aten.sub.Tensor(aten.slice.Tensor(x, d, 1, n), aten.slice.Tensor(x, d, 0, n - 1))


def _no_bool(op: str, *ts: Tensor) -> None:
    if any(t.dtype is dtypes.bool_ for t in ts):
        raise RuntimeError(
            f"{op}: received a bool input for `x` or `y`, but bool is not supported (convert "
            "it with .int() or .float())"
        )


def _pair_sums(y: Tensor, d: int) -> Tensor:
    n = y.shape[d]
    return aten.add.Tensor(aten.slice.Tensor(y, d, 0, n - 1), aten.slice.Tensor(y, d, 1, n))


def _empty_integral(y: Tensor, d: int) -> Tensor:
    shape = [s for i, s in enumerate(y.shape) if i != d]
    return aten.zeros.default(shape, dtype=y.dtype, device=y.device)


@impl(aten.trapezoid.x, _CIA)
def trapezoid_x(y: Tensor, x: Tensor, *, dim: int = -1) -> Tensor:
    """``sum((y[i] + y[i + 1]) * (x[i + 1] - x[i])) / 2`` along ``dim``."""
    _no_bool("trapezoid", y, x)
    d = wrap_dim(dim, y.ndim, "trapezoid")
    if y.ndim and y.shape[d] == 0:
        return _empty_integral(y, d)
    dx = _trapezoid_dx(y, x, d, "trapezoid")
    total = aten.sum.dim_IntList(aten.mul.Tensor(_pair_sums(y, d), dx), [d])
    return aten.div.Scalar(total, 2.0)


@impl(aten.trapezoid.dx, _CIA)
def trapezoid_dx(y: Tensor, *, dx: Any = 1, dim: int = -1) -> Tensor:
    """``(sum(y) - (y[0] + y[-1]) / 2) * dx`` along ``dim``."""
    d = wrap_dim(dim, y.ndim, "trapezoid")
    if y.ndim and y.shape[d] == 0:
        return _empty_integral(y, d)
    _no_bool("trapezoid", y)
    ends = aten.add.Tensor(aten.select.int(y, d, -1), aten.select.int(y, d, 0))
    inner = aten.sub.Tensor(aten.sum.dim_IntList(y, [d]), aten.mul.Scalar(ends, 0.5))
    return aten.mul.Scalar(inner, dx)


@impl(aten.trapz.x, _CIA)
def trapz_x(y: Tensor, x: Tensor, *, dim: int = -1) -> Tensor:
    """``trapezoid``'s older name."""
    return aten.trapezoid.x(y, x, dim=dim)


@impl(aten.trapz.dx, _CIA)
def trapz_dx(y: Tensor, *, dx: float = 1.0, dim: int = -1) -> Tensor:
    """``trapezoid``'s older name (``dx`` a float)."""
    return aten.trapezoid.dx(y, dx=dx, dim=dim)


@impl(aten.sum_to_size.default, _CIA)
def sum_to_size(self: Tensor, size: Sequence[int]) -> Tensor:
    """``self`` summed down to ``size``, a shape it broadcasts from: its extra leading dims
    and the dims ``size`` has as 1 are summed; ``self`` itself when nothing is."""
    shape, size = tuple(self.shape), tuple(size)
    lead = len(shape) - len(size)
    if lead < 0 or any(s not in (1, n) for s, n in zip(size, shape[lead:], strict=True)):
        raise RuntimeError(
            f"size {{{list(size)}}} is not expandable to size {{{list(shape)}}}. (sum_to_size "
            "takes a shape the tensor broadcasts from)"
        )
    if not size:
        return aten.sum.default(self)
    dims = list(range(lead)) + [
        lead + i for i, s in enumerate(size) if s == 1 and shape[lead + i] != 1
    ]
    if not dims:
        return self
    summed = aten.sum.dim_IntList(self, dims, True)
    return aten.view.default(summed, list(size)) if lead else summed


@impl(aten.dist.default, _CIA)
def dist(self: Tensor, other: Tensor, p: Any = 2) -> Tensor:
    """The ``p``-norm of ``self - other`` (broadcast)."""
    return aten.linalg_vector_norm.default(aten.sub.Tensor(self, other), p)


@impl(aten.renorm.default, _CIA)
def renorm(self: Tensor, p: Any, dim: int, maxnorm: Any) -> Tensor:
    """Each slice along ``dim`` whose ``p``-norm exceeds ``maxnorm`` scaled down to it (by
    ``maxnorm / (norm + 1e-7)``, PyTorch's factor)."""
    if self.ndim < 2:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {self.ndim} dimensions")
    if p <= 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
    if self.dtype.category != COMPLEX and self.dtype.category != FLOATING:
        raise RuntimeError(
            f"renorm: expected a floating point or complex tensor, got {self.dtype._short}"
        )
    d = wrap_dim(dim, self.ndim, "renorm")
    others = [k for k in range(self.ndim) if k != d]
    norm = aten.linalg_vector_norm.default(self, p, others, True)
    factor = aten.where.self(
        aten.gt.Scalar(norm, maxnorm),
        aten.div.Tensor(aten.full_like.default(norm, maxnorm), aten.add.Scalar(norm, 1e-7)),
        aten.ones_like.default(norm),
    )
    return aten.mul.Tensor(
        self, factor.to(self.dtype) if factor.dtype is not self.dtype else factor
    )


@impl(aten.cumulative_trapezoid.x, _CIA)
def cumulative_trapezoid_x(y: Tensor, x: Tensor, *, dim: int = -1) -> Tensor:
    """The running trapezoid integral: one element fewer than ``y`` along ``dim``."""
    _no_bool("cumulative_trapezoid", y, x)
    d = wrap_dim(dim, y.ndim, "cumulative_trapezoid")
    dx = _trapezoid_dx(y, x, d, "cumulative_trapezoid")
    running = aten.cumsum.default(aten.mul.Tensor(_pair_sums(y, d), dx), d)
    return aten.div.Scalar(running, 2.0)


@impl(aten.cumulative_trapezoid.dx, _CIA)
def cumulative_trapezoid_dx(y: Tensor, *, dx: Any = 1, dim: int = -1) -> Tensor:
    _no_bool("cumulative_trapezoid", y)
    d = wrap_dim(dim, y.ndim, "cumulative_trapezoid")
    return aten.cumsum.default(aten.mul.Scalar(_pair_sums(y, d), dx / 2), d)


@impl(aten.vander.default, _CIA)
def vander(x: Tensor, N: int | None = None, increasing: bool = False) -> Tensor:
    """The powers ``x**0 ... x**(N-1)`` of each element, one row each (decreasing unless
    ``increasing``), in ``x``'s dtype promoted with int64."""
    if x.ndim != 1:
        raise RuntimeError(f"x must be a one-dimensional tensor (got {x.ndim} dims)")
    n = x.shape[0] if N is None else N
    if n < 0:
        raise RuntimeError(f"N must be non-negative (got {n})")
    d = dtypes.promote_types(x.dtype, dtypes.int64)
    rows = x.shape[0]
    ones = aten.ones.default([rows, min(n, 1)], dtype=d, device=x.device)
    if n > 1:
        powers = aten.expand.default(aten.unsqueeze.default(x, 1), [rows, n - 1])
        ones = aten.cat.default([ones, aten.cumprod.default(powers, 1, dtype=d)], 1)
    return ones if increasing else aten.flip.default(ones, [1])


def _read(flag: Tensor) -> bool:
    """A 0-dim bool's value: ``cov`` checks values, so it has no Meta result (NOTE
    [data-dependent shapes]) and a fake tensor's read raises, as in PyTorch."""
    if flag.device.type == "meta":
        raise NotImplementedError(
            "cov: its weights and degrees of freedom are checked by value, which a meta tensor "
            "does not have"
        )
    return bool(flag.item())


def _check_weights(w: Tensor | None, name: str, n: int, integral: bool) -> None:
    if w is None:
        return
    if w.ndim > 1:
        raise RuntimeError(
            f"cov(): expected {name} to have one or fewer dimensions but got {name} with "
            f"{w.ndim} dimensions"
        )
    if integral and w.dtype.category != INTEGRAL:
        raise RuntimeError(f"cov(): expected {name} to have integral dtype but got {name} with "
                           f"{w.dtype._short} dtype")  # fmt: skip
    if not integral and w.dtype.category != FLOATING:
        raise RuntimeError(f"cov(): expected {name} to have floating point dtype but got "
                           f"{name} with {w.dtype._short} dtype")  # fmt: skip
    if w.numel() != n:
        raise RuntimeError(
            f"cov(): expected {name} to have the same numel as there are observations in the "
            f"input but got {w.numel()} != {n}"
        )
    if w.numel() and _read(aten.lt.Scalar(aten.min.default(w), 0)):
        raise RuntimeError(f"cov(): {name} cannot be negative")


@impl(aten.cov.default, _CIA)
def cov(
    self: Tensor,
    *,
    correction: int = 1,
    fweights: Tensor | None = None,
    aweights: Tensor | None = None,
) -> Tensor:
    """The covariance matrix of the rows (variables) over the columns (observations),
    weighted by ``fweights * aweights``; squeezed, as PyTorch's."""
    if self.ndim > 2:
        raise RuntimeError(
            "cov(): expected input to have two or fewer dimensions but got an input with "
            f"{self.ndim} dimensions"
        )
    x = self if self.ndim == 2 else aten.view.default(self, [1, -1])
    n = x.shape[1]
    _check_weights(fweights, "fweights", n, True)
    _check_weights(aweights, "aweights", n, False)
    w = fweights
    if aweights is not None:
        w = aweights if w is None else aten.mul.Tensor(w, aweights)
    if w is None:
        w_sum = aten.scalar_tensor.default(n, dtype=dtypes.int64, device=self.device)
    else:
        w_sum = aten.sum.default(w)
    weighted = x if w is None else aten.mul.Tensor(x, w)
    avg = aten.div.Tensor(aten.sum.dim_IntList(weighted, [1]), w_sum)
    if w is not None and correction != 0 and aweights is not None:
        spread = aten.div.Tensor(aten.sum.default(aten.mul.Tensor(w, aweights)), w_sum)
        norm = aten.sub.Tensor(w_sum, aten.mul.Scalar(spread, correction))
    else:
        norm = aten.sub.Scalar(w_sum, correction)
    if _read(aten.le.Scalar(norm, 0)):
        warnings.warn(
            "cov(): degrees of freedom is <= 0. Correction should be strictly less than the "
            "number of observations.",
            UserWarning,
            stacklevel=2,
        )
        norm = aten.mul.Scalar(norm, 0)
    x = aten.sub.Tensor(x, aten.unsqueeze.default(avg, 1))
    weighted = x if w is None else aten.mul.Tensor(x, w)
    other = aten.t.default(weighted)
    if other.dtype.category == COMPLEX:
        other = aten._conj_physical.default(other)
    c = aten.mm.default(x, other)
    return aten.squeeze.default(aten.div.Tensor(c, norm))


@impl(aten.corrcoef.default, _CIA)
def corrcoef(self: Tensor) -> Tensor:
    """The covariance matrix scaled by the standard deviations, clipped to [-1, 1]."""
    c = aten.cov.default(self)
    if c.ndim == 0:
        return aten.div.Tensor(c, c)
    d = aten.diagonal.default(c)
    if d.dtype.category == COMPLEX:
        d = aten.real.default(d)
    std = aten.sqrt.default(d)
    c = aten.div.Tensor(c, aten.view.default(std, [-1, 1]))
    c = aten.div.Tensor(c, aten.view.default(std, [1, -1]))
    if c.dtype.category == COMPLEX:
        re = aten.clamp.default(aten.real.default(c), -1, 1)
        im = aten.clamp.default(aten.imag.default(c), -1, 1)
        return aten.add.Tensor(re, aten.mul.Scalar(im, 1j))
    return aten.clamp.default(c, -1, 1)


def check_nansum(self: Tensor) -> None:
    if self.dtype.category == COMPLEX:
        raise RuntimeError(
            f"nansum does not support complex inputs ({self.dtype._short}); sum the real and "
            "imaginary parts separately"
        )


def check_aminmax(self: Tensor, dim: int | None) -> tuple[int, ...]:
    """``aminmax``'s checks (an empty reduction, then complex inputs); returns the axes."""
    shape = tuple(self.shape)
    axes = reduction_axes(shape, dim, "aminmax")
    if shape and dim is not None and shape[axes[0]] == 0:
        raise IndexError(
            f"aminmax: Expected reduction dim {dim} to have non-zero size (it has no identity)"
        )
    if 0 in shape and dim is None:
        raise RuntimeError(
            "aminmax(): cannot compute aminmax over an empty dimension as the operation has no "
            "identity (pass a dim whose size is not 0)"
        )
    if self.dtype.category == COMPLEX:
        raise NotImplementedError(
            f"\"aminmax_cpu\" not implemented for '{self.dtype._short}' (complex numbers have no "
            "order)"
        )
    return axes


def check_scan_extreme(self: Tensor, dim: int, name: str) -> int:
    """``cummax``/``cummin``'s checks; returns the wrapped dim."""
    d = wrap_dim(dim, self.ndim, name)
    if self.dtype.category == COMPLEX and self.ndim and 0 not in tuple(self.shape):  # (no kernel)
        raise NotImplementedError(f"\"{name}_cpu\" not implemented for '{self.dtype._short}'")
    return d


def check_logcumsumexp(self: Tensor, dim: int) -> int:
    d = wrap_dim(dim, self.ndim, "logcumsumexp")
    if self.dtype.category < FLOATING:
        raise NotImplementedError(
            f"\"logcumsumexp_out_cpu\" not implemented for '{self.dtype._short}' (convert the "
            "input to a floating dtype)"
        )
    return d


@impl(aten.argsort.default, _CIA)
def argsort(self: Tensor, dim: int = -1, descending: bool = False) -> Tensor:
    return aten.sort.default(self, dim, descending)[1]


@impl(aten.msort.default, _CIA)
def msort(self: Tensor) -> Tensor:
    """The values sorted along dim 0 (PyTorch's msort: ``sort(self, 0).values``)."""
    return aten.sort.default(self, 0)[0]


@impl(aten.argsort.stable, _CIA)
def argsort_stable(
    self: Tensor, *, stable: bool, dim: int = -1, descending: bool = False
) -> Tensor:
    return aten.sort.stable(self, stable=stable, dim=dim, descending=descending)[1]
