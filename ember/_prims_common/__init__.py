"""The helpers PyTorch's decompositions and meta functions import from ``torch._prims_common``:
dimension and shape checks, stride layouts, dtype categories and elementwise type
promotion, for code written against PyTorch to import from ember unchanged.

>>> from ember import _prims_common as utils
>>> utils.make_contiguous_strides_for((2, 3, 4))
(12, 4, 1)
>>> utils.elementwise_dtypes(
...     ember.ones(2, dtype=ember.int32), 1.5,
...     type_promotion_kind=utils.ELEMENTWISE_TYPE_PROMOTION_KIND.DEFAULT)
(ember.float32, ember.float32)
>>> utils.canonicalize_dim(3, -1)
2
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from enum import Enum
from typing import Any

from ember import dtypes as _d
from ember._memory_format import channels_last, channels_last_3d, contiguous_format
from ember._tensor import Tensor
from ember.dtypes import dtype

__all__ = [
    "Dim", "DimsSequenceType", "DimsType", "ELEMENTWISE_TYPE_PROMOTION_KIND", "Number",
    "NumberType", "REDUCTION_OUTPUT_TYPE_KIND", "RETURN_TYPE", "ShapeType", "StrideType",
    "TensorLike", "TensorLikeType", "canonicalize_dim", "canonicalize_dims", "check",
    "check_same_dtype", "check_same_shape", "compute_reduction_output_shape",
    "corresponding_complex_dtype", "corresponding_real_dtype", "dtype_to_type",
    "elementwise_dtypes", "extract_dims_from_varargs", "extract_shape_from_varargs",
    "get_computation_dtype", "get_higher_dtype", "get_higher_type", "infer_size",
    "is_boolean_dtype", "is_channels_last_contiguous", "is_complex_dtype", "is_contiguous",
    "is_expandable_to", "is_float_dtype", "is_integer_dtype", "is_low_precision_dtype",
    "is_non_overlapping_and_dense", "is_same_shape", "is_weakly_lesser_type",
    "make_channels_last_strides_for", "make_contiguous_strides_for", "reduction_dims",
    "reduction_dtypes", "set_correction", "suggest_memory_format", "type_to_dtype",
    "validate_dim_length", "validate_idx", "validate_shape", "validate_strides",
]  # fmt: skip

Number = (bool, int, float, complex)
NumberType = bool | int | float | complex
Dim = int
ShapeType = tuple[int, ...] | list[int]
StrideType = tuple[int, ...] | list[int]
DimsType = int | list[int] | tuple[int, ...]
DimsSequenceType = list[int] | tuple[int, ...]
TensorLike = Tensor
TensorLikeType = Tensor


def check(b: bool, s: Callable[[], str], exc_type: type[Exception] = RuntimeError) -> None:
    """Raise ``exc_type(s())`` unless ``b`` (the message is made only on failure).

    >>> from ember._prims_common import check
    >>> check(1 + 1 == 2, lambda: "never")
    """
    if not b:
        raise exc_type(s())


# ------------------------------------------------------------------ dims and shapes


def validate_dim_length(length: int) -> None:
    """A dimension's length is a non-negative int."""
    if not isinstance(length, int) or length < 0:
        raise RuntimeError(f"Dimension lengths must be non-negative integers, got {length!r}")


def validate_shape(shape: ShapeType) -> None:
    """Every length of ``shape`` is a non-negative int."""
    for length in shape:
        validate_dim_length(length)


def validate_strides(strides: StrideType) -> None:
    """Every stride is a non-negative int."""
    for s in strides:
        if s < 0:
            raise RuntimeError(f"Strides must be non-negative, got {tuple(strides)}")


def validate_idx(rank: int, idx: int) -> None:
    """``0 <= idx < rank`` (or ``idx == 0`` for a scalar)."""
    if not (0 <= idx < rank or (idx == 0 and rank == 0)):
        raise RuntimeError(f"Index {idx} is out of range for a tensor of rank {rank}")


