"""CPU kernels of the pointwise ops: one table line per op, NumPy function and arity.

Promotion comes from the op's rule (``ember/ops/native/promotion.py``): operands are cast
to the computation dtype, the NumPy function runs, and the result is cast to the result
dtype only if it differs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ember.backends.cpu._util import Tensor, data, wrap
from ember.backends.shapes import broadcast_shapes
from ember.dispatch.keys import DispatchKey
from ember.library import impl
from ember.ops.native.promotion import PROMOTION, compute_dtype
from ember.ops.registry import ops

aten = ops.aten
CPU = DispatchKey.CPU
_nd = np.ndarray
_asarray = np.asarray
_QUIET = np.errstate(all="ignore")  # PyTorch gives inf/nan silently; so do we


def _cast(x: Any, npdt: np.dtype[Any]) -> Any:
    if type(x) is _nd:
        return x if x.dtype is npdt else x.astype(npdt)
    if isinstance(x, Tensor):
        x = data(x)
        return x if x.dtype is npdt else x.astype(npdt)
    return x


def unary(name: str, fn: Callable[[Any], Any]) -> Callable[[Tensor], Tensor]:
    kind = PROMOTION[name]

    def kernel(self: Tensor) -> Tensor:
        cdt, rdt = compute_dtype(kind, (self,))
        with _QUIET:
            r = fn(_cast(self, cdt.np))
        if type(r) is not _nd:
            r = _asarray(r)
        return wrap(r if r.dtype is rdt.np else r.astype(rdt.np))

    kernel.__name__ = name
    return kernel


def binary(name: str, fn: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Tensor]:
    kind = PROMOTION[name]

    def kernel(self: Any, other: Any) -> Tensor:
        cdt, rdt = compute_dtype(kind, (self, other))
        npdt = cdt.np
        try:
            r = fn(_cast(self, npdt), _cast(other, npdt))
        except ValueError:
            shapes = [x.shape for x in (self, other) if isinstance(x, Tensor)]
            broadcast_shapes(*shapes, op=name)  # raises PyTorch's message
            raise
        if type(r) is not _nd:
            r = _asarray(r)
        return wrap(r if r.dtype is rdt.np else r.astype(rdt.np))

    kernel.__name__ = name
    return kernel


def _check_alpha(name: str, self: Any, other: Any, alpha: Any) -> None:
    if isinstance(alpha, float) and not any(
        isinstance(x, Tensor) and x.dtype.category >= 2 for x in (self, other)
    ):
        if not isinstance(self, float) and not isinstance(other, float):
            raise RuntimeError(
                f"{name}: for integral input tensors, argument alpha must not be a floating "
                "point number."
            )


_add = binary("add", np.add)
_sub = binary("sub", np.subtract)
_mul = binary("mul", np.multiply)


@impl(aten.add.Tensor, CPU)
def add(self: Any, other: Any, *, alpha: Any = 1) -> Tensor:
    if alpha != 1:
        _check_alpha("add", self, other, alpha)
        other = _mul(other, alpha)
    return _add(self, other)


@impl(aten.sub.Tensor, CPU)
def sub(self: Any, other: Any, *, alpha: Any = 1) -> Tensor:
    if alpha != 1:
        _check_alpha("sub", self, other, alpha)
        other = _mul(other, alpha)
    return _sub(self, other)


_div = binary("div", np.true_divide)


@impl(aten.div.Tensor, CPU)
def div(self: Any, other: Any) -> Tensor:
    with _QUIET:
        return _div(self, other)


impl(aten.mul.Tensor, CPU, _mul)
impl(aten.eq.Tensor, CPU, binary("eq", np.equal))
impl(aten.lt.Tensor, CPU, binary("lt", np.less))
impl(aten.neg.default, CPU, unary("neg", np.negative))
impl(aten.exp.default, CPU, unary("exp", np.exp))
impl(aten.abs.default, CPU, unary("abs", np.abs))
