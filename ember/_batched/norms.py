"""Batching rules of the normalization layers: layer, group and batch norm and their
backward ops.

- Layer norm normalizes the trailing dimensions: the batch is one more leading dimension.
  A batched weight or bias (ensembles) is applied after normalizing without it, at the
  logical level; the backward op's input gradient takes ``grad * weight`` the same way,
  and the weight's and bias's gradients are sums per example.
- Group norm: the batch folds into ``N`` (each example's groups are separate anyway); the
  weight's and bias's gradients are summed per example, not over the folded batch.
- Batch norm: evaluation mode with statistics that are the same for every example folds
  the batch into ``N``; otherwise (training, or a batched weight, bias or running
  statistics) the batch goes into the channels, ``[N, B * C, ...]``, so each example gets
  its own statistics, as in the forward and backward ops alike. Training with running
  statistics that are not batched is PyTorch's error: they would be written with every
  example's statistics.
"""

from __future__ import annotations

from typing import Any

from ember._batched.args import align, bind, call
from ember._batched.kernel import physical, register_rule, slow_fallback, unwrap
from ember._batched.more import trailing_rule
from ember._batched.nn import _groups_input, _ungroup
from ember._batched.tensor import Level, wrap
from ember._tensor import Tensor
from ember.ops.registry import OpOverload, ops

aten = ops.aten


def _batched(level: Level, *xs: Any) -> bool:
    return any(isinstance(x, Tensor) and unwrap(x, level)[1] for x in xs)


def _per_channel(w: Tensor, x: Tensor, first: int) -> Tensor:
    """A per-channel ``w`` (C,) shaped to broadcast against ``x`` whose channels are
    dimension ``first``."""
    return w.reshape(w.shape[0], *([1] * (x.dim() - first - 1)))


# ------------------------------------------------------------------ layer norm


def layer_norm_rule(op: OpOverload, level: Level, args: tuple[Any, ...], kw: dict[str, Any]) -> Any:
    v = bind(op, args, kw)
    w, b = v.get("weight"), v.get("bias")
    if not _batched(level, w, b):
        return physical(level, trailing_rule, op, level, args, kw)
    out, mean, rstd = op(v["input"], v["normalized_shape"], None, None, v["eps"])
    if w is not None:
        out = out * w
    if b is not None:
        out = out + b
    return out, mean, rstd


def _layer_norm_backward_physical(
    op: OpOverload, level: Level, args: tuple[Any, ...], kw: dict[str, Any]
) -> Any:
    """The input's gradient runs on the physical tensors; the weight's and bias's are summed
    per example (the op would sum them over the batch too)."""
    v = bind(op, args, kw)
    g, x = v["grad_out"], v["input"]
    k = len(v["normalized_shape"])
    rank = x.dim()
    gp, xp = align(g, level, rank), align(x, level, rank)
    mean, rstd = align(v["mean"], level, rank), align(v["rstd"], level, rank)
    mask = list(v["output_mask"])
    gi = None
    if mask[0]:
        gi = call(op, {**v, "grad_out": gp, "input": xp, "mean": mean, "rstd": rstd,
                       "output_mask": [True, False, False]})[0]  # fmt: skip
        gi = wrap(gi, level.level)
    lead = list(range(1, rank - k + 1))
    gw = gb = None
    if mask[1] and v.get("weight") is not None:
        xhat = (xp - mean) * rstd
        gw = wrap(aten.sum.dim_IntList(gp * xhat, lead) if lead else gp * xhat, level.level)
    if mask[2] and v.get("bias") is not None:
        gb = wrap(aten.sum.dim_IntList(gp, lead) if lead else gp.clone(), level.level)
    return gi, gw, gb