def canonicalize_dim(rank: int, idx: int, wrap_scalar: bool = True) -> int:
    """``idx`` as a dimension in ``[0, rank)`` (negatives count from the end); a scalar has
    one dimension to wrap to unless ``wrap_scalar`` is False.

    >>> from ember._prims_common import canonicalize_dim
    >>> canonicalize_dim(4, -2), canonicalize_dim(0, -1)
    (2, 0)
    """
    if rank < 0:
        raise RuntimeError(f"Rank cannot be negative but got {rank}")
    if rank == 0:
        if not wrap_scalar:
            raise IndexError(f"Dimension specified as {idx} but tensor has no dimensions")
        rank = 1
    wrapped = idx + rank if idx < 0 else idx
    if not 0 <= wrapped < rank:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-rank}, {rank - 1}], but "
            f"got {idx})"
        )
    return wrapped


def canonicalize_dims(rank: int, indices: Any, wrap_scalar: bool = True) -> Any:
    """``canonicalize_dim`` of an int, or of each of a sequence (a tuple back)."""
    if isinstance(indices, int):
        return canonicalize_dim(rank, indices, wrap_scalar)
    return tuple(canonicalize_dim(rank, i, wrap_scalar) for i in indices)


def is_same_shape(a: Sequence[int], b: Sequence[int]) -> bool:
    return tuple(a) == tuple(b)


def check_same_shape(*args: Any, allow_cpu_scalar_tensors: bool) -> None:
    """All tensors among ``args`` have one shape (zero-dim CPU tensors excepted if allowed)."""
    shape = None
    for a in args:
        if not isinstance(a, Tensor):
            continue
        if allow_cpu_scalar_tensors and a.ndim == 0 and a.device.type == "cpu":
            continue
        if shape is None:
            shape = tuple(a.shape)
        elif tuple(a.shape) != shape:
            raise RuntimeError(f"Shape {tuple(a.shape)} is not the expected shape {shape}!")


def check_same_dtype(*args: Any) -> None:
    """All tensors among ``args`` have one dtype, and numbers are of its category or lower."""
    full = None
    for a in args:
        if isinstance(a, Tensor):
            if full is None:
                full = a.dtype
            elif a.dtype != full:
                raise RuntimeError(f"Tensor with dtype {a.dtype} is not the expected dtype {full}!")
    if full is None:
        return
    for a in args:
        if isinstance(a, Number) and not is_weakly_lesser_type(type(a), dtype_to_type(full)):
            raise RuntimeError(
                f"Scalar of type {type(a).__name__} is not the expected dtype {full}!"
            )


def extract_dims_from_varargs(dims: Any) -> Any:
    """``f(1, 2)`` or ``f((1, 2))``: the dims either way."""
    if dims and isinstance(dims[0], Sequence):
        return tuple(dims[0])
    return dims


def extract_shape_from_varargs(shape: Any, validate: bool = True) -> tuple[int, ...]:
    """``f(2, 3)`` or ``f((2, 3))``: the shape either way, validated."""
    if len(shape) == 1 and isinstance(shape[0], Sequence):
        shape = shape[0]
    shape = tuple(shape)
    if validate:
        validate_shape(shape)
    return shape


def infer_size(shape: ShapeType, numel: int) -> tuple[int, ...]:
    """``shape`` with its one ``-1`` replaced so the product is ``numel``."""
    known, infer = 1, None
    for i, d in enumerate(shape):
        if d == -1:
            check(infer is None, lambda: "only one dimension can be inferred")
            infer = i
        elif d >= 0:
            known *= d
        else:
            raise RuntimeError(f"invalid shape dimension {d}")
    out = list(shape)
    if infer is None:
        check(
            numel == known,
            lambda: f"shape '{list(shape)}' is invalid for input of size {numel}",
        )
    else:
        check(
            known != 0 and numel % known == 0,
            lambda: f"shape '{list(shape)}' is invalid for input of size {numel}",
        )
        out[infer] = numel // known
    return tuple(out)


def is_expandable_to(shape: ShapeType, desired: ShapeType) -> bool:
    """Whether a tensor of ``shape`` broadcasts to ``desired``."""
    if len(shape) > len(desired):
        return False
    return all(s == d or s == 1 for s, d in zip(reversed(shape), reversed(desired), strict=False))


def reduction_dims(shape: ShapeType, dims: Sequence[int] | None) -> tuple[int, ...]:
    """The dims a reduction over ``dims`` (all when None) covers, canonical and unique."""
    if dims is None:
        return tuple(range(len(shape)))
    out = tuple(canonicalize_dim(len(shape), d) for d in dims)
    if len(set(out)) != len(out):
        raise RuntimeError(f"duplicate value in the list of dims {list(dims)}")
    return out


