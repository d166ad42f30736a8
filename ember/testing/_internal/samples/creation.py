"""Sample inputs for the creation ops (see ember/testing/_internal/opinfo.py).

Random ops (``rand``, ``randn``, ``randint`` and their ``_like``/``generator`` forms) and
uninitialised ones (``empty*``) have ``compare_torch=False``: ember draws from its own
NumPy generators, so it does not reproduce PyTorch's random streams, and ``empty`` values are
arbitrary. Their Meta rules are still checked here; their dtypes, shapes and statistics
against PyTorch in ``tests/test_creation.py`` and ``tests/test_random.py``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

import ember
from ember import dtypes
from ember.testing._internal.opinfo import (
    ALL_DTYPES,
    FLOATS,
    INTS,
    NUMERIC,
    ErrorInput,
    SampleInput,
    errors,
    samples,
)

COMPLEX = (dtypes.complex64, dtypes.complex128)
FLOAT_OR_COMPLEX = (*FLOATS, *COMPLEX)
SIZES: tuple[Any, ...] = ((2, 3), (), (0, 3), [4], (1, 2, 1))


def _fill(dtype: dtypes.dtype) -> list[Any]:
    """Fill values that fit ``dtype``: Python numbers of each kind it accepts."""
    if dtype is dtypes.bool_:
        return [True, False]
    if dtype.category == dtypes.INTEGRAL:
        return [3, 0] if dtype is dtypes.uint8 else [-2, 7]
    if dtype.category == dtypes.FLOATING:
        return [2.5, -0.0, 3, float("inf")]
    return [1 + 2j, 2.5]


def _default_only(dtype: dtypes.dtype) -> bool:
    """Samples without ``dtype=`` don't depend on it: yield them for one dtype only."""
    return dtype is dtypes.float32


@samples("zeros.default", "ones.default", dtypes=ALL_DTYPES)
def sized_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    for size in SIZES:
        yield SampleInput(size, dtype=dtype)
    if _default_only(dtype):
        yield SampleInput((3,), name="default dtype")
        yield SampleInput([2, 2], dtype=None, device="cpu", name="explicit options")


@samples("empty.memory_format", dtypes=ALL_DTYPES, compare_torch=False)
def empty_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    for size in SIZES:
        yield SampleInput(size, dtype=dtype)
    yield SampleInput((2, 3), dtype=dtype, memory_format="contiguous_format")


@samples("empty_strided.default", dtypes=ALL_DTYPES, compare_torch=False)
def empty_strided_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput((2, 3), (3, 1), dtype=dtype)
    yield SampleInput((2, 3), (1, 2), dtype=dtype, name="transposed")
    yield SampleInput((2, 3), (0, 1), dtype=dtype, name="expanded")
    yield SampleInput((0, 3), (3, 1), dtype=dtype, name="empty")


@samples("full.default", dtypes=ALL_DTYPES)
def full_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    for value in _fill(dtype):
        yield SampleInput((2, 3), value, dtype=dtype)
    yield SampleInput((), _fill(dtype)[0], dtype=dtype, name="0-dim")
    yield SampleInput((0, 2), _fill(dtype)[0], dtype=dtype, name="empty")
    if _default_only(dtype):
        for value in (1, True, 1.5, 1j, -3):
            yield SampleInput((2,), value, name="inferred dtype")
        yield SampleInput((2,), -1, dtype=dtypes.uint8, name="negative wraps into uint8")
        yield SampleInput((2,), 1.75, dtype=dtypes.int64, name="float truncates")
        yield SampleInput((2,), 300, dtype=dtypes.uint8, name="overflow")
        yield SampleInput((2,), 1e40, dtype=dtypes.float32, name="overflow")
        yield SampleInput((2,), 1j, dtype=dtypes.float32, name="complex to real")
        yield SampleInput((2,), float("nan"), dtype=dtypes.int32, name="nan to int")


@samples("scalar_tensor.default", dtypes=ALL_DTYPES)
def scalar_tensor_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    for value in _fill(dtype):
        yield SampleInput(value, dtype=dtype)
    if _default_only(dtype):
        for value in (1, True, 2.5):
            yield SampleInput(value, name="default dtype")


ARANGE_DTYPES = (*INTS, *FLOATS)