def layer_norm_backward_rule(
    op: OpOverload, level: Level, args: tuple[Any, ...], kw: dict[str, Any]
) -> Any:
    v = bind(op, args, kw)
    w, b = v.get("weight"), v.get("bias")
    if not _batched(level, w, b):
        return physical(level, _layer_norm_backward_physical, op, level, args, kw)
    g, x, mean, rstd = v["grad_out"], v["input"], v["mean"], v["rstd"]
    mask = list(v["output_mask"])
    lead = list(range(x.dim() - len(v["normalized_shape"])))
    gi = gw = gb = None
    if mask[0]:  # the input's gradient reads the weight only through grad * weight
        gw_in = g * w if w is not None else g
        gi = op(gw_in, x, v["normalized_shape"], mean, rstd, None, None, [True, False, False])[0]
    if mask[1] and w is not None:
        xhat = (x - mean) * rstd
        gw = (g * xhat).sum(lead) if lead else g * xhat
    if mask[2] and b is not None:
        gb = g.sum(lead) if lead else g.clone()
    return gi, gw, gb


register_rule(aten.native_layer_norm.default, layer_norm_rule, logical=True)
register_rule(aten.native_layer_norm_backward.default, layer_norm_backward_rule, logical=True)


# ------------------------------------------------------------------ group norm


def _fold(x: Tensor, level: Level) -> Tensor:
    """``x``'s physical tensor, expanded over the batch if need be, with the batch folded into
    its first dimension."""
    p = align(x, level, x.dim())
    return p.reshape(p.shape[0] * p.shape[1], *p.shape[2:])


def _group_norm_physical(level: Level, v: dict[str, Any]) -> Any:
    x = v["input"]
    size = level.size
    out, mean, rstd = call(aten.native_group_norm.default, {**v, "input": _fold(x, level),
                           "N": v["N"] * size})  # fmt: skip
    return (
        wrap(out.view(size, *x.shape), level.level),
        wrap(mean.view(size, v["N"], v["group"]), level.level),
        wrap(rstd.view(size, v["N"], v["group"]), level.level),
    )


def group_norm_rule(op: OpOverload, level: Level, args: tuple[Any, ...], kw: dict[str, Any]) -> Any:
    v = bind(op, args, kw)
    x, w, b = v["input"], v.get("weight"), v.get("bias")
    if not _batched(level, w, b):
        return physical(level, _group_norm_physical, level, v)
    out, mean, rstd = op(x, None, None, v["N"], v["C"], v["HxW"], v["group"], v["eps"])
    if w is not None:
        out = out * _per_channel(w, x, 1)
    if b is not None:
        out = out + _per_channel(b, x, 1)
    return out, mean, rstd


def _group_norm_backward_physical(
    level: Level, v: dict[str, Any], g_in: Tensor, weight: Any
) -> tuple[Any, Any, Any]:
    """``g_in``: the gradient the input's reads (``grad * weight`` for a batched weight)."""
    x = v["input"]
    size, n, c, hxw, group = level.size, v["N"], v["C"], v["HxW"], v["group"]
    mask = list(v["output_mask"])
    gi = gw = gb = None
    if mask[0]:
        gi = aten.native_group_norm_backward.default(
            _fold(g_in, level), _fold(x, level), _fold(v["mean"], level), _fold(v["rstd"], level),
            weight, n * size, c, hxw, group, [True, False, False],
        )[0]  # fmt: skip
        gi = wrap(gi.view(size, *x.shape), level.level)
    g = v["grad_out"]
    gp = align(g, level, g.dim()).reshape(size, n, c, hxw)
    if mask[1]:  # sum over examples' rows and positions of grad * x-hat, per example
        xp = align(x, level, x.dim()).reshape(size, n, group, -1)
        mean = align(v["mean"], level, 2).reshape(size, n, group, 1)
        rstd = align(v["rstd"], level, 2).reshape(size, n, group, 1)
        xhat = ((xp - mean) * rstd).reshape(size, n, c, hxw)
        gw = wrap(aten.sum.dim_IntList(gp * xhat, [1, 3]), level.level)
    if mask[2]:
        gb = wrap(aten.sum.dim_IntList(gp, [1, 3]), level.level)
    return gi, gw, gb


