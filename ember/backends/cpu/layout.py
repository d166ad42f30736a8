"""CPU pointwise results laid out as PyTorch lays them out (NOTE [pointwise result layout]).

NumPy's ufuncs choose their own order for a result (row-major when the operands disagree,
where PyTorch follows the first operand): each functional pointwise op's CPU kernel is
wrapped here so that its result gets the strides the Meta rule gives, copied into them only
when NumPy's differ. Row-major operands, the common case, cost a flag check per operand.
``lay_out_pointwise`` runs once every CPU kernel is registered.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ember._shape_only import contiguous_strides
from ember._tensor import Tensor, wrap
from ember.dispatch.dispatcher import KIND_PLAIN
from ember.dispatch.keys import DispatchKey
from ember.ops.native._define import FUNCTIONAL_OF
from ember.ops.native.pointwise import (
    ROW_MAJOR_RESULT,
    layout_operands,
    pointwise_result_strides,
)
from ember.ops.native.promotion import POINTWISE
from ember.ops.registry import OpOverload, all_overloads, impl

CPU = DispatchKey.CPU
_nd = np.ndarray


def relaid(
    r: Tensor, op: str, args: tuple[Any, ...], tensors: list[int], numbers: list[int]
) -> Tensor:
    """``r`` with the strides PyTorch gives the result of pointwise op ``op`` of ``args``."""
    d = r._edata
    shape = d.shape
    want = pointwise_result_strides(op, shape, args, tensors, numbers) or contiguous_strides(shape)
    item = d.itemsize
    if d.strides == tuple(s * item for s in want):
        return r
    # dense strides: a row-major block of the dims ordered outermost first, transposed back
    order = sorted(range(len(shape)), key=lambda k: -want[k])
    back = sorted(range(len(shape)), key=order.__getitem__)
    out = np.empty([shape[k] for k in order], d.dtype).transpose(back)
    if out.strides != tuple(s * item for s in want):  # size-0/1 dims: set them exactly
        buf = np.empty(max(math.prod(shape), 1), d.dtype)
        out = np.ndarray(shape, d.dtype, buffer=buf, strides=tuple(s * item for s in want))
    np.copyto(out, d)
    return wrap(out)


def _agrees(d: np.ndarray, args: tuple[Any, ...], tensor_pos: list[int]) -> bool:
    """Whether NumPy's result ``d`` (no size-0/1 dims) already has PyTorch's layout, seen
    without working it out: every tensor operand is row-major with no size-0/1 dims (its
    strides are then exactly row-major) and so is ``d``, or every tensor operand has the
    result's shape and exactly ``d``'s strides (a dense layout both keep)."""
    n = len(args)
    if d.flags.c_contiguous:
        for i in tensor_pos:
            if i < n:
                e = getattr(args[i], "_edata", None)
                if e is None:  # None or a number
                    continue
                if type(e) is not _nd or not e.flags.c_contiguous:
                    break
                es = e.shape
                if es != d.shape and (1 in es or 0 in es):
                    break
        else:
            return True
    if not d.flags.owndata:
        return False
    strides, shape, item = d.strides, d.shape, d.itemsize
    for i in tensor_pos:
        if i < n:
            e = getattr(args[i], "_edata", None)
            if e is None:
                continue
            if type(e) is not _nd or e.strides != strides or e.shape != shape or e.itemsize != item:
                return False
    return True


def laid_out(op: OpOverload, kernel: Callable[..., Any]) -> Callable[..., Any]:
    """``kernel`` whose result takes PyTorch's layout (NOTE [pointwise result layout])."""
    tensors, numbers = layout_operands(op)
    name = op.__name__
    always = name in ROW_MAJOR_RESULT

    single = tensors == [0] and not numbers  # a unary op: is its operand's layout kept?

    def run(*args: Any, **kwargs: Any) -> Any:
        r = kernel(*args, **kwargs)
        d = getattr(r, "_edata", None)
        if type(d) is not _nd or d.ndim < 2:
            return r
        shape = d.shape
        if 1 not in shape and 0 not in shape:
            if always:
                if d.flags.c_contiguous:
                    return r
            elif single:
                e = getattr(args[0], "_edata", None)
                if type(e) is _nd and e.shape == shape:
                    if e.strides == d.strides and e.itemsize == d.itemsize and d.flags.owndata:
                        return r  # a dense layout kept
                    if d.flags.c_contiguous and e.flags.c_contiguous:
                        return r
            elif _agrees(d, args, tensors):
                return r
        return relaid(r, name, args, tensors, numbers)

    run.__name__ = getattr(kernel, "__name__", "kernel")
    run.__wrapped__ = kernel  # type: ignore[attr-defined]
    return run


def lay_out_pointwise() -> None:
    """Wrap the CPU kernel of every functional pointwise op with one result in ``laid_out``."""
    for op in all_overloads():
        if "pointwise" not in op.tags or op in FUNCTIONAL_OF or op.__name__ not in POINTWISE:
            continue
        k = op.registered(CPU)
        if k is None or getattr(k[0], "_lays_out", False):  # (add, mul...: their slow path)
            continue
        if k[1] == KIND_PLAIN and len(op._schema.returns) == 1:
            impl(op, CPU, laid_out(op, k[0]))