def compute_reduction_output_shape(shape: ShapeType, dimensions: Sequence[int]) -> tuple[int, ...]:
    """``shape`` without the reduced ``dimensions``."""
    for d in dimensions:
        validate_idx(len(shape), d)
    return tuple(s for i, s in enumerate(shape) if i not in dimensions)


def set_correction(unbiased: bool | None = None, correction: float | None = None) -> float:
    """The variance correction from PyTorch's two spellings (1 by default)."""
    if correction is not None and unbiased is not None:
        raise RuntimeError("cannot specify both correction and unbiased arguments")
    if correction is None and unbiased is None:
        return 1.0
    if correction is None:
        return 1.0 if unbiased else 0.0
    return float(correction)


# ------------------------------------------------------------------ strides and layouts


def make_contiguous_strides_for(shape: ShapeType, row_major: bool = True) -> tuple[int, ...]:
    """The strides of a contiguous tensor of ``shape`` (size-0 dims count as 1); with
    ``row_major=False``, of a batch of column-major matrices.

    >>> from ember._prims_common import make_contiguous_strides_for
    >>> make_contiguous_strides_for((2, 0, 3)), make_contiguous_strides_for((2, 3, 4), False)
    ((3, 3, 1), (12, 1, 3))
    """
    validate_shape(shape)
    if not shape:
        return ()
    strides, multiplier = [], 1
    for length in reversed(shape):
        strides.append(multiplier)
        multiplier *= max(length, 1)
    result = tuple(reversed(strides))
    if row_major or len(shape) < 2:
        return result
    return result[:-2] + (1, max(shape[-2], 1))


def make_channels_last_strides_for(shape: ShapeType) -> tuple[int, ...]:
    """Channels-last strides for a rank-3, -4 or -5 ``shape`` (channel dim innermost)."""
    rank = len(shape)
    if rank not in (3, 4, 5):
        raise RuntimeError(f"no channels last format strides exist in {rank} dimensions")
    strides = [0] * rank
    multiplier = 1
    for i in (1, *range(rank - 1, 1, -1), 0):
        strides[i] = multiplier
        multiplier *= shape[i]  # size-0 dims give 0 strides here, as in PyTorch
    return tuple(strides)


def is_contiguous(a: Tensor, false_if_dde: bool = False) -> bool:
    """Whether ``a`` is laid out row-major (size-1 dims ignored; fewer than 2 elements is)."""
    if a.numel() < 2:
        return True
    expected = 1
    for length, stride in zip(reversed(a.shape), reversed(a.stride()), strict=True):
        if length == 1:
            continue
        if stride != expected:
            return False
        expected *= length
    return True


def is_channels_last_contiguous(a: Tensor) -> bool:
    """Whether ``a`` (rank 4 or 5) is laid out channels-last."""
    if a.ndim == 4:
        return bool(a.is_contiguous(memory_format=channels_last))
    if a.ndim == 5:
        return bool(a.is_contiguous(memory_format=channels_last_3d))
    return False


def is_non_overlapping_and_dense(a: Tensor) -> bool:
    """Whether ``a``'s elements fill its memory with no gaps and no overlaps, in some order."""
    if is_contiguous(a):
        return True
    pairs = sorted((s, n) for n, s in zip(a.shape, a.stride(), strict=True) if n != 1)
    expected = 1
    for stride, length in pairs:
        if stride != expected:
            return False
        expected *= length
    return True


def suggest_memory_format(x: Tensor) -> Any:
    """``channels_last`` (or ``channels_last_3d``) if ``x`` is laid out so, else
    ``contiguous_format``."""
    if x.ndim == 4 and x.is_contiguous(memory_format=channels_last) and not is_contiguous(x):
        return channels_last
    if x.ndim == 5 and x.is_contiguous(memory_format=channels_last_3d) and not is_contiguous(x):
        return channels_last_3d
    return contiguous_format


# ------------------------------------------------------------------ dtypes


def is_boolean_dtype(d: dtype) -> bool:
    return d == _d.bool_


def is_integer_dtype(d: dtype) -> bool:
    """Whether ``d`` is an integer dtype (bool is not, as in PyTorch)."""
    return d.category == _d.INTEGRAL


