"""Batching rules of ops that build a new tensor out of their arguments' values:
``block_diag`` and ``logspace`` with tensor bounds.

- ``block_diag``: each input as a ``[B, rows, cols]`` block, padded with zeros to the
  result's width at its column offset (``constant_pad_nd``), the blocks' rows concatenated.
- ``logspace``: the exponents of every example at once, by the kernel's symmetric formula
  (the first half counts up from ``start``, the second down from ``end``) in double
  precision, then ``base`` to their power, converted (integers truncated) as the kernel does.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from ember import dtypes
from ember._batched.args import align, bind
from ember._batched.kernel import register_rule, slow_fallback, unwrap
from ember._batched.tensor import Level, wrap
from ember._tensor import Tensor
from ember.ops.registry import OpOverload, ops

aten = ops.aten


def block_diag_rule(op: OpOverload, level: Level, args: tuple[Any, ...], kw: dict[str, Any]) -> Any:
    tensors = list(bind(op, args, kw)["tensors"])
    if any(t.dim() > 2 for t in tensors):
        return slow_fallback(op, 0, args, kw)  # PyTorch's error, from the op per example
    # PyTorch's result type: a 0-dim input counts below the others of its category
    dt = dtypes.result_type_of([SimpleNamespace(dtype=t.dtype, ndim=t.dim()) for t in tensors])
    size = level.size
    blocks = []
    for t in tensors:
        p = align(t, level, t.dim())
        rows, cols = (1, 1) if t.dim() == 0 else (1, t.shape[0]) if t.dim() == 1 else t.shape
        blocks.append(p.reshape(size, rows, cols).to(dt))
    width = sum(b.shape[2] for b in blocks)
    rows_of = []
    col = 0
    for b in blocks:
        rows_of.append(aten.constant_pad_nd.default(b, [col, width - col - b.shape[2]]))
        col += b.shape[2]
    return wrap(aten.cat.default(rows_of, 1), level.level)


register_rule(aten.block_diag.default, block_diag_rule)


def logspace_rule(op: OpOverload, level: Level, args: tuple[Any, ...], kw: dict[str, Any]) -> Any:
    values = bind(op, args, kw)
    start, end, steps = values["start"], values["end"], values["steps"]
    base = values.get("base", 10.0)
    d = values.get("dtype") or dtypes.get_default_dtype()
    bounds = [x for x in (start, end) if isinstance(x, Tensor)]
    if (
        any(x.dim() != 0 or x.dtype.category == dtypes.COMPLEX for x in bounds)
        or d.category == dtypes.COMPLEX
        or d is dtypes.bool_
        or steps < 2
    ):
        return slow_fallback(op, 0, args, kw)  # PyTorch's errors and the one-value cases
    size = level.size
    device = bounds[0].device

    def bound(x: Any) -> Tensor:  # [B, 1] in double precision
        if not isinstance(x, Tensor):
            return aten.full.default([size, 1], x, dtype=dtypes.float64, device=device)
        v = align(x, level, 0) if unwrap(x, level)[1] else x.expand(size)
        return v.to(dtypes.float64).reshape(size, 1)

    s, e = bound(start), bound(end)
    i = aten.arange.default(steps, dtype=dtypes.float64, device=device).unsqueeze(0)
    step = (e - s) / (steps - 1)
    up = s + step * i
    down = e - step * (steps - 1 - i)
    exponents = aten.where.self(aten.lt.Scalar(i, steps // 2), up, down)
    out = aten.pow.Scalar(base, exponents)
    if d.category == dtypes.INTEGRAL:  # truncated, then wrapped into the dtype
        out = aten.trunc.default(out).to(dtypes.int64)
    return wrap(out.to(d), level.level)


for _op in (aten.logspace.Tensor_Tensor, aten.logspace.Tensor_Scalar, aten.logspace.Scalar_Tensor):
    register_rule(_op, logspace_rule)