def group_norm_backward_rule(
    op: OpOverload, level: Level, args: tuple[Any, ...], kw: dict[str, Any]
) -> Any:
    v = bind(op, args, kw)
    g, w = v["grad_out"], v.get("weight")
    if _batched(level, w):  # the input's gradient reads the weight only through grad * weight
        g = g * _per_channel(w, v["input"], 1)
        w = None
    gi, gw, gb = physical(level, _group_norm_backward_physical, level, v, g, w)
    if w is None and v.get("weight") is None:
        gw = None  # no weight: no gradient for it, as the op returns
    return gi, gw, gb


register_rule(aten.native_group_norm.default, group_norm_rule, logical=True)
register_rule(aten.native_group_norm_backward.default, group_norm_backward_rule, logical=True)


# ------------------------------------------------------------------ batch norm

_BATCH_NORM_ERROR = (
    "Batch norm got a batched tensor as input while the running_mean or running_var, which "
    "will be updated in place, were not batched.\nIf you are using a module and do not need "
    "eval mode, please set `track_running_stats` to be False.If you are using a prebuilt "
    "module and do not need eval mode, please see the functorch website for resources on how "
    "to patch your module to work with vmap"
)


def _channels(x: Any, level: Level) -> Any:
    """A per-channel tensor (C,) as the ``B * C`` channels of the grouped input (None and an
    empty statistic stay as they are)."""
    if not isinstance(x, Tensor):
        return x
    p, batched = unwrap(x, level)
    if not batched:
        if p.numel() == 0:
            return p
        p = p.unsqueeze(0).expand(level.size, *p.shape)
    return p.reshape(-1)


def batch_norm_rule(op: OpOverload, level: Level, args: tuple[Any, ...], kw: dict[str, Any]) -> Any:
    v = bind(op, args, kw)
    x, training = v["input"], v["training"]
    stats = (v.get("running_mean"), v.get("running_var"))
    if x.dim() < 2:
        return slow_fallback(op, 0, args, kw)
    size = level.size
    per_example = _batched(level, v.get("weight"), v.get("bias"), *stats)
    if not training and not per_example:
        xp = align(x, level, x.dim())  # [B, N, C, ...]
        folded = xp.reshape(size * xp.shape[1], *xp.shape[2:])
        out, mean, invstd = call(op, {**v, "input": folded})
        return wrap(out.view(xp.shape), level.level), mean, invstd
    if training and any(s is not None and not _batched(level, s) for s in stats):
        raise RuntimeError(_BATCH_NORM_ERROR)
    c = x.shape[1]
    flat = {n: _channels(v.get(n), level) for n in ("weight", "bias", *_STATS)}
    out, mean, invstd = call(op, {**v, "input": _groups_input(x, level), **flat})
    for n in _STATS:  # statistics written in place through a copy: written back
        s = v.get(n)
        if training and s is not None and not unwrap(s, level)[0].is_contiguous():
            unwrap(s, level)[0].copy_(flat[n].view(size, c))
    stat = (mean, invstd)
    if mean.numel() == size * c:
        stat = (wrap(mean.view(size, c), level.level), wrap(invstd.view(size, c), level.level))
    return (wrap(_ungroup(out, size), level.level), *stat)


_STATS = ("running_mean", "running_var")


def batch_norm_backward_rule(
    op: OpOverload, level: Level, args: tuple[Any, ...], kw: dict[str, Any]
) -> Any:
    """Always grouped by channel: each example's gradients (and, in training, statistics)
    are its own."""
    v = bind(op, args, kw)
    x = v["input"]
    if x.dim() < 2:
        return slow_fallback(op, 0, args, kw)
    size, c = level.size, x.shape[1]
    names = ("weight", "running_mean", "running_var", "save_mean", "save_invstd")
    flat = {n: _channels(v.get(n), level) for n in names}
    gi, gw, gb = call(op, {**v, "grad_out": _groups_input(v["grad_out"], level),
                           "input": _groups_input(x, level), **flat})  # fmt: skip
    return (
        None if gi is None else wrap(_ungroup(gi, size), level.level),
        None if gw is None else wrap(gw.view(size, c), level.level),
        None if gb is None else wrap(gb.view(size, c), level.level),
    )


register_rule(aten.native_batch_norm.default, batch_norm_rule)
register_rule(aten.native_batch_norm_backward.default, batch_norm_backward_rule)
