"""How a ``ReduceOp`` on a dtype becomes an MPI datatype and operation.

float16 and bfloat16 have no MPI reductions everywhere, so they reduce in a float32 copy
that is cast back (on two ranks that is exactly the float16 sum). AVG is a SUM divided by the
group's size afterwards.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ember.distributed._mpi import mpi
from ember.distributed.reduce_op import ReduceOp

_UPCAST = ("float16", "bfloat16")
_MPI_TYPES = {
    "bool": "C_BOOL",
    "uint8": "UINT8_T",
    "int8": "INT8_T",
    "int16": "INT16_T",
    "int32": "INT32_T",
    "int64": "INT64_T",
    "float32": "FLOAT",
    "float64": "DOUBLE",
    "complex64": "C_FLOAT_COMPLEX",
    "complex128": "C_DOUBLE_COMPLEX",
}
_OPS = {
    ReduceOp.SUM: ("SUM", "LOR"),
    ReduceOp.AVG: ("SUM", None),
    ReduceOp.PRODUCT: ("PROD", "LAND"),
    ReduceOp.MIN: ("MIN", "LAND"),
    ReduceOp.MAX: ("MAX", "LOR"),
    ReduceOp.BAND: ("BAND", "LAND"),
    ReduceOp.BOR: ("BOR", "LOR"),
    ReduceOp.BXOR: ("BXOR", "LXOR"),
}


def as_op(op: Any, what: str) -> ReduceOp:
    if isinstance(op, ReduceOp):
        return op
    if isinstance(op, str) and op.upper() in ReduceOp.__members__:
        return ReduceOp[op.upper()]
    raise TypeError(f"ember.distributed.{what}: op must be a ReduceOp, got {op!r}")


_PROBLEMS: dict[tuple[np.dtype, ReduceOp], str] = {}
_PLANS: dict[tuple[np.dtype, ReduceOp], tuple[bool, Any, Any]] = {}


def problem(dtype: np.dtype, op: ReduceOp) -> str:
    """Why ``op`` cannot reduce ``dtype`` ('' when it can)."""
    key = (dtype, op)
    found = _PROBLEMS.get(key)
    if found is None:
        found = _PROBLEMS[key] = _problem(dtype.name, op)
    return found


def _problem(name: str, op: ReduceOp) -> str:
    if name == "bool" and op is ReduceOp.AVG:
        return "ReduceOp.AVG is not defined on bool tensors"
    if name.startswith("complex") and op in (ReduceOp.MIN, ReduceOp.MAX):
        return f"ReduceOp.{op.name} is not defined on complex tensors (they have no order)"
    floating = name.startswith(("float", "complex", "bfloat"))
    if floating and op in (ReduceOp.BAND, ReduceOp.BOR, ReduceOp.BXOR):
        return f"ReduceOp.{op.name} needs an integer or bool tensor, got {name}"
    if name not in _MPI_TYPES and name not in _UPCAST:
        return f"no MPI reduction for dtype {name}"
    return ""


class Plan:
    """The array MPI reduces (the tensor's, or a float32 copy), its datatype and op, and
    what finishes the result (AVG's division, the cast back)."""

    def __init__(self, arr: np.ndarray, op: ReduceOp, size: int) -> None:
        key = (arr.dtype, op)
        found = _PLANS.get(key)
        if found is None:
            MPI = mpi()
            name = arr.dtype.name
            upcast = name in _UPCAST
            general, logical = _OPS[op]
            found = _PLANS[key] = (
                upcast,
                getattr(MPI, _MPI_TYPES["float32" if upcast else name]),
                getattr(MPI, logical if name == "bool" else general),
            )
        self.target = arr
        self.upcast, self.datatype, self.op = found
        self.array = arr.astype(np.float32) if self.upcast else arr
        self.divide = size if op is ReduceOp.AVG else 0

    def spec(self, arr: np.ndarray | None = None) -> list[Any]:
        return [self.array if arr is None else arr, self.datatype]

    def finish(self, after: Callable[[], Any] | None = None) -> Callable[[], None] | None:
        """What runs when the reduction completes: AVG, the cast back, then ``after``."""

        if not self.divide and not self.upcast and after is None:
            return None

        def done() -> None:
            self.complete(self.array, self.target)
            if after is not None:
                after()

        return done

    def complete(self, result: np.ndarray, target: np.ndarray) -> None:
        n = self.divide
        if n:
            if result.dtype.kind in "iu":
                q = np.abs(result) // n
                np.copyto(result, np.where(result < 0, -q, q), casting="unsafe")
            else:
                result /= n
        if result is not target:
            np.copyto(target, result, casting="unsafe")
