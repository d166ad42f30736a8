"""Batching rules of the view scatters (``slice_scatter``, ``select_scatter``,
``diagonal_scatter``: NOTE [scatter into a view] in ``ember/ops/native/copies_composite.py``):
``self`` and ``src`` take the batch dimension first (a side that is not batched is expanded
over the batch), and the dimension arguments move one place right. ``as_strided_scatter``
addresses storage, not dimensions: it takes the slow fallback."""

from __future__ import annotations

from typing import Any

from ember._batched.args import align, bind, call, wrap_dim
from ember._batched.kernel import register_rule
from ember._batched.tensor import Level, wrap
from ember.ops.registry import OpOverload, ops

aten = ops.aten

#: op -> the names of its dimension arguments and their defaults
_DIMS: dict[OpOverload, dict[str, int]] = {
    aten.slice_scatter.default: {"dim": 0},
    aten.select_scatter.default: {"dim": 0},
    aten.diagonal_scatter.default: {"dim1": 0, "dim2": 1},
}


def view_scatter_rule(
    op: OpOverload, level: Level, args: tuple[Any, ...], kw: dict[str, Any]
) -> Any:
    values = bind(op, args, kw)
    self, src = values["self"], values["src"]
    n = self.dim()
    for name, default in _DIMS[op].items():
        values[name] = wrap_dim(values.get(name, default), n, op) + 1
    values["self"] = align(self, level, n)
    values["src"] = align(src, level, src.dim())
    return wrap(call(op, values), level.level)


for _op in _DIMS:
    register_rule(_op, view_scatter_rule)
