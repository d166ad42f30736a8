"""Memory formats (``ember.contiguous_format``, ``ember.channels_last``, ...) and the strides
each one gives a tensor of a given shape.

>>> ember.empty(2, 3, 4, 5, memory_format=ember.channels_last).stride()
(60, 1, 15, 3)

# NOTE [memory formats]
A ``MemoryFormat`` argument is one of the ``memory_format`` objects below, or its name as a
string (schema defaults parse to the string ``"contiguous_format"``). ``None`` means
``preserve_format`` for ops whose schema says ``MemoryFormat?``.

# NOTE [layout of new tensors]
``clone``, ``_to_copy``, ``*_like`` and the other ops that copy one tensor lay the result out
as PyTorch's ``preserve_format`` does: a tensor whose elements are dense and non-overlapping
keeps its exact strides (a transposed tensor stays transposed); any other gets dense strides
in the order of its own (``infer_dense_strides``). ``contiguous_format`` gives row-major
strides and ``channels_last`` (rank 4) / ``channels_last_3d`` (rank 5) put the channel dim
innermost.

# NOTE [pointwise result layout]
A pointwise op's result is laid out as PyTorch's TensorIterator lays it out, on the CPU and
Meta kernels alike (``pointwise_strides``). When every tensor operand has the result's shape
(no Python number standing for one), row-major operands give a row-major result, 4-d
channels-last ones a channels-last result and operands with one dense layout keep it.
Otherwise the dims are ordered by the operands' strides: an insertion sort from the last dim
inward, where the first operand (in argument order) whose strides differ for two dims
decides, broadcast dims (stride 0) have no say, and equal strides put the smaller dim inner;
the result is dense in that order (row-major if that is the dims' own order). So
``a.t() + b`` is laid out like ``a.t()`` and ``b + a.t()`` like ``b``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ember._named import NamedConstant
from ember._shape_only import contiguous_strides

Shape = tuple[int, ...]


class memory_format(NamedConstant):  # noqa: N801 - PyTorch's name
    """How a new tensor lays out its elements, e.g. ``ember.contiguous_format``.

    >>> ember.channels_last
    ember.channels_last
    """

    __slots__ = ()
    __module__ = "ember"  # printed as PyTorch prints its own: <class 'ember.memory_format'>


contiguous_format = memory_format("contiguous_format")
preserve_format = memory_format("preserve_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")
MEMORY_FORMATS = {m.name: m for m in (contiguous_format, preserve_format, channels_last,
                                      channels_last_3d)}  # fmt: skip


def format_name(mf: Any, op: str) -> str:
    """The name of a ``MemoryFormat`` argument (NOTE [memory formats]); None is preserve."""
    if mf is None:
        return "preserve_format"
    name = mf.name if isinstance(mf, memory_format) else mf
    if name not in MEMORY_FORMATS:
        raise TypeError(
            f"{op}: memory_format must be one of {', '.join(MEMORY_FORMATS)}, got {mf!r}"
        )
    return name  # type: ignore[no-any-return]


def is_non_overlapping_and_dense(shape: Shape, strides: Shape) -> bool:
    """Whether the elements fill a block of memory exactly once, in some dim order."""
    if len(shape) == 1:
        return shape[0] < 2 or strides[0] == 1
    order = sorted(
        (i for i in range(len(shape)) if shape[i] >= 2), key=lambda i: strides[i]
    )  # dims of size < 2 do not matter
    expected = 1
    for i in order:
        if strides[i] != expected:
            return False
        expected *= shape[i]
    return True


def strides_in_order(
    shape: Sequence[int], should_swap: Callable[[int, int], int], floor: int = 0
) -> Shape:
    """Dense strides for the dim order PyTorch's insertion sort finds (TensorIterator's
    ``reorder_dimensions``, ``infer_dense_strides``): from the last dim inward, dim ``b``
    moves inside ``a`` while ``should_swap(a, b)`` is positive and stops at a negative
    answer. Sizes count at least ``floor`` in the products."""
    n = len(shape)
    perm = list(range(n - 1, -1, -1))  # perm[0]: the innermost dimension
    for i in range(1, n):
        d1 = i
        for d0 in range(i - 1, -1, -1):
            c = should_swap(perm[d0], perm[d1])
            if c > 0:
                perm[d0], perm[d1] = perm[d1], perm[d0]
                d1 = d0
            elif c < 0:
                break
    out = [0] * n
    acc = 1
    for d in perm:
        out[d] = acc
        acc *= max(shape[d], floor)
    return tuple(out)


def infer_dense_strides(shape: Shape, strides: Shape) -> Shape:
    """Dense strides that keep the dim order of ``strides`` (size-0/1 and 0-stride dims stay
    where they are), as PyTorch's ``infer_dense_strides``."""

    def should_swap(a: int, b: int) -> int:
        sa, sb = strides[a], strides[b]
        if sa == 0 or sb == 0:
            return 0
        if sa != sb:
            return -1 if sa < sb else 1
        return 1 if shape[a] > shape[b] else 0

    return strides_in_order(shape, should_swap, floor=1)


def channels_last_strides(shape: Shape) -> Shape:
    """Strides with the channel dim (1) innermost: NHWC for rank 4, NDHWC for rank 5."""
    order = [1, *range(len(shape) - 1, 1, -1), 0]  # innermost first
    out = [0] * len(shape)
    acc = 1
    for d in order:
        out[d] = acc
        acc *= shape[d]  # (no max(size, 1) here, unlike row-major strides: PyTorch's)
    return tuple(out)


