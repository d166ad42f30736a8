"""Forward-mode AD of a custom ``autograd.Function``: its ``jvp`` staticmethod.

As in PyTorch, ``forward`` runs on the primals alone (no tangent is visible inside it),
then ``jvp(ctx, *tangents)`` gets one tangent per input of ``forward`` (zeros for a tensor
without one while ``ctx.materialize_grads``, None for other arguments), reads
``ctx.saved_tensors`` as ``ctx.save_for_forward`` left them, and returns one tangent per
output. Nested levels are handled one at a time (NOTE [nested dual levels] in
``_kernel.py``): the outer level's ``jvp`` runs on the inner level's duals.
"""

from __future__ import annotations

from typing import Any

from ember._tensor import Tensor
from ember.autograd.forward_ad._levels import set_tangent, tangent, top_level
from ember.dispatch import state
from ember.ops.registry import ops

__all__ = ["apply_with_jvp", "top_level"]


def apply_with_jvp(cls: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    return _run(cls, args, kwargs)[0]


def _run(cls: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, Any]:
    level = top_level(args, state.local.fw_ceiling)
    if level < 0:
        return cls._apply(args, kwargs)
    with state.DualCeiling(level):
        out, ctx = _run(cls, args, kwargs)
        tangents = []
        for a in args:
            if isinstance(a, Tensor):
                t = tangent(a, level)
                if t is None and ctx.materialize_grads and a.dtype.category >= 2:
                    t = ops.aten.zeros_like.default(a)
                tangents.append(t)
            else:
                tangents.append(None)
        ctx._in_jvp = True
        try:
            result = cls.jvp(ctx, *tangents)
        finally:
            ctx._in_jvp = False
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    res = list(result) if isinstance(result, (tuple, list)) else [result]
    if len(res) != len(outs):
        raise RuntimeError(
            f"function {cls.__name__}.jvp returned an incorrect number of tangents "
            f"(expected {len(outs)}, got {len(res)})"
        )
    for o, t in zip(outs, res, strict=True):
        if t is None or not isinstance(o, Tensor) or o.dtype.category < 2:
            continue
        if id(o) in ctx._non_differentiable:
            continue
        if tuple(t.shape) != tuple(o.shape):
            raise RuntimeError(
                f"function {cls.__name__}.jvp returned a tangent of shape {tuple(t.shape)} "
                f"for an output of shape {tuple(o.shape)}"
            )
        old = tangent(o, level)
        if old is None:
            set_tangent(o, level, t)
        elif old is not t:
            with state.DualCeiling(level):
                old.copy_(t)
    return out, ctx