def is_float_dtype(d: dtype) -> bool:
    return d.category == _d.FLOATING


def is_complex_dtype(d: dtype) -> bool:
    return d.category == _d.COMPLEX


def is_low_precision_dtype(d: dtype) -> bool:
    return d.name in ("float16", "bfloat16", "complex32")


def corresponding_real_dtype(d: dtype) -> dtype:
    return d.to_real()


def corresponding_complex_dtype(d: dtype) -> dtype:
    return d.to_complex()


def get_computation_dtype(d: dtype) -> dtype:
    """The dtype an op computes in: float32 for float16 and bfloat16, else ``d``."""
    return _d.float32 if d.name in ("float16", "bfloat16") else d


_TYPE_ORDER = (bool, int, float, complex)


def dtype_to_type(d: dtype) -> type:
    """The Python type of ``d``'s category: bool, int, float or complex."""
    return _TYPE_ORDER[d.category]


def type_to_dtype(typ: type) -> dtype:
    """The default dtype of a Python type (bool, int64, the default float, its complex)."""
    if typ is bool:
        return _d.bool_
    if typ is int:
        return _d.int64
    if typ is float:
        return _d.get_default_dtype()
    if typ is complex:
        return _d.default_complex()
    raise ValueError(f"type_to_dtype: invalid type {typ!r}")


def get_higher_type(a: type, b: type) -> type:
    """The higher of two of bool < int < float < complex."""
    return a if _TYPE_ORDER.index(a) >= _TYPE_ORDER.index(b) else b


def is_weakly_lesser_type(a: type, b: type) -> bool:
    """Whether ``a`` is ``b`` or lower in bool < int < float < complex."""
    return _TYPE_ORDER.index(a) <= _TYPE_ORDER.index(b)


def get_higher_dtype(a: Any, b: Any) -> dtype | None:
    """The promotion of two dtypes (or numbers, tensors, None)."""

    def as_dtype(x: Any) -> dtype | None:
        if x is None or isinstance(x, dtype):
            return x
        if isinstance(x, Tensor):
            return x.dtype
        if isinstance(x, Number):
            return type_to_dtype(type(x))
        raise RuntimeError(f"Unexpected type {type(x).__name__} given to get_higher_dtype")

    da, db = as_dtype(a), as_dtype(b)
    if da is None:
        return db
    if db is None:
        return da
    return _d.promote_types(da, db)


class ELEMENTWISE_TYPE_PROMOTION_KIND(Enum):
    """How an elementwise op's result dtype follows from the promoted dtype."""

    DEFAULT = (0,)
    NO_OPMATH = (1,)
    INT_TO_FLOAT = (2,)
    ALWAYS_BOOL = (3,)
    COMPLEX_TO_FLOAT = (4,)
    BOOL_TO_LONG = (5,)


class REDUCTION_OUTPUT_TYPE_KIND(Enum):
    """How a reduction's result dtype follows from its input's."""

    SAME = (0,)
    COMPLEX_TO_FLOAT = (1,)
    KEEP_PROMOTED_TYPE = (2,)
    ALWAYS_BOOL = (3,)


class RETURN_TYPE(Enum):
    NEW = (0,)
    VIEW = (1,)
    INPLACE = (2,)
    NONE = (3,)


def _highest_tensor_dtype(
    args: list[Any], keep: Callable[[dtype], bool], float_as_complex: bool = False
) -> dtype | None:
    """The promotion of the kept dtypes of tensors with dims, else of zero-dim tensors."""
    dims: dtype | None = None
    zero: dtype | None = None
    for x in args:
        if isinstance(x, Tensor) and keep(x.dtype):
            d = x.dtype.to_complex() if float_as_complex and is_float_dtype(x.dtype) else x.dtype
            if x.ndim == 0:
                zero = get_higher_dtype(zero, d)
            else:
                dims = get_higher_dtype(dims, d)
    return dims if dims is not None else zero


