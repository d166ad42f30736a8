"""The batching rule of pointwise ops (every op tagged ``pointwise``), in-place ones too.

Each batched argument's physical tensor gets size-1 dimensions after its batch dimension so
that all arguments have the logical rank of the result; unbatched arguments broadcast from
the right as they would without vmap. One thing differs from plain broadcasting: type
promotion. A logical 0-dim tensor is "dimensionless" for promotion, but its physical tensor
has the batch dimension; such an argument is cast to the dtype promotion would give the
logical arguments (a bool one, a mask, is left alone), so the physical call promotes as the
logical one would.
"""

from __future__ import annotations

from typing import Any

from ember._batched.kernel import batch_rule, inplace_error, unwrap
from ember._batched.tensor import Level, wrap
from ember._tensor import Tensor
from ember.dtypes import bool_ as _bool
from ember.dtypes import result_type_of
from ember.ops.registry import OpOverload, all_overloads, ops


def _pad(v: Tensor, logical_rank: int, rank: int) -> Tensor:
    for _ in range(rank - logical_rank):
        v = v.unsqueeze(1)
    return v


def pointwise_rule(op: OpOverload, level: Level, args: tuple[Any, ...], kw: dict[str, Any]) -> Any:
    schema = op._schema
    names: list[tuple[int, str]] = []  # (position or -1, name) of the Tensor parameters
    pos = 0
    for a in schema.arguments:
        if a.type.base == "Tensor" and not a.type.is_list:
            names.append((-1 if a.kwarg_only else pos, a.name))
        if not a.kwarg_only:
            pos += 1
    args = list(args)
    kw = dict(kw)
    found = []  # (where, tensor)
    for p, n in names:
        if 0 <= p < len(args):
            x = args[p]
            where: Any = p
        else:
            x = kw.get(n)
            where = n
        if isinstance(x, Tensor):
            found.append((where, x))
    rank = max(x.dim() for _, x in found)
    batched = [(w, x) for w, x in found if type(x) is not Tensor and unwrap(x, level)[1]]
    if schema.is_mutable:
        self_x = args[0] if args else kw.get("self")
        if not unwrap(self_x, level)[1]:
            raise inplace_error(op)
    zero_dim = [w for w, x in batched if x.dim() == 0 and rank > 0]
    cast_to = None
    if zero_dim and len({x.dtype for _, x in found}) > 1:
        cast_to = result_type_of([x for _, x in found])
    for w, x in batched:
        v = x._value
        if cast_to is not None and w in zero_dim and x.dtype not in (cast_to, _bool):
            v = v.to(cast_to)
        v = _pad(v, x.dim(), rank)
        if isinstance(w, int):
            args[w] = v
        else:
            kw[w] = v
    out = op(*args, **kw)
    if schema.is_mutable:
        return self_x if not isinstance(out, tuple) else out
    if isinstance(out, Tensor):
        return wrap(out, level.level)
    return tuple(wrap(o, level.level) if isinstance(o, Tensor) else o for o in out)


#: elementwise ops the catalogue does not tag ``pointwise`` (``packet.overload``)
_ALSO = ("complex", "polar", "frexp.Tensor", "native_dropout_backward")


def _pointwise_ops() -> list[OpOverload]:
    out = []
    for name in _ALSO:
        packet, _, overload = name.partition(".")
        if hasattr(ops.aten, packet):
            out.append(getattr(getattr(ops.aten, packet), overload or "default"))
    for op in all_overloads():
        if "pointwise" not in op.tags or op.namespace != "aten":
            continue
        s = op._schema
        if s.is_out or any(a.type.base == "Tensor" and a.type.is_list for a in s.arguments):
            continue
        if "nondeterministic_seeded" in op.tags:
            continue
        out.append(op)
    return out


batch_rule(*_pointwise_ops())(pointwise_rule)