def _check_rank(shape: Shape, name: str, op: str) -> None:
    rank = 4 if name == "channels_last" else 5
    if len(shape) != rank:
        raise RuntimeError(f"{op}: required rank {rank} tensor to use {name} format")


def format_strides(shape: Shape, name: str, op: str) -> Shape:
    """The strides ``contiguous_format``/``channels_last``/``channels_last_3d`` give."""
    if name == "contiguous_format":
        return contiguous_strides(shape)
    _check_rank(shape, name, op)
    return channels_last_strides(shape)


def result_strides(shape: Shape, strides: Shape, mf: Any, op: str) -> Shape:
    """The strides of a copy of a tensor laid out as ``mf`` says (NOTE [layout of new tensors])."""
    name = format_name(mf, op)
    if name == "preserve_format":
        if is_non_overlapping_and_dense(shape, strides):
            return strides
        return infer_dense_strides(shape, strides)
    return format_strides(shape, name, op)


def is_contiguous_for(shape: Shape, strides: Shape, mf: Any, op: str) -> bool:
    """``is_contiguous(memory_format=mf)`` of a tensor with this shape and these strides:
    laid out as the format says, size-1 dims ignored (PyTorch's rule)."""
    name = format_name(mf, op)
    if name in ("contiguous_format", "preserve_format"):
        if 0 in shape:
            return True  # no elements: contiguous whatever the strides (not so channels-last)
        want = contiguous_strides(shape)
    elif len(shape) != (4 if name == "channels_last" else 5):
        return False
    else:
        want = channels_last_strides(shape)
    return all(n == 1 or s == w for n, s, w in zip(shape, strides, want, strict=True))


def _strides_like_channels_last(shape: Shape, strides: Shape, order: tuple[int, ...]) -> bool:
    """PyTorch's ``is_channels_last_strides_2d``/``_3d``: the dims' strides grow in
    ``order``, ambiguous cases (size-0 dims, a 0-stride channel dim, N111) read as NCHW."""
    if strides[1] == 0:
        return False
    least = 0
    for d in order:
        if shape[d] == 0 or strides[d] < least:
            return False
        if d == 0 and least == strides[1]:
            return False
        least = strides[d] * (shape[d] if shape[d] > 1 else 1)
    return True


def suggest_memory_format(shape: Shape, strides: Shape) -> str:
    """The format a layout reads as (PyTorch's ``suggest_memory_format``): channels-last if
    its strides order the dims that way, else contiguous (what ``to(memory_format=)``
    compares with to decide whether to copy)."""
    if len(shape) == 4 and _strides_like_channels_last(shape, strides, (1, 3, 2, 0)):
        return "channels_last"
    if len(shape) == 5 and _strides_like_channels_last(shape, strides, (1, 4, 3, 2, 0)):
        return "channels_last_3d"
    return "contiguous_format"


def pointwise_strides(
    shape: Sequence[int], operands: Sequence[tuple[Shape, Shape]], numbers: bool = False
) -> Shape | None:
    """The strides (in elements) of a pointwise op's result of ``shape`` from its tensor
    operands' ``(shape, strides)`` in argument order, as PyTorch's TensorIterator lays it
    out; None for row-major (NOTE [pointwise result layout]). ``numbers``: a Python number
    stands for a tensor argument (PyTorch wraps it as a 0-d operand, so the operands'
    shapes differ)."""
    ndim = len(shape)
    if ndim < 2 or not operands:
        return None
    shape = tuple(shape)
    if not numbers and all(s == shape for s, _ in operands):  # TensorIterator's fast setup
        if 0 in shape or all(_row_major(shape, st) for _, st in operands):
            return None
        if ndim == 4 and all(
            is_contiguous_for(shape, st, "channels_last", "") for _, st in operands
        ):
            return channels_last_strides(shape)
        first = operands[0][1]
        if all(st == first for _, st in operands) and is_non_overlapping_and_dense(shape, first):
            return first
    strides = []
    for s, st in operands:  # broadcast dims (size 1 against a larger size) read as stride 0
        pad = ndim - len(s)
        padded = [0] * pad
        for d, (n, x) in enumerate(zip(s, st, strict=True)):
            padded.append(0 if n == 1 and shape[pad + d] != 1 else x)
        strides.append(padded)

    def should_swap(d0: int, d1: int) -> int:
        for st in strides:
            s0, s1 = st[d0], st[d1]
            if s0 == 0 or s1 == 0:
                continue
            if s0 != s1:
                return -1 if s0 < s1 else 1
            if shape[d0] > shape[d1]:
                return 1
        return 0

    out = strides_in_order(shape, should_swap)
    # the dims in their own order give a row-major result (sizes of 0 counting as 1)
    acc, own = 1, True
    for d in range(ndim - 1, -1, -1):
        if out[d] != acc:
            own = False
            break
        acc *= shape[d]
    return None if own else out


def _row_major(shape: Shape, strides: Sequence[int]) -> bool:
    """Row-major but for the strides of size-1 dims (PyTorch's ``is_contiguous``)."""
    acc = 1
    for d in range(len(shape) - 1, -1, -1):
        n = shape[d]
        if n != 1:
            if strides[d] != acc:
                return False
            acc *= n
    return True