def elementwise_dtypes(
    *_args: Any, type_promotion_kind: ELEMENTWISE_TYPE_PROMOTION_KIND
) -> tuple[dtype, dtype]:
    """(computation dtype, result dtype) of an elementwise op on these tensors and numbers,
    as PyTorch promotes: the highest category among all arguments (bool < int < float <
    complex), then the highest dtype of that category among tensors with dimensions, else
    among zero-dim tensors, else the category's default; then ``type_promotion_kind``.

    >>> from ember._prims_common import elementwise_dtypes, ELEMENTWISE_TYPE_PROMOTION_KIND as K
    >>> i8 = ember.ones(2, dtype=ember.int8)
    >>> elementwise_dtypes(i8, 5, type_promotion_kind=K.INT_TO_FLOAT)
    (ember.float32, ember.float32)
    >>> elementwise_dtypes(i8, ember.tensor(True), type_promotion_kind=K.ALWAYS_BOOL)
    (ember.int8, ember.bool)
    """
    args: list[Any] = []
    for x in _args:
        if x is None:
            continue
        if isinstance(x, (Tensor, *Number)):
            args.append(x)
        elif isinstance(x, Sequence) and not isinstance(x, str):
            args.extend(e for e in x if e is not None)
        else:
            raise ValueError(
                f"elementwise_dtypes: unexpected type {type(x).__name__}; give tensors and numbers"
            )
    if not args:
        raise ValueError("elementwise_dtypes: no tensor or number to promote")
    highest: type = bool
    for x in args:
        t = dtype_to_type(x.dtype) if isinstance(x, Tensor) else type(x)
        highest = get_higher_type(highest, t)
    if highest is float:
        result = _highest_tensor_dtype(args, is_float_dtype) or _d.get_default_dtype()
    elif highest is complex:
        result = (
            _highest_tensor_dtype(
                args, lambda d: is_float_dtype(d) or is_complex_dtype(d), float_as_complex=True
            )
            or _d.default_complex()
        )
    elif highest is int:
        result = _highest_tensor_dtype(args, lambda d: d.category == _d.INTEGRAL) or _d.int64
    else:
        result = _d.bool_
    kind = type_promotion_kind
    if kind is ELEMENTWISE_TYPE_PROMOTION_KIND.DEFAULT:
        return get_computation_dtype(result), result
    if kind is ELEMENTWISE_TYPE_PROMOTION_KIND.NO_OPMATH:
        return result, result
    if kind is ELEMENTWISE_TYPE_PROMOTION_KIND.INT_TO_FLOAT:
        if result.category in (_d.BOOL, _d.INTEGRAL):
            result = _d.get_default_dtype()
        return get_computation_dtype(result), result
    if kind is ELEMENTWISE_TYPE_PROMOTION_KIND.COMPLEX_TO_FLOAT:
        computation = get_computation_dtype(result)
        return computation, result.to_real() if is_complex_dtype(result) else result
    if kind is ELEMENTWISE_TYPE_PROMOTION_KIND.BOOL_TO_LONG:
        if result == _d.bool_:
            return _d.int64, _d.int64
        return get_computation_dtype(result), result
    if kind is ELEMENTWISE_TYPE_PROMOTION_KIND.ALWAYS_BOOL:
        return get_computation_dtype(result), _d.bool_
    raise ValueError(f"Unknown type promotion kind {kind}")


def reduction_dtypes(
    arg: Tensor, output_dtype_kind: REDUCTION_OUTPUT_TYPE_KIND, dtype: dtype | None = None
) -> tuple[dtype, dtype | None]:
    """(computation dtype, result dtype) of a reduction of ``arg`` (in ``dtype`` if given)."""
    inp = dtype if dtype is not None else arg.dtype
    computation = get_computation_dtype(inp)
    kind = output_dtype_kind
    if kind in (REDUCTION_OUTPUT_TYPE_KIND.SAME, REDUCTION_OUTPUT_TYPE_KIND.COMPLEX_TO_FLOAT):
        result: _d.dtype | None = dtype if dtype else arg.dtype
        if kind is REDUCTION_OUTPUT_TYPE_KIND.COMPLEX_TO_FLOAT and is_complex_dtype(
            arg.dtype if result is None else result
        ):
            result = (arg.dtype if result is None else result).to_real()
    elif kind is REDUCTION_OUTPUT_TYPE_KIND.KEEP_PROMOTED_TYPE:
        result = None
    else:
        result = _d.bool_
    return computation, result


def prod(xs: Sequence[Any]) -> Any:
    """The product of ``xs`` (1 for none)."""
    return math.prod(xs)
