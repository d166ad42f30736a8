"""Meta rules derived from the catalogue: a *geometry* function in ``ember/ops/native/`` takes
an op's arguments, runs the checks its CPU kernel runs and returns each result's
``(shape, dtype)`` (``None`` for a result an output mask leaves out); ``meta_rule`` registers
it as the op's Meta kernel, so a Meta rule is one line and the checks live once.

# NOTE [geometry functions]
A geometry function takes one argument, the op's arguments by their schema names (a
``SimpleNamespace`` from ``FunctionSchema.named``: ``a.self``, ``a.kernel_size``, defaults
filled in), so the op's long signature stands once, in its schema, and once in its CPU
kernel. It returns one ``(shape, dtype)`` pair for a single-result op and a tuple of pairs
(or ``None``) for a multi-result op.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from types import SimpleNamespace
from typing import Any

from ember._shape_only import ShapeOnlyArray
from ember._tensor import Tensor, wrap_shape_only
from ember.dispatch.keys import DispatchKey
from ember.dtypes import dtype
from ember.library import impl
from ember.ops.native._define import by_name
from ember.ops.registry import OpOverload

Spec = tuple[Sequence[int], dtype]


def new(shape: Sequence[int], d: dtype) -> Tensor:
    """A Meta tensor of ``shape`` and dtype ``d``."""
    return wrap_shape_only(ShapeOnlyArray(tuple(shape), d.np))


def like(t: Tensor) -> Tensor:
    """A Meta tensor of ``t``'s shape and dtype."""
    return new(tuple(t.shape), t.dtype)


def _result(spec: Spec | None) -> Tensor | None:
    return None if spec is None else new(spec[0], spec[1])


def results(out: Any) -> Any:
    """Meta tensors for a geometry function's answer (NOTE [geometry functions])."""
    if len(out) == 2 and isinstance(out[1], dtype):
        return _result(out)
    return tuple(_result(s) for s in out)


def meta_rule(op: OpOverload, geometry: Callable[[SimpleNamespace], Any]) -> None:
    """Register ``geometry`` (NOTE [geometry functions]) as ``op``'s Meta rule."""

    def rule(a: SimpleNamespace) -> Any:
        return results(geometry(a))

    rule.__name__ = geometry.__name__
    impl(op, DispatchKey.Meta)(by_name(op, rule))