@samples("arange.default", dtypes=ARANGE_DTYPES)
def arange_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(10, dtype=dtype)
    yield SampleInput(0, dtype=dtype, name="empty")
    yield SampleInput(5.5, dtype=dtype, name="float end")
    if _default_only(dtype):
        for end in (5, 5.0, 2.5, 0, -1, float("inf")):
            yield SampleInput(end, name="inferred dtype")
        yield SampleInput(3, dtype=dtypes.bool_, name="bool")
        yield SampleInput(3, dtype=dtypes.complex64, name="complex")


@samples("arange.start", dtypes=ARANGE_DTYPES)
def arange_start_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(2, 9, dtype=dtype)
    yield SampleInput(3, 3, dtype=dtype, name="empty")
    if dtype.is_signed:
        yield SampleInput(-4, 4, dtype=dtype)
    yield SampleInput(0.5, 5, dtype=dtype, name="float start")
    if _default_only(dtype):
        for start, end in ((1, 4), (1.5, 4), (-2, 3.25), (4, 1)):
            yield SampleInput(start, end, name="inferred dtype")


@samples("arange.start_step", dtypes=ARANGE_DTYPES)
def arange_step_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(0, 10, 3, dtype=dtype)
    yield SampleInput(1, 10, 1, dtype=dtype)
    if dtype.is_signed:
        yield SampleInput(10, 0, -3, dtype=dtype, name="negative step")
        yield SampleInput(0, -1.5, -0.5, dtype=dtype, name="fractional negative step")
    if dtype.category == dtypes.FLOATING:
        yield SampleInput(0, 1, 0.1, dtype=dtype)
        yield SampleInput(-1.5, 2.5, 0.5, dtype=dtype)
        yield SampleInput(1, 0, -0.3, dtype=dtype)
    if _default_only(dtype):
        for args in ((0, 10, 3), (0, 10.0, 3), (0, 1, 0.1), (1, 10, 2.5), (5, 0, -1), (0, 1, 0.3)):
            yield SampleInput(*args, name="inferred dtype")
        yield SampleInput(0, 5, 0, name="zero step")
        yield SampleInput(0, 5, -1, name="step sign")
        yield SampleInput(1, 0.5, 0.1, name="step sign")
        yield SampleInput(0, 1, 0.3, dtype=dtypes.int32, name="step truncates to 0")
        yield SampleInput(0, 1, 0.3, dtype=dtypes.int64, name="step truncates to 0")
        yield SampleInput(float("-inf"), 0, 1, name="infinite start")


@samples("linspace.default", dtypes=(*NUMERIC, *COMPLEX))
def linspace_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(0, 10, 5, dtype=dtype)
    yield SampleInput(0, 1, 1, dtype=dtype, name="one step")
    yield SampleInput(0, 1, 0, dtype=dtype, name="no steps")
    yield SampleInput(1, 100, 4, dtype=dtype)
    if dtype.is_signed:
        yield SampleInput(-3, 8, 5, dtype=dtype)
        yield SampleInput(8, -3, 6, dtype=dtype, name="decreasing")
    if dtype.category >= dtypes.FLOATING:
        yield SampleInput(0.5, 5.5, 7, dtype=dtype)
        yield SampleInput(-1.0, 1.0, 50, dtype=dtype)
    if dtype.category == dtypes.COMPLEX:
        yield SampleInput(0, 1j, 3, dtype=dtype)
    if _default_only(dtype):
        yield SampleInput(0, 10, 5, name="default dtype")
        yield SampleInput(0.0, 1.0, 11, name="default dtype")
        yield SampleInput(0, 1, -1, name="negative steps")


@samples("eye.default", dtypes=ALL_DTYPES)
def eye_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    for n in (3, 1, 0):
        yield SampleInput(n, dtype=dtype)
    if _default_only(dtype):
        yield SampleInput(2, name="default dtype")
        yield SampleInput(-1, name="negative n")


@samples("eye.m", dtypes=ALL_DTYPES)
def eye_m_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    for n, m in ((2, 4), (4, 2), (3, 0), (0, 3)):
        yield SampleInput(n, m, dtype=dtype)
    if _default_only(dtype):
        yield SampleInput(2, -1, name="negative m")


# --------------------------------------------------------------------------- random


def _gen() -> ember.Generator:
    return ember.Generator().manual_seed(1234)


