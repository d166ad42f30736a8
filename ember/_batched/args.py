"""Binding a call's arguments to its schema's parameter names and back: what the batching
rules that rewrite dimension and size arguments work on."""

from __future__ import annotations

from typing import Any

from ember._batched.tensor import Level
from ember._tensor import Tensor
from ember.ops.registry import OpOverload

_MISSING = object()


def bind(op: OpOverload, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
    """The call's arguments by parameter name (defaults left out)."""
    out = dict(kwargs)
    for a, v in zip(op._schema.positional, args, strict=False):
        out[a.name] = v
    return out


def call(op: OpOverload, values: dict[str, Any]) -> Any:
    """Call ``op`` with arguments by name: positional ones up to the last one given (defaults
    filling the gaps), keyword-only ones by keyword."""
    schema = op._schema
    pos = [a for a in schema.positional]
    last = max((i for i, a in enumerate(pos) if a.name in values), default=-1)
    args = []
    for a in pos[: last + 1]:
        v = values.get(a.name, _MISSING)
        args.append(a.default_value if v is _MISSING else v)
    kw = {a.name: values[a.name] for a in schema.kwarg_only if a.name in values}
    return op(*args, **kw)


def align(x: Tensor, level: Level, rank: int) -> Tensor:
    """``x``'s physical tensor with the batch dimension first and logical rank ``rank``
    (size-1 dimensions in front of the logical ones), expanded over the batch if ``x`` is not
    batched at ``level``."""
    from ember._batched.kernel import unwrap  # cycle: _batched/kernel.py imports this module

    v, batched = unwrap(x, level)
    n = x.dim()
    if batched:
        for _ in range(rank - n):
            v = v.unsqueeze(1)
        return v
    if rank > n:
        v = v.reshape((1,) * (rank - n) + tuple(v.shape))
    return v.unsqueeze(0).expand(level.size, *v.shape)


def wrap_dim(d: int, n: int, op: OpOverload) -> int:
    """Logical dimension ``d`` of a rank-``n`` tensor, made non-negative (PyTorch's error out
    of range; a 0-dim tensor takes 0 and -1)."""
    m = max(n, 1)
    if not -m <= d < m:
        raise IndexError(
            f"{op.name()}: Dimension out of range (expected to be in range of [{-m}, {m - 1}], "
            f"but got {d})"
        )
    return d + m if d < 0 else d
