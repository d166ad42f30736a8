"""Batching rules of the ops that look values up in another tensor: ``searchsorted``,
``bucketize`` and ``isin``.

- ``searchsorted``/``bucketize`` with unbatched 1-D boundaries search the physical values
  as they are (any shape). Batched boundaries (or a batched ``sorter``) become rows of an
  N-D ``sorted_sequence`` (``[B, M]``, or ``[B, *leading, M]``), which the op searches row
  by row: each example's values, flattened, search their own row.
- ``isin`` with only the elements batched runs on the physical elements; batched test
  elements compare every element with every test element of its own example (``eq``, then
  ``any`` over the test elements), in the dtype the op compares in.

A 0-dim logical argument's physical tensor has the batch dimension, which would change type
promotion (a dimensioned tensor outranks a 0-dim one of the same category): it is cast to
the dtype the logical call compares in first.
"""

from __future__ import annotations

from typing import Any

from ember._batched.args import align, bind, call
from ember._batched.kernel import register_rule, slow_fallback, unwrap
from ember._batched.tensor import Level, wrap
from ember._tensor import Tensor
from ember.dtypes import result_type_of
from ember.ops.native.pointwise import isin_dtype
from ember.ops.registry import OpOverload, ops

aten = ops.aten

_BUCKETIZE = (aten.bucketize.Tensor, aten.bucketize.Scalar)


def _batched(x: Any, level: Level) -> bool:
    return isinstance(x, Tensor) and unwrap(x, level)[1]


def search_rule(op: OpOverload, level: Level, args: tuple[Any, ...], kw: dict[str, Any]) -> Any:
    values = bind(op, args, kw)
    seq_name = "boundaries" if op in _BUCKETIZE else "sorted_sequence"
    seq, x, sorter = values[seq_name], values["self"], values.get("sorter")
    scalar = not isinstance(x, Tensor)
    if (op in _BUCKETIZE and seq.dim() != 1) or (
        seq.dim() > 1 and (scalar or x.dim() != seq.dim())
    ):
        return slow_fallback(op, 0, args, kw)  # PyTorch's errors, from the op per example
    size = level.size
    if seq.dim() == 1 and not (_batched(seq, level) or _batched(sorter, level)):
        values["self"] = unwrap(x, level)[0]  # any shape searches the one sequence
        return wrap(call(op, values), level.level)
    common = result_type_of([seq, x])  # the logical call's
    if seq.dim() == 1:  # example b's values (flattened) search row b
        if scalar:
            xv = aten.full.default([size, 1], x, dtype=common, device=seq.device)
        else:
            xv = align(x, level, x.dim()).reshape(size, -1)
        shape: tuple[int, ...] = () if scalar else tuple(x.shape)
    else:
        xv, shape = align(x, level, x.dim()), tuple(x.shape)
    if not scalar and x.dim() == 0 and x.dtype is not common:
        xv = xv.to(common)
    kwargs = {k: values[k] for k in ("out_int32", "right", "side") if k in values}
    sp = align(sorter, level, sorter.dim()) if sorter is not None else None
    out = aten.searchsorted.Tensor(align(seq, level, seq.dim()), xv, sorter=sp, **kwargs)
    return wrap(out.reshape(size, *shape), level.level)


for _op in (aten.searchsorted.Tensor, aten.searchsorted.Scalar, *_BUCKETIZE):
    register_rule(_op, search_rule)


def isin_rule(op: OpOverload, level: Level, args: tuple[Any, ...], kw: dict[str, Any]) -> Any:
    values = bind(op, args, kw)
    first = "element" if op is aten.isin.Scalar_Tensor else "elements"
    second = "test_element" if op is aten.isin.Tensor_Scalar else "test_elements"
    elements, test = values[first], values[second]
    common = isin_dtype(elements, test)  # (PyTorch's error for bool and complex)
    invert = values.get("invert", False)
    size = level.size
    if not _batched(test, level):
        e = unwrap(elements, level)[0]
        if elements.dim() == 0 and elements.dtype is not common:
            e = e.to(common)
        values[first] = e
        return wrap(call(op, values), level.level)
    t = align(test, level, test.dim()).reshape(size, 1, -1).to(common)
    if isinstance(elements, Tensor):
        shape = tuple(elements.shape)
        e = align(elements, level, elements.dim()).reshape(size, -1, 1).to(common)
        hit = aten.any.dim(aten.eq.Tensor(e, t), 2)
    else:
        shape = ()
        hit = aten.any.dim(aten.eq.Scalar(t.reshape(size, -1), elements), 1)
    if invert:
        hit = aten.logical_not.default(hit)
    return wrap(hit.reshape(size, *shape), level.level)


for _op in (aten.isin.Tensor_Tensor, aten.isin.Tensor_Scalar, aten.isin.Scalar_Tensor):
    register_rule(_op, isin_rule)
