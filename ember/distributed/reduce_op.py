"""``ReduceOp``: how a reducing collective combines the ranks' values, as PyTorch's."""

from __future__ import annotations

import enum


class ReduceOp(enum.Enum):
    """The reduction of ``all_reduce``, ``reduce`` and ``reduce_scatter_tensor``.

    >>> ember.distributed.ReduceOp.SUM
    <ReduceOp.SUM: 0>

    On bool tensors SUM and MAX are a logical or, PRODUCT and MIN a logical and (PyTorch's);
    AVG divides the sum by the group's size (integers truncate toward zero).
    """

    SUM = 0
    AVG = 1
    PRODUCT = 2
    MIN = 3
    MAX = 4
    BAND = 5
    BOR = 6
    BXOR = 7

    def __repr__(self) -> str:
        return f"<ReduceOp.{self.name}: {self.value}>"


#: PyTorch's names for the enum class and its deprecated alias
ReduceOp.RedOpType = ReduceOp  # type: ignore[attr-defined]
reduce_op = ReduceOp
