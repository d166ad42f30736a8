"""Sample inputs for the copies ops (see ember/testing/_internal/opinfo.py).

Ops whose errors depend on index values (``gather``, ``scatter``, ``index_select``) register
``meta_errors=False``: a Meta tensor has no values to find an out-of-range index in.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import ember
from ember import dtypes
from ember.testing._internal.opinfo import (
    ALL_DTYPES,
    ErrorInput,
    SampleInput,
    errors,
    samples,
)

I64 = dtypes.int64


def _index(values: Any, dtype: dtypes.dtype = I64) -> ember.Tensor:
    return ember.tensor(values, dtype=dtype)


@samples("clone.default", "lift_fresh_copy.default", "detach.default", "lift_fresh.default",
         "zero.default", dtypes=ALL_DTYPES)  # fmt: skip
def one_tensor_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((3, 4)))
    yield SampleInput(make(()), name="0-dim")
    yield SampleInput(make((0, 3)), name="empty")
    yield SampleInput(make((3, 4), noncontiguous=True), name="noncontiguous")


@samples("contiguous.default", dtypes=ALL_DTYPES)
def contiguous_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((3, 4)), name="already contiguous")
    yield SampleInput(make((3, 4), noncontiguous=True), name="noncontiguous")
    yield SampleInput(make(()), name="0-dim")


@samples("_to_copy.default", dtypes=ALL_DTYPES)
def to_copy_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((3, 4)))
    for target in ALL_DTYPES:
        if not (dtype.is_complex and not target.is_complex and target is not dtypes.bool_):
            yield SampleInput(make((3, 4)), dtype=target, name=f"to {target.name}")
    yield SampleInput(make((3, 4), noncontiguous=True), dtype=dtypes.float64, name="nc")
    yield SampleInput(make(()), dtype=dtypes.int64, name="0-dim")
    yield SampleInput(make((0, 2)), device=ember.device("cpu"), name="empty, device")


@samples("_to_copy.out", dtypes=ALL_DTYPES)
def to_copy_out_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((3, 4)))
    yield SampleInput(make((3, 4), noncontiguous=True), non_blocking=True, name="nc")
    yield SampleInput(make(()), name="0-dim")


@samples("to.dtype", dtypes=ALL_DTYPES)
def to_dtype_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((3, 4)), dtype, name="same dtype: self")
    yield SampleInput(make((3, 4)), dtype, False, True, name="copy=True")
    yield SampleInput(make((3, 4)), dtypes.float64 if dtype.is_floating_point else dtypes.int64)
    yield SampleInput(make((2, 3), noncontiguous=True), dtypes.bool_, name="to bool, nc")


@samples("to.device", dtypes=ALL_DTYPES)
def to_device_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    cpu = ember.device("cpu")
    yield SampleInput(make((3, 4)), cpu, dtype, name="nothing changes")
    yield SampleInput(make((3, 4)), cpu, dtypes.float64 if dtype.is_complex is False else dtype)
    yield SampleInput(make((3, 4)), cpu, dtype, copy=True, name="copy=True")


@samples("to.other", dtypes=ALL_DTYPES)
def to_other_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((3, 4)), make((2,)), name="same: self")
    if not dtype.is_complex:
        yield SampleInput(make((3, 4)), make((2,), dtypes.int16), name="to int16")
    yield SampleInput(make((3, 4), noncontiguous=True), make((1,), dtypes.complex128))


@samples("to.dtype_layout", dtypes=ALL_DTYPES)
def to_dtype_layout_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((3, 4)), name="no arguments: self")
    yield SampleInput(make((3, 4)), dtype=dtypes.complex64, device=ember.device("cpu"))
    yield SampleInput(make((3, 4)), copy=True, name="copy=True")


@samples("copy.default", dtypes=ALL_DTYPES)
def copy_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((3, 4)), make((3, 4)))
    yield SampleInput(make((3, 4)), make((4,)), name="broadcast src")
    yield SampleInput(make((3, 4), noncontiguous=True), make((3, 1)), name="nc self")
    yield SampleInput(make((3, 4)), make((3, 4), noncontiguous=True), True, name="nc src")
    yield SampleInput(make(()), make(()), name="0-dim")
    yield SampleInput(make((3,)), make((2, 3)), name="src does not broadcast to self")
    for other in (dtypes.bool_, dtypes.uint8, dtypes.int32, dtypes.float64):
        yield SampleInput(make((2, 3)), make((2, 3), other), name=f"from {other.name}")


@samples("fill.Scalar", dtypes=ALL_DTYPES)
def fill_scalar_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((3, 4)), 1)
    yield SampleInput(make((3, 4), noncontiguous=True), True, name="bool value, nc")
    yield SampleInput(make(()), 2, name="0-dim")
    yield SampleInput(make((0, 3)), 1, name="empty")
    yield SampleInput(make((2,)), 2.5, name="float value")
    yield SampleInput(make((2,)), 1000, name="overflows int8")
    yield SampleInput(make((2,)), -1, name="negative into uint8")
    yield SampleInput(make((2,)), 1e10, name="overflows float16")
    yield SampleInput(make((2,)), 2 + 3j, name="complex value")


@samples("fill.Tensor", dtypes=ALL_DTYPES)
def fill_tensor_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((3, 4)), make(()))
    yield SampleInput(make((3, 4), noncontiguous=True), make((), dtypes.float64), name="nc")
    yield SampleInput(make((3,)), make((1,)), name="1-d value")


@samples("masked_fill.Scalar", dtypes=ALL_DTYPES)
def masked_fill_scalar_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    b = dtypes.bool_
    yield SampleInput(make((3, 4)), make((3, 4), b), 1)
    yield SampleInput(make((3, 4)), make((4,), b), 0, name="broadcast mask")
    yield SampleInput(make((4,)), make((3, 4), b), 2, name="mask broadcasts self")
    yield SampleInput(make((3, 4), noncontiguous=True), make((3, 1), b), True, name="nc")
    yield SampleInput(make(()), make((), b), 1, name="0-dim")
    yield SampleInput(make((3,)), make((3,), dtypes.int64), 1, name="int mask")
    yield SampleInput(make((3,)), make((3,), b), 1000, name="overflows int8")
    yield SampleInput(make((3,)), make((3,), b), 2.5, name="float value")


@samples("masked_fill.Tensor", dtypes=ALL_DTYPES)
def masked_fill_tensor_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    b = dtypes.bool_
    yield SampleInput(make((3, 4)), make((3, 4), b), make(()))
    yield SampleInput(make((3, 4), noncontiguous=True), make((4,), b), make(()), name="nc")
    yield SampleInput(make((3,)), make((3,), b), make((1,)), name="1-d value")


def _perm_index(n: int, rows: int) -> ember.Tensor:
    """A (rows, n) int64 index whose rows are distinct permutations of range(n)."""
    return _index([[(i + r) % n for i in range(n)] for r in range(rows)])


@samples("scatter.src", "scatter_add.default", dtypes=ALL_DTYPES, meta_errors=False)
def scatter_src_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((3, 4)), 1, _perm_index(4, 3), make((3, 4)))
    yield SampleInput(make((3, 4)), 0, _index([[2, 0, 1, 2]]), make((2, 5)), name="smaller")
    yield SampleInput(make((3, 4)), -1, _index([[3], [0]]), make((2, 1)), name="negative dim")
    yield SampleInput(make((3, 4), noncontiguous=True), 1, _perm_index(4, 2),
                      make((2, 4), noncontiguous=True), name="nc")  # fmt: skip
    yield SampleInput(make(()), 0, _index(0), make(()), name="0-dim")
    yield SampleInput(make((3,)), 0, _index([0, 1], dtypes.int32), make((2,)), name="int32")
    yield SampleInput(make((3,)), 0, _index([5]), make((1,)), name="out of range")
    yield SampleInput(make((3,)), 0, _index([-1]), make((1,)), name="negative index")
    yield SampleInput(make((3, 4)), 1, _index([[0, 1, 2]]), make((3, 2)), name="index > src")
    yield SampleInput(make((3,)), 0, _index([0]), make((1,), dtypes.float64), name="src dtype")
    yield SampleInput(make((3,)), 0, _index([0.0], dtypes.float32), make((1,)), name="idx dtype")
    yield SampleInput(make((3, 4)), 0, _index([[]]), make((1, 1)), name="empty index")


@samples("scatter.reduce", dtypes=ALL_DTYPES, meta_errors=False)
def scatter_reduce_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    for s in scatter_src_samples(make, dtype):
        if s.name == "":
            yield SampleInput(*s.args, reduce="add", name="add")
            yield SampleInput(*s.args, reduce="multiply", name="multiply")
            yield SampleInput(*s.args, reduce="max", name="bad reduce")
        else:
            yield SampleInput(*s.args, reduce="add", name=s.name)


@samples("scatter.value", dtypes=ALL_DTYPES, meta_errors=False)
def scatter_value_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((3, 4)), 1, _index([[0, 0, 1], [3, 2, 2]]), 2)
    yield SampleInput(make((3, 4), noncontiguous=True), 0, _index([[2, 0, 1, 2]]), 1.5, name="nc")
    yield SampleInput(make(()), 0, _index(0), 1, name="0-dim")
    yield SampleInput(make((3,)), 0, _index([3]), 1, name="out of range")
    yield SampleInput(make((3,)), 0, _index([0]), 1000, name="overflows int8")


@samples("scatter.value_reduce", dtypes=ALL_DTYPES, meta_errors=False)
def scatter_value_reduce_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    for s in scatter_value_samples(make, dtype):
        yield SampleInput(*s.args, reduce="add", name=s.name + " add")
        yield SampleInput(*s.args, reduce="multiply", name=s.name + " multiply")


@samples("gather.default", dtypes=ALL_DTYPES, meta_errors=False)
def gather_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((3, 4)), 1, _index([[0, 0, 3], [1, 2, 2], [3, 3, 3]]))
    yield SampleInput(make((3, 4)), 0, _index([[2, 0, 1, 2]]), name="dim 0")
    yield SampleInput(make((3, 4)), 1, _index([[0, 1, 2, 3, 0, 1]]), name="index longer on dim")
    yield SampleInput(make((3, 4), noncontiguous=True), -1, _index([[1], [0]]), name="nc, -1")
    yield SampleInput(make((3, 4)), 1, _index([[0, 1]]), sparse_grad=False, name="kwarg")
    yield SampleInput(make(()), 0, _index(0), name="0-dim")
    yield SampleInput(make(()), 0, _index([0, 0]), name="0-dim self, 1-d index")
    yield SampleInput(make((3,)), 0, _index([0, 2], dtypes.int32), name="int32 index")
    yield SampleInput(make((3,)), 0, _index([0], dtypes.int16), name="int16 index")
    yield SampleInput(make((3,)), 0, _index([5]), name="out of range")
    yield SampleInput(make((3,)), 0, _index([-1]), name="negative")
    yield SampleInput(make((2, 3)), 1, _index([[0], [1], [1]]), name="index too big")
    yield SampleInput(make((2, 3)), 1, _index([0, 1]), name="rank mismatch")
    yield SampleInput(make((2, 3)), 0, _index([[]]), name="empty index")


@samples("index_select.default", dtypes=ALL_DTYPES, meta_errors=False)
def index_select_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((3, 4)), 1, _index([3, 0, 0]))
    yield SampleInput(make((3, 4), noncontiguous=True), 0, _index([2, 1]), name="nc")
    yield SampleInput(make((3, 4)), -1, _index(2), name="0-dim index")
    yield SampleInput(make((3, 4)), 0, _index([], I64), name="empty index")
    yield SampleInput(make(()), 0, _index([0]), name="0-dim self")
    yield SampleInput(make(()), 0, _index([0, 0]), name="0-dim self, 2 indices")
    yield SampleInput(make((3,)), 0, _index([1], dtypes.int32), name="int32")
    yield SampleInput(make((3,)), 0, _index([1.0], dtypes.float32), name="float index")
    yield SampleInput(make((3,)), 0, _index([[1]]), name="2-d index")
    yield SampleInput(make((3,)), 0, _index([3]), name="out of range")
    yield SampleInput(make((3,)), 0, _index([-1]), name="negative")


@samples("cat.default", dtypes=ALL_DTYPES)
def cat_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput([make((2, 3)), make((4, 3))])
    yield SampleInput([make((2, 3)), make((2, 1)), make((2, 0))], 1, name="dim 1, empty part")
    yield SampleInput([make((2, 3)), make((2, 2), noncontiguous=True)], -1, name="nc, -1")
    yield SampleInput([make((2, 3)), make((0,))], 1, name="legacy empty skipped")
    yield SampleInput([make((0,)), make((0,), dtypes.int64)], 3, name="only legacy empties")
    yield SampleInput([make((2, 3))], dim=1, name="one tensor, kwarg")
    for other in (dtypes.bool_, dtypes.uint8, dtypes.int16, dtypes.float16, dtypes.complex64):
        yield SampleInput([make((2, 3)), make((1, 3), other)], name=f"with {other.name}")
    yield SampleInput([make((2, 3)), make((2, 4))], name="size mismatch")
    yield SampleInput([make((2, 3)), make((3,))], name="rank mismatch")
    yield SampleInput([make(()), make((2,))], name="0-dim")
    yield SampleInput([make((2, 3)), make((2, 3))], 2, name="dim out of range")


@samples("stack.default", dtypes=ALL_DTYPES)
def stack_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput([make((2, 3)), make((2, 3))])
    yield SampleInput([make((2, 3)), make((2, 3), noncontiguous=True)], -1, name="nc, -1")
    yield SampleInput([make(()), make(())], name="0-dim")
    yield SampleInput([make((2,)), make((2,), dtypes.int64)], 1, name="promotes")
    yield SampleInput([make((2, 3)), make((2, 4))], name="size mismatch")


@samples("fliplr.default", "flipud.default", dtypes=ALL_DTYPES)
def flip_lr_ud_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((3, 4)))
    yield SampleInput(make((2, 3, 4), noncontiguous=True), name="nc")
    yield SampleInput(make((4,)), name="1-D")
    yield SampleInput(make(()), name="0-dim raises")


@samples("narrow_copy.default", dtypes=ALL_DTYPES)
def narrow_copy_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((4, 3)), 0, 1, 2)
    yield SampleInput(make((4, 3), noncontiguous=True), -1, 1, 2, name="nc last dim")
    yield SampleInput(make((4, 3)), 1, -2, 2, name="negative start")
    yield SampleInput(make((4, 3)), 0, 3, 2, name="past the end raises")


# NOTE [scatter into a view] (ember/ops/native/copies_composite.py)
@samples("slice_scatter.default", dtypes=ALL_DTYPES)
def slice_scatter_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((4, 3)), make((2, 3)), 0, 1, 3)
    yield SampleInput(make((4, 3)), make((4, 1)), 1, None, None, 3, name="step")
    yield SampleInput(make((4, 3)), make((4, 3)), name="defaults")
    yield SampleInput(make((3, 4), noncontiguous=True), make((3, 2)), -1, 2, name="nc")
    yield SampleInput(make((4, 3)), make((2, 3), dtype=dtypes.float64), 0, 2, name="src cast")
    yield SampleInput(make((4, 3)), make((2, 2)), 0, 1, 3, name="wrong src size raises")


@samples("select_scatter.default", dtypes=ALL_DTYPES)
def select_scatter_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((4, 3)), make((4,)), 1, 0)
    yield SampleInput(make((4, 3)), make((3,)), 0, -1, name="negative index")
    yield SampleInput(make((2, 3, 4), noncontiguous=True), make((2, 4)), 1, 2, name="nc")
    yield SampleInput(make((4, 3)), make((3,)), 0, 4, name="index out of range raises")


@samples("diagonal_scatter.default", dtypes=ALL_DTYPES)
def diagonal_scatter_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((3, 3)), make((3,)))
    yield SampleInput(make((4, 3)), make((2,)), 1, name="offset")
    yield SampleInput(make((2, 3, 4)), make((3, 2)), -1, 0, 2, name="dims")
    yield SampleInput(make((4, 3)), make((3,)), 1, name="wrong src size raises")


@samples("as_strided_scatter.default", dtypes=ALL_DTYPES)
def as_strided_scatter_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((4, 3)), make((2, 2)), (2, 2), (3, 1), 1)
    yield SampleInput(make((4, 3)), make((2, 3)), (2, 3), (1, 2), name="transposed strides")
    yield SampleInput(make((3, 4), noncontiguous=True), make((3,)), (3,), (4,), name="nc")
    yield SampleInput(make((4, 3)), make((3,)), (2, 2), (3, 1), name="wrong src size raises")


@samples("flip.default", dtypes=ALL_DTYPES)
def flip_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((3, 4)), [0])
    yield SampleInput(make((2, 3, 4)), [-1, 0], name="two dims")
    yield SampleInput(make((3, 4), noncontiguous=True), [1], name="nc")
    yield SampleInput(make((3, 4)), [], name="no dims")
    yield SampleInput(make(()), [0], name="0-dim")
    yield SampleInput(make((0, 3)), [0, 1], name="empty")
    yield SampleInput(make((3, 4)), [0, 0], name="repeated dim")
    yield SampleInput(make((3, 4)), [2], name="dim out of range")


@samples("roll.default", dtypes=ALL_DTYPES)
def roll_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((3, 4)), [1], name="flattened")
    yield SampleInput(make((3, 4)), [1, -2], [0, 1], name="two dims")
    yield SampleInput(make((3, 4), noncontiguous=True), [5], [1], name="nc")
    yield SampleInput(make((3, 4)), [-1], dims=[-1], name="negative, kwarg")
    yield SampleInput(make(()), [1], name="0-dim")
    yield SampleInput(make((0, 3)), [1], [1], name="empty")
    yield SampleInput(make((3, 4)), [1, 2], name="shifts without dims")
    yield SampleInput(make((3, 4)), [1, 2], [0], name="misaligned")


@samples("repeat.default", dtypes=ALL_DTYPES)
def repeat_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((2, 3)), [2, 3])
    yield SampleInput(make((2, 3)), [2, 1, 2], name="more dims")
    yield SampleInput(make((2, 3), noncontiguous=True), [1, 2], name="nc")
    yield SampleInput(make(()), [], name="0-dim, no repeats")
    yield SampleInput(make(()), [3], name="0-dim")
    yield SampleInput(make((2, 3)), [0, 2], name="zero repeat")
    yield SampleInput(make((2, 3)), [2], name="too few repeats")
    yield SampleInput(make((2, 3)), [2, -1], name="negative")


@samples("tile.default", dtypes=ALL_DTYPES)
def tile_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((2, 3)), [2, 3])
    yield SampleInput(make((2, 3)), [2], name="fewer dims: leading 1s")
    yield SampleInput(make((2, 3), noncontiguous=True), [2, 1, 2], name="more dims, nc")
    yield SampleInput(make(()), [], name="0-dim, no dims")
    yield SampleInput(make((3,)), [], name="no dims: a copy")
    yield SampleInput(make((2, 3)), [0, 2], name="zero")
    yield SampleInput(make((2, 3)), [2, -1], name="negative raises")


@samples("fill_diagonal_.default", dtypes=ALL_DTYPES)
def fill_diagonal_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((3, 3)), 1)
    yield SampleInput(make((2, 4)), 0, name="wide")
    yield SampleInput(make((7, 3)), 1, True, name="tall, wrap")
    yield SampleInput(make((7, 3)), 1, name="tall, no wrap")
    yield SampleInput(make((3, 3, 3)), 1, name="3-D")
    yield SampleInput(make((3,)), 1, name="1-D raises")
    yield SampleInput(make((2, 3, 3)), 1, name="unequal dims raise")


@samples("tril.default", "triu.default", dtypes=ALL_DTYPES)
def tri_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((4, 4)))
    yield SampleInput(make((3, 5)), 1, name="diagonal 1")
    yield SampleInput(make((2, 3, 4)), -1, name="batched, diagonal -1")
    yield SampleInput(make((4, 3), noncontiguous=True), diagonal=10, name="nc, kwarg")
    yield SampleInput(make((0, 3)), name="empty")
    yield SampleInput(make((3,)), name="1-d")


@samples("nonzero.default", "nonzero_numpy.default", "where.default", dtypes=ALL_DTYPES)
def nonzero_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((3, 4), low=-1, high=2))
    yield SampleInput(make((3, 4), noncontiguous=True, low=-1, high=2), name="nc")
    yield SampleInput(make((), low=1, high=2), name="0-dim")
    yield SampleInput(make((0, 3)), name="empty")
    yield SampleInput(make((2, 1, 3), low=0, high=1), name="all zero")


@errors("cat.default")
def cat_errors() -> Iterator[ErrorInput]:
    yield ErrorInput(SampleInput([]), ValueError, "non-empty")
    a = ember.zeros(2, 3)
    yield ErrorInput(SampleInput([a, ember.zeros(2, 4)]), RuntimeError, "dimension 0")


@errors("copy_.default")
def copy_errors() -> Iterator[ErrorInput]:
    yield ErrorInput(SampleInput(ember.zeros(3), ember.zeros(2, 3)), RuntimeError, "broadcast")


# The harness hands PyTorch every tensor as an ``as_strided`` view, and PyTorch refuses to
# detach views in place; tests/test_copies.py compares detach_ with PyTorch instead.
samples("detach_.default", dtypes=ALL_DTYPES, compare_torch=False)(one_tensor_samples)


@samples("set_.source_Tensor", dtypes=ALL_DTYPES)
def set_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((2,)), make((3, 2)))
    yield SampleInput(make((3, 4)), make((3, 4), noncontiguous=True), name="noncontiguous")
    yield SampleInput(make(()), make((0, 3)), name="0-dim to empty")


@samples("set_.default", dtypes=ALL_DTYPES)
def set_empty_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((2, 3)))
    yield SampleInput(make(()), name="0-dim")


@samples("set_.source_Tensor_storage_offset", dtypes=ALL_DTYPES)
def set_offset_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((2,)), make((3, 4)), 1, [2, 2])
    yield SampleInput(make((2,)), make((3, 4)), 2, [2, 3], [1, 2], name="strided")
    yield SampleInput(make((2,)), make((6,)), 0, [0], name="empty")


# A storage argument is no tensor the harness converts (to PyTorch, Meta, Lazy):
# tests/test_set_.py compares the storage forms with PyTorch instead.
@samples("set_.source_Storage", "set_.source_Storage_storage_offset", dtypes=ALL_DTYPES,
         compare_torch=False)  # fmt: skip
def set_storage_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    storage = make((3, 4)).untyped_storage()
    yield SampleInput(make((2,)), storage, 1, [2, 2])


# --------------------------------------------------------------------------- joins, grids,
# diagonals, rotations, repeats, differences


@samples("concat.default", "concatenate.default", dtypes=ALL_DTYPES)
def concat_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput([make((2, 3)), make((4, 3))])
    yield SampleInput([make((2, 3)), make((2, 2), noncontiguous=True)], -1, name="nc, -1")
    yield SampleInput([make((2, 3)), make((1, 3), dtypes.float64)], name="promotes")
    yield SampleInput([make((2, 3)), make((2, 4))], name="size mismatch")


def _stack_inputs(make: Any) -> Iterator[tuple[list[Any], str]]:
    yield [make((3,)), make((2,))], "1-D"
    yield [make((2, 3)), make((2, 1), noncontiguous=True)], "2-D"
    yield [make((2, 3)), make((3,))], "mixed ranks"
    yield [make(()), make(())], "0-dim"
    yield [make(()), make((2,))], "0-dim and 1-D"
    yield [make((2, 2, 3)), make((2, 2, 1))], "3-D"
    yield [make((2,)), make((2,), dtypes.float64)], "promotes"
    yield [make((0,)), make((3,))], "empty"
    yield [], "no tensors raise"


@samples("hstack.default", "vstack.default", "dstack.default", "column_stack.default",
         "row_stack.default", dtypes=ALL_DTYPES)  # fmt: skip
def stack_helper_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    for tensors, name in _stack_inputs(make):
        yield SampleInput(tensors, name=name)


@samples("block_diag.default", dtypes=ALL_DTYPES)
def block_diag_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput([make((2, 3)), make((1, 2))])
    yield SampleInput([make(()), make((3,)), make((2, 2), noncontiguous=True)], name="ranks 0-2")
    yield SampleInput([make((2, 3)), make((2, 0)), make((0, 2))], name="empty blocks")
    yield SampleInput([make((2,)), make((1, 1), dtypes.float64)], name="promotes")
    yield SampleInput([make((2, 2))], name="one")
    yield SampleInput([make((2, 2, 2))], name="3-D raises")


@samples("cartesian_prod.default", dtypes=ALL_DTYPES)
def cartesian_prod_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput([make((3,)), make((2,))])
    yield SampleInput([make((2,)), make((3,), noncontiguous=True), make((2,))], name="three")
    yield SampleInput([make((4,))], name="one: itself")
    yield SampleInput([make((2,)), make((0,))], name="empty")
    yield SampleInput([make((2, 2))], name="2-D raises")
    yield SampleInput([make((2,)), make((2,), dtypes.float64)], name="dtypes differ raise")


@samples("combinations.default", dtypes=ALL_DTYPES)
def combinations_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    x = make((4,))
    yield SampleInput(x)
    yield SampleInput(x, 3)
    yield SampleInput(x, 2, True, name="with replacement")
    yield SampleInput(x, r=3, with_replacement=True, name="kwargs")
    yield SampleInput(make((5,), noncontiguous=True), 1, name="r=1, nc")
    yield SampleInput(x, 5, name="r > n: empty")
    yield SampleInput(make((0,)), 2, name="empty input")
    yield SampleInput(make((3, 1)), name="2-D raises")
    yield SampleInput(x, -1, name="negative r raises")


@samples("meshgrid.indexing", dtypes=ALL_DTYPES)
def meshgrid_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    for indexing in ("ij", "xy"):
        yield SampleInput([make((3,)), make((2,))], indexing=indexing)
        yield SampleInput([make((2,)), make(()), make((4,), noncontiguous=True)],
                          indexing=indexing, name="three, 0-dim")  # fmt: skip
        yield SampleInput([make((3,))], indexing=indexing, name="one")
        yield SampleInput([make((0,)), make((2,))], indexing=indexing, name="empty")
    yield SampleInput([make((2, 2))], indexing="ij", name="2-D raises")
    yield SampleInput([make((2,))], indexing="ab", name="bad indexing raises")


@samples("meshgrid.default", dtypes=ALL_DTYPES)
def meshgrid_default_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput([make((3,)), make((2,))])


@samples("diag.default", dtypes=ALL_DTYPES)
def diag_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((3,)))
    yield SampleInput(make((3,)), 1, name="above")
    yield SampleInput(make((3,), noncontiguous=True), -2, name="below, nc")
    yield SampleInput(make((3, 4)))
    yield SampleInput(make((3, 4)), 2, name="2-D above")
    yield SampleInput(make((3, 4)), diagonal=-1, name="2-D below")
    yield SampleInput(make((3, 4)), 5, name="past the corner: empty")
    yield SampleInput(make((0,)), name="empty")
    yield SampleInput(make(()), name="0-dim raises")
    yield SampleInput(make((2, 2, 2)), name="3-D raises")


@samples("diag_embed.default", dtypes=ALL_DTYPES)
def diag_embed_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((3,)))
    yield SampleInput(make((2, 3)), 1)
    yield SampleInput(make((2, 3), noncontiguous=True), -1, 0, 2, name="dims 0, 2")
    yield SampleInput(make((2, 3)), offset=2, dim1=-1, dim2=0, name="dims swapped")
    yield SampleInput(make((2, 0)), name="empty")
    yield SampleInput(make(()), name="0-dim")
    yield SampleInput(make((3,)), 0, 0, 0, name="same dims raise")
    yield SampleInput(make((3,)), 0, 0, 3, name="dim out of range")


@samples("rot90.default", dtypes=ALL_DTYPES)
def rot90_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    x = make((2, 3))
    for k in (0, 1, 2, 3, -1, 5):
        yield SampleInput(x, k, name=f"k={k}")
    yield SampleInput(make((2, 3, 4), noncontiguous=True), 1, [2, 0], name="3-D, dims 2, 0")
    yield SampleInput(make((2, 3, 4)), -3, [-1, 1], name="negative dims")
    yield SampleInput(make((0, 3)), name="empty")
    yield SampleInput(make((3,)), name="1-D raises")
    yield SampleInput(x, 1, [0, 0], name="same dims raise")
    yield SampleInput(x, 1, [0, -2], name="same dim, wrapped, raises")
    yield SampleInput(x, 1, [0, 1, 2], name="three dims raise")
    yield SampleInput(x, 1, [0, 2], name="dim out of range")


@samples("repeat_interleave.Tensor", dtypes=(dtypes.int64, dtypes.int32, dtypes.float32))
def repeat_interleave_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    # (output_size= gives Meta a shape: tests/test_tensor_api.py checks it)
    yield SampleInput(make((4,), low=0, high=4))
    yield SampleInput(make((3,), low=0, high=3, noncontiguous=True), name="nc")
    yield SampleInput(make((0,)), name="empty")
    yield SampleInput(make((2, 2), low=0, high=3), name="2-D raises")
    if dtype is dtypes.int64:
        yield SampleInput(ember.tensor([1, -1]), name="negative raises")


# (output_size= gives Meta a shape: tests/test_tensor_api.py checks it)
@samples("repeat_interleave.self_Tensor", dtypes=ALL_DTYPES)
def repeat_interleave_self_tensor_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    x = make((2, 3))
    yield SampleInput(x, _index([1, 0, 2]), 1)
    yield SampleInput(x, _index([3, 1]), 0, name="dim 0")
    yield SampleInput(x, _index(2), name="0-dim repeats, flattened")
    yield SampleInput(x, _index([2]), -1, name="one repeat, dim -1")
    yield SampleInput(x, _index([1, 2, 0, 1, 1, 0]), name="flattened")
    yield SampleInput(make((2, 3), noncontiguous=True), _index([2, 2], dtypes.int32), 0, name="nc")
    yield SampleInput(make(()), _index(3), name="0-dim self")
    yield SampleInput(x, _index([1, 2]), 1, name="length mismatch raises")
    yield SampleInput(x, _index([[1, 2]]), 0, name="2-D repeats raise")


@samples("repeat_interleave.self_int", dtypes=ALL_DTYPES)
def repeat_interleave_self_int_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    x = make((2, 3))
    yield SampleInput(x, 2)
    yield SampleInput(x, 3, 1)
    yield SampleInput(make((2, 3), noncontiguous=True), 2, -2, name="nc, -2")
    yield SampleInput(x, 0, 0, name="zero repeats")
    yield SampleInput(x, 2, 1, output_size=6, name="output_size")
    yield SampleInput(make(()), 3, name="0-dim")
    yield SampleInput(x, -1, name="negative raises")
    yield SampleInput(x, 2, 1, output_size=5, name="wrong output_size raises")


@samples("diff.default", dtypes=ALL_DTYPES)
def diff_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    x = make((3, 4))
    yield SampleInput(x)
    yield SampleInput(x, 2, 0, name="n=2, dim 0")
    yield SampleInput(x, 1, 1, make((3, 2)), make((3, 1)), name="prepend and append")
    yield SampleInput(x, 1, 0, append=make((2, 4), noncontiguous=True), name="append only, nc")
    yield SampleInput(x, 0, name="n=0: a copy")
    yield SampleInput(x, 6, name="n past the size: empty")
    yield SampleInput(make((0, 3)), 1, 0, name="empty")
    yield SampleInput(x, 1, 1, make((3,)), name="prepend rank mismatch raises")
    yield SampleInput(x, 1, 1, make((2, 1)), name="prepend shape mismatch raises")
    yield SampleInput(make(()), name="0-dim raises")
    yield SampleInput(x, -1, name="negative n raises")


@samples("diagflat.default", dtypes=ALL_DTYPES)
def diagflat_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((3,)))
    yield SampleInput(make((2, 2)), 1)
    yield SampleInput(make((2, 3), noncontiguous=True), -2)
    yield SampleInput(make(()), offset=0)
    yield SampleInput(make((0,)), 1, name="empty")


@samples("argwhere.default", dtypes=ALL_DTYPES)
def argwhere_samples(make: Any, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(make((3, 4), low=-1, high=2))
    yield SampleInput(make((5,), low=-1, high=2))
    yield SampleInput(make(()))
    yield SampleInput(make((0, 3)))
    yield SampleInput(make((3, 4), noncontiguous=True, low=-1, high=2))