@samples("rand.default", "randn.default", dtypes=ALL_DTYPES, compare_torch=False)
def rand_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    # integer and bool dtypes raise NotImplementedError, on Meta too
    for size in SIZES:
        yield SampleInput(size, dtype=dtype)
    if _default_only(dtype):
        yield SampleInput((3, 2), name="default dtype")


@samples("rand.generator", "randn.generator", dtypes=FLOAT_OR_COMPLEX, compare_torch=False)
def rand_generator_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput((2, 3), generator=_gen(), dtype=dtype)
    yield SampleInput((4,), generator=None, dtype=dtype, name="default generator")


@samples("randint.default", dtypes=ALL_DTYPES, compare_torch=False)
def randint_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(2, (3, 4), dtype=dtype)
    yield SampleInput(1, (), dtype=dtype, name="0-dim")
    yield SampleInput(10, (0,), dtype=dtype, name="empty")
    yield SampleInput(300, (2,), dtype=dtype, name="to - 1 may be out of range")
    if _default_only(dtype):
        yield SampleInput(10, (5,), name="default int64")
        yield SampleInput(0, (5,), name="empty range")


@samples("randint.generator", dtypes=NUMERIC, compare_torch=False)
def randint_generator_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(5, (2, 3), generator=_gen(), dtype=dtype)


@samples("randint.low", dtypes=ALL_DTYPES, compare_torch=False)
def randint_low_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(0, 2, (3, 4), dtype=dtype)
    yield SampleInput(-5, 5, (3,), dtype=dtype, name="from may be out of range")
    if _default_only(dtype):
        yield SampleInput(3, 10, (5,), name="default int64")
        yield SampleInput(5, 5, (5,), name="empty range")


@samples("randint.low_generator", dtypes=NUMERIC, compare_torch=False)
def randint_low_generator_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(1, 6, (2, 3), generator=_gen(), dtype=dtype)


@samples("randperm.default", dtypes=ALL_DTYPES, compare_torch=False)
def randperm_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(5, dtype=dtype)
    yield SampleInput(0, dtype=dtype, name="empty")
    yield SampleInput(300, dtype=dtype, name="n may not fit the dtype")
    if _default_only(dtype):
        yield SampleInput(7, name="default int64")
        yield SampleInput(-1, name="negative raises")


@samples("randperm.generator", dtypes=NUMERIC, compare_torch=False)
def randperm_generator_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(6, generator=_gen(), dtype=dtype)


@samples("normal.float_float", dtypes=ALL_DTYPES, compare_torch=False)
def normal_size_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(1.0, 2.0, (3, 4), dtype=dtype)
    yield SampleInput(0.0, 1.0, (), dtype=dtype, name="0-dim")
    yield SampleInput(0.0, 1.0, (0, 2), generator=_gen(), dtype=dtype, name="empty, generator")
    if _default_only(dtype):
        yield SampleInput(0.0, 1.0, [5], name="default dtype")
        yield SampleInput(0.0, -1.0, (2,), name="negative std raises")


# --------------------------------------------------------------------------- out= forms
# NOTE [factory out=] in ember/ops/native/creation.py: these take no TensorOptions; the out
# tensors (the harness builds them from the factory's result on the same arguments) give the
# dtype. Other dtypes, resizing, and the Python keywords beside out= are checked against
# PyTorch in tests/test_fidelity.py.
_ONE = (dtypes.float32,)


@samples("zeros.out", "ones.out", dtypes=_ONE)
def sized_out_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    for size in SIZES:
        yield SampleInput(size)


@samples("full.out", dtypes=_ONE)
def full_out_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput((2, 3), 2.5)
    yield SampleInput((), -1.0, name="0-dim")


@samples("arange.out", dtypes=_ONE)
def arange_out_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    for end in (10, 5.5, 0):
        yield SampleInput(end)


@samples("arange.start_out", dtypes=_ONE)
def arange_start_out_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(2, 9)
    yield SampleInput(0, 1, 0.1)
    yield SampleInput(10, 0, -3)


@samples("linspace.out", dtypes=_ONE)
def linspace_out_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(0, 10, 5)
    yield SampleInput(-1.0, 1.0, 1, name="one step")


@samples("eye.out", dtypes=_ONE)
def eye_out_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(3)
    yield SampleInput(0, name="empty")


@samples("eye.m_out", dtypes=_ONE)
def eye_m_out_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(2, 4)
    yield SampleInput(3, 0, name="empty")


@samples("empty.out", "rand.out", "randn.out", dtypes=_ONE, compare_torch=False)
def random_out_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput((2, 3))
    yield SampleInput((0,), name="empty")


@samples("rand.generator_out", "randn.generator_out", dtypes=_ONE, compare_torch=False)
def random_generator_out_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput((2, 3), generator=_gen())


@samples("randint.out", dtypes=_ONE, compare_torch=False)
def randint_out_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(5, (2, 3))


@samples("randint.generator_out", dtypes=_ONE, compare_torch=False)
def randint_generator_out_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(5, (2, 3), generator=_gen())


@samples("randint.low_out", dtypes=_ONE, compare_torch=False)
def randint_low_out_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(1, 6, (2, 3))


@samples("randint.low_generator_out", dtypes=_ONE, compare_torch=False)
def randint_low_generator_out_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(1, 6, (2, 3), generator=_gen())


# --------------------------------------------------------------------------- *_like, new_*


def like_inputs(make: Any) -> Iterator[Any]:
    """Inputs of every layout: contiguous, strided, transposed, 0-dim, empty."""
    yield make((3, 4))
    yield make((3, 4), noncontiguous=True)
    yield ember.from_numpy(np.ascontiguousarray(make((4, 3)).numpy()).T)  # transposed
    yield make(())
    yield make((0, 3))


@samples("zeros_like.default", "ones_like.default", dtypes=ALL_DTYPES)
def like_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    for x in like_inputs(make):
        yield SampleInput(x)
    yield SampleInput(make((2, 3)), dtype=dtypes.float64, name="dtype")
    yield SampleInput(make((2, 3)), dtype=dtypes.int32, name="dtype")


@samples("empty_like.default", dtypes=ALL_DTYPES, compare_torch=False)
def empty_like_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield from like_samples(make, dtype)


@samples("full_like.default", dtypes=ALL_DTYPES)
def full_like_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    for x in like_inputs(make):
        yield SampleInput(x, _fill(dtype)[0])
    for value in _fill(dtype):
        yield SampleInput(make((2, 2)), value)
    yield SampleInput(make((2, 3)), 7, dtype=dtypes.float64, name="dtype")
    yield SampleInput(make((2,)), 1e40, name="overflows unless float64/complex")


@samples("rand_like.default", "randn_like.default", dtypes=ALL_DTYPES, compare_torch=False)
def rand_like_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    for x in like_inputs(make):
        yield SampleInput(x)
    yield SampleInput(make((2, 3)), dtype=dtypes.float64, name="dtype")


@samples(
    "rand_like.generator", "randn_like.generator", dtypes=FLOAT_OR_COMPLEX, compare_torch=False
)
def rand_like_generator_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((2, 3)), generator=_gen())
    yield SampleInput(make((2, 3), noncontiguous=True), generator=None)


@samples("randint_like.default", dtypes=ALL_DTYPES, compare_torch=False)
def randint_like_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    for x in like_inputs(make):
        yield SampleInput(x, 2)
    yield SampleInput(make((2, 3)), 300, name="to - 1 may be out of range")
    yield SampleInput(make((2, 3)), 10, dtype=dtypes.float32, name="dtype")


@samples("randint_like.low_dtype", dtypes=ALL_DTYPES, compare_torch=False)
def randint_like_low_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((3, 4)), 0, 2)
    yield SampleInput(make((3,)), 4, 4, name="empty range")


@samples("randint_like.generator", dtypes=NUMERIC, compare_torch=False)
def randint_like_generator_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((3, 4)), 5, generator=_gen())


@samples("randint_like.low_generator_dtype", dtypes=NUMERIC, compare_torch=False)
def randint_like_low_generator_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((3, 4)), 1, 5, generator=_gen())


@samples("new_zeros.default", "new_ones.default", dtypes=ALL_DTYPES)
def new_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((2,)), (3, 4))
    yield SampleInput(make((2, 2), noncontiguous=True), ())
    yield SampleInput(make(()), [0, 2])
    yield SampleInput(make((2,)), (2,), dtype=dtypes.float64, name="dtype")


@samples("new_empty.default", dtypes=ALL_DTYPES, compare_torch=False)
def new_empty_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield from new_samples(make, dtype)


@samples("new_full.default", dtypes=ALL_DTYPES)
def new_full_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    for value in _fill(dtype):
        yield SampleInput(make((2,)), (3, 2), value)
    yield SampleInput(make((2,)), (2,), 5, dtype=dtypes.int16, name="dtype")


# --------------------------------------------------------------------------- errors


@errors("zeros.default")
def zeros_errors() -> Iterator[ErrorInput]:
    yield ErrorInput(SampleInput((-1, 3)), RuntimeError, "negative dimension")


@errors("full.default")
def full_errors() -> Iterator[ErrorInput]:
    yield ErrorInput(SampleInput((2,), 300, dtype=dtypes.uint8), RuntimeError, "overflow")


@errors("arange.start_step")
def arange_errors() -> Iterator[ErrorInput]:
    yield ErrorInput(SampleInput(0, 5, 0), RuntimeError, "step must be nonzero")
    yield ErrorInput(SampleInput(0, 5, -1), RuntimeError, "inconsistent with step sign")
    yield ErrorInput(SampleInput(0, float("inf"), 1), RuntimeError, "unsupported range")


@errors("rand.default")
def rand_errors() -> Iterator[ErrorInput]:
    yield ErrorInput(SampleInput((2,), dtype=dtypes.int64), NotImplementedError, "not implemented")


@errors("randint.low")
def randint_errors() -> Iterator[ErrorInput]:
    yield ErrorInput(SampleInput(5, 5, (3,)), RuntimeError, "less than 'to'")
    yield ErrorInput(SampleInput(0, 300, (3,), dtype=dtypes.uint8), RuntimeError, "out of bounds")
    yield ErrorInput(SampleInput(-1, 2, (3,), dtype=dtypes.uint8), RuntimeError, "out of bounds")


# --------------------------------------------------------------------------- logspace


@samples("logspace.default", dtypes=ALL_DTYPES)
def logspace_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    # (integers truncate, and bool has no kernel: NotImplementedError, on Meta too)
    yield SampleInput(0, 2, 5, dtype=dtype)
    yield SampleInput(-1.0, 1.5, 4, 2.0, dtype=dtype, name="base 2")
    yield SampleInput(3, 1, 3, dtype=dtype, name="descending")
    yield SampleInput(1, 2, 1, dtype=dtype, name="one step")
    yield SampleInput(1, 2, 0, dtype=dtype, name="no steps")
    if _default_only(dtype):
        yield SampleInput(0, 3, 4, name="default dtype")
        yield SampleInput(0, 3, -1, name="negative steps raise")


def _logspace_bounds(dtype: Any, tensors: tuple[bool, bool]) -> Iterator[SampleInput]:
    def bound(value: float, as_tensor: bool) -> Any:
        return ember.tensor(value, dtype=dtype) if as_tensor else value

    start, end = bound(-1.0, tensors[0]), bound(2.0, tensors[1])
    yield SampleInput(start, end, 4)
    yield SampleInput(start, end, 3, 2.0, dtype=ember.float64, name="base, dtype")
    first = start.view(1) if tensors[0] else start
    last = end if tensors[0] else end.view(1)
    yield SampleInput(first, last, 3, name="1-D bound raises")


@samples("logspace.Tensor_Tensor", dtypes=FLOATS)
def logspace_tt_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield from _logspace_bounds(dtype, (True, True))


@samples("logspace.Tensor_Scalar", dtypes=FLOATS)
def logspace_ts_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield from _logspace_bounds(dtype, (True, False))


@samples("logspace.Scalar_Tensor", dtypes=FLOATS)
def logspace_st_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield from _logspace_bounds(dtype, (False, True))


@samples("tril_indices.default", "triu_indices.default", dtypes=ALL_DTYPES)
def triangle_indices_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    # raises for every dtype but int32 and int64, as PyTorch does
    for row, col, offset in ((3, 3, 0), (3, 5, 1), (5, 3, -2), (4, 4, 9), (4, 4, -9), (0, 3, 0)):
        yield SampleInput(row, col, offset, dtype=dtype)
    if _default_only(dtype):
        yield SampleInput(3, 4, name="default dtype")
        yield SampleInput(3, 4, offset=-1, name="offset keyword")
        yield SampleInput(-1, 3, name="negative row raises")
        yield SampleInput(3, -1, name="negative col raises")


@samples("tril_indices.out", "triu_indices.out", dtypes=(dtypes.int64, dtypes.int32))
def triangle_indices_out_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(3, 4, 1)
    yield SampleInput(0, 3, name="empty")
