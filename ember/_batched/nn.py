"""Batching rules of the neural-network ops: convolutions, pools and pads, losses.

- Convolutions: with only the input batched, the batch folds into the input's batch
  dimension (one convolution over ``B * N`` images). With the weight batched (ensembles,
  per-example gradients) the batch goes into the channels: ``B`` weights become one weight
  of ``B`` times the groups, the input ``[N, B * C, ...]``. ``convolution_backward`` does the
  same, so the weight's gradient comes out per example.
- Pools, pads, pixel shuffles, upsampling, ``im2col``: the batch folds into the input's
  batch dimension (or becomes it, for an input without one); the ``upsample_*_backward``
  ops fold it into ``grad_output``'s and ``input_size``'s too.
- Ops on tensors that share a leading batch dimension ``N`` (``grid_sampler`` and its
  backward, ``affine_grid_generator``, CPU flash attention and its backward): every tensor
  folds the batch into ``N``, the unbatched ones expanded first.
- Losses with a ``reduction``: the loss runs unreduced on the physical tensors and is then
  reduced per example; their backward ops take the per-element cotangent the reduction
  implies. ``nll_loss`` with per-example class weights gathers each target's weight.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ember._batched.args import align, bind, call
from ember._batched.kernel import register_rule, slow_fallback, unwrap
from ember._batched.tensor import Level, wrap
from ember._tensor import Tensor
from ember.ops.registry import OpOverload, ops

aten = ops.aten


def _any_batched(level: Level, *xs: Any) -> bool:
    return any(isinstance(x, Tensor) and unwrap(x, level)[1] for x in xs)


# ------------------------------------------------------------------ convolution


def _groups_input(x: Any, level: Level) -> Tensor:
    """Input ``[N, C, ...]`` as ``[N, B * C, ...]`` (example b's channels at block b)."""
    v = align(x, level, x.dim())  # [B, N, C, ...]
    v = v.movedim(0, 1)
    return v.reshape(v.shape[0], v.shape[1] * v.shape[2], *v.shape[3:])


def _ungroup(out: Tensor, size: int) -> Tensor:
    """``[N, B * O, ...]`` back to ``[B, N, O, ...]``."""
    n, bo = out.shape[0], out.shape[1]
    return out.view(n, size, bo // size, *out.shape[2:]).movedim(1, 0)


def convolution_rule(
    op: OpOverload, level: Level, args: tuple[Any, ...], kw: dict[str, Any]
) -> Any:
    v = bind(op, args, kw)
    x, w, bias = v["input"], v["weight"], v.get("bias")
    if v["transposed"] or x.dim() != w.dim():
        return slow_fallback(op, 0, args, kw)
    size = level.size
    if not _any_batched(level, w):
        xp = align(x, level, x.dim())
        folded = xp.reshape(size * xp.shape[1], *xp.shape[2:])
        b = bias if not _any_batched(level, bias) else None
        out = call(op, {**v, "input": folded, "bias": b})
        out = out.view(size, xp.shape[1], *out.shape[1:])
        if b is None and bias is not None:
            bp = unwrap(bias, level)[0]
            out = out + bp.view(size, 1, bp.shape[1], *([1] * (out.dim() - 3)))
        return wrap(out, level.level)
    wp = align(w, level, w.dim())  # [B, O, C/g, ...]
    weight = wp.reshape(size * wp.shape[1], *wp.shape[2:])
    b = None
    if bias is not None:
        b = align(bias, level, 1).reshape(-1)
    out = call(
        op,
        {**v, "input": _groups_input(x, level), "weight": weight, "bias": b,
         "groups": v["groups"] * size},
    )  # fmt: skip
    return wrap(_ungroup(out, size), level.level)


def convolution_backward_rule(
    op: OpOverload, level: Level, args: tuple[Any, ...], kw: dict[str, Any]
) -> Any:
    v = bind(op, args, kw)
    g, x, w = v["grad_output"], v["input"], v["weight"]
    if v["transposed"] or x.dim() != w.dim():
        return slow_fallback(op, 0, args, kw)
    size = level.size
    wp = align(w, level, w.dim())
    bias_sizes = v.get("bias_sizes")
    gi, gw, gb = call(
        op,
        {**v, "grad_output": _groups_input(g, level), "input": _groups_input(x, level),
         "weight": wp.reshape(size * wp.shape[1], *wp.shape[2:]),
         "bias_sizes": None if bias_sizes is None else [size * bias_sizes[0]],
         "groups": v["groups"] * size},
    )  # fmt: skip
    out = []
    if gi is not None:
        gi = wrap(_ungroup(gi, size), level.level)
    if gw is not None:
        gw = wrap(gw.view(size, gw.shape[0] // size, *gw.shape[1:]), level.level)
    if gb is not None:
        gb = wrap(gb.view(size, -1), level.level)
    out = [gi, gw, gb]
    return tuple(out)


register_rule(aten.convolution.default, convolution_rule)
register_rule(aten.convolution_backward.default, convolution_backward_rule)


# ------------------------------------------------------------------ pools and pads

#: op -> its number of spatial dimensions
_SPATIAL: dict[OpOverload, int] = {}
for _name in (
    "max_pool1d_with_indices max_pool2d_with_indices max_pool3d_with_indices "
    "max_pool2d_with_indices_backward max_pool3d_with_indices_backward avg_pool2d "
    "avg_pool2d_backward avg_pool3d avg_pool3d_backward adaptive_avg_pool1d "
    "_adaptive_avg_pool2d _adaptive_avg_pool2d_backward _adaptive_avg_pool3d "
    "_adaptive_avg_pool3d_backward adaptive_max_pool1d adaptive_max_pool2d "
    "adaptive_max_pool2d_backward adaptive_max_pool3d adaptive_max_pool3d_backward "
    "reflection_pad1d reflection_pad1d_backward reflection_pad2d reflection_pad2d_backward "
    "reflection_pad3d reflection_pad3d_backward replication_pad1d replication_pad1d_backward "
    "replication_pad2d replication_pad2d_backward replication_pad3d replication_pad3d_backward "
    "upsample_nearest1d upsample_nearest2d upsample_nearest3d upsample_bilinear2d "
    "upsample_linear1d upsample_bicubic2d upsample_trilinear3d _upsample_nearest_exact1d "
    "_upsample_nearest_exact2d _upsample_nearest_exact3d _upsample_bilinear2d_aa "
    "_upsample_bicubic2d_aa im2col fractional_max_pool2d_backward fractional_max_pool3d_backward"
).split():
    _packet = getattr(aten, _name, None)
    if _packet is not None:
        _SPATIAL[_packet.default] = int(next(c for c in _name if c.isdigit()))


def spatial_rule(op: OpOverload, level: Level, args: tuple[Any, ...], kw: dict[str, Any]) -> Any:
    k = _SPATIAL[op]
    values = bind(op, args, kw)
    tensors = [(n, x) for n, x in values.items() if isinstance(x, Tensor)]
    first = tensors[0][1]
    folded = first.dim() == k + 2
    size = level.size
    n = first.shape[0] if folded else None
    for name, x in tensors:
        p = align(x, level, x.dim())
        values[name] = p.reshape(size * p.shape[1], *p.shape[2:]) if folded else p
    out = call(op, values)

    def back(o: Tensor) -> Tensor:
        return wrap(o.view(size, n, *o.shape[1:]) if folded else o, level.level)

    return tuple(back(o) for o in out) if isinstance(out, tuple) else back(out)


for _op in _SPATIAL:
    register_rule(_op, spatial_rule)


def _fold(x: Any, level: Level) -> Tensor:
    """``x``'s physical tensor (expanded over the batch if it is not batched) with the batch
    folded into its first dimension: ``[B * N, ...]``."""
    p = align(x, level, x.dim())
    return p.reshape(level.size * p.shape[1], *p.shape[2:])


def _unfold(out: Any, level: Level) -> Any:
    """A result of a call on folded tensors (``[B * N, ...]``, or None) as ``[B, N, ...]``,
    wrapped."""
    if out is None:
        return None
    return wrap(out.view(level.size, out.shape[0] // level.size, *out.shape[1:]), level.level)


def upsample_backward_rule(
    op: OpOverload, level: Level, args: tuple[Any, ...], kw: dict[str, Any]
) -> Any:
    """``upsample_*_backward``: the batch folds into ``grad_output``'s batch dimension and
    ``input_size``'s first entry."""
    values = bind(op, args, kw)
    size = list(values["input_size"])
    g = values["grad_output"]
    if g.dim() != len(size):
        return slow_fallback(op, 0, args, kw)  # PyTorch's error, from the op per example
    values["grad_output"] = _fold(g, level)
    values["input_size"] = [level.size * size[0], *size[1:]]
    return _unfold(call(op, values), level)


for _name in (
    "upsample_nearest1d_backward upsample_nearest2d_backward upsample_nearest3d_backward "
    "upsample_linear1d_backward upsample_bilinear2d_backward upsample_bicubic2d_backward "
    "upsample_trilinear3d_backward _upsample_nearest_exact1d_backward "
    "_upsample_nearest_exact2d_backward _upsample_nearest_exact3d_backward "
    "_upsample_bilinear2d_aa_backward _upsample_bicubic2d_aa_backward"
).split():
    register_rule(getattr(aten, _name).default, upsample_backward_rule)


def folded_rule(op: OpOverload, level: Level, args: tuple[Any, ...], kw: dict[str, Any]) -> Any:
    """Ops whose tensors all lead with the same batch dimension ``N`` (``grid_sampler``,
    attention): every tensor folds the batch into it, unbatched ones expanded; results
    unfold."""
    values = bind(op, args, kw)
    tensors = [(n, x) for n, x in values.items() if isinstance(x, Tensor)]
    if any(x.dim() == 0 for _, x in tensors) or len({x.shape[0] for _, x in tensors}) > 1:
        return slow_fallback(op, 0, args, kw)  # PyTorch's errors, from the op per example
    for name, x in tensors:
        values[name] = _fold(x, level)
    out = call(op, values)
    if isinstance(out, tuple):
        return tuple(_unfold(o, level) for o in out)
    return _unfold(out, level)


for _op in (
    aten.grid_sampler.default, aten.grid_sampler_2d.default, aten.grid_sampler_3d.default,
    aten.grid_sampler_2d_backward.default, aten.grid_sampler_3d_backward.default,
):  # fmt: skip
    register_rule(_op, folded_rule)


def affine_grid_rule(
    op: OpOverload, level: Level, args: tuple[Any, ...], kw: dict[str, Any]
) -> Any:
    """``theta`` ``[N, n, n + 1]`` folds the batch into ``N``, and ``size``'s first entry."""
    values = bind(op, args, kw)
    theta, size = values["theta"], list(values["size"])
    if theta.dim() != 3 or not size or theta.shape[0] != size[0]:
        return slow_fallback(op, 0, args, kw)  # PyTorch's errors, from the op per example
    values["theta"] = _fold(theta, level)
    values["size"] = [level.size * size[0], *size[1:]]
    return _unfold(call(op, values), level)


register_rule(aten.affine_grid_generator.default, affine_grid_rule)


def flash_attention_rule(
    op: OpOverload, level: Level, args: tuple[Any, ...], kw: dict[str, Any]
) -> Any:
    """The CPU flash-attention op and its backward on ``[N, H, L, E]`` tensors: the batch
    folds into ``N``; a mask is expanded to ``[N, H, L, S]`` first (it may broadcast over
    ``N``). With dropout (random draws) the call takes the fallback's loop."""
    values = bind(op, args, kw)
    q, k = values["query"], values["key"]
    if values.get("dropout_p", 0.0) != 0.0 or q.dim() != 4 or k.dim() != 4:
        return slow_fallback(op, 0, args, kw)
    mask = values.get("attn_mask")
    if mask is not None:
        full = [q.shape[0], q.shape[1], q.shape[2], k.shape[2]]
        if mask.dim() > 4:
            return slow_fallback(op, 0, args, kw)  # PyTorch's error, from the op per example
        mp = align(mask, level, 4).expand(level.size, *full)
        values["attn_mask"] = mp.reshape(level.size * full[0], *full[1:])
    for name, x in values.items():
        if isinstance(x, Tensor) and name != "attn_mask":
            values[name] = _fold(x, level)
    return tuple(_unfold(o, level) for o in call(op, values))


def prelu_backward_rule(
    op: OpOverload, level: Level, args: tuple[Any, ...], kw: dict[str, Any]
) -> Any:
    """``_prelu_kernel_backward``: elementwise over its broadcast arguments (both gradients
    come out in the broadcast shape, the weight's summed by autograd), so every argument
    takes the batch, expanded where it is not batched: the weight's gradient depends on
    ``self`` and the cotangent alone, and must still be batched when only the weight is."""
    values = bind(op, args, kw)
    tensors = [(n, x) for n, x in values.items() if isinstance(x, Tensor)]
    rank = max(x.dim() for _, x in tensors)
    for name, x in tensors:
        values[name] = align(x, level, rank)
    return tuple(wrap(o, level.level) for o in call(op, values))


register_rule(aten._prelu_kernel_backward.default, prelu_backward_rule)
register_rule(aten._scaled_dot_product_flash_attention_for_cpu.default, flash_attention_rule)
register_rule(
    aten._scaled_dot_product_flash_attention_for_cpu_backward.default, flash_attention_rule
)


# ------------------------------------------------------------------ losses


def _reduce(loss: Tensor, reduction: int) -> Tensor:
    """Per-example reduction of ``[B, ...]`` unreduced losses."""
    if reduction == 0:
        return loss
    flat = loss.reshape(loss.shape[0], -1)
    return flat.sum(1) if reduction == 2 else flat.mean(1)


def loss_rule(op: OpOverload, level: Level, args: tuple[Any, ...], kw: dict[str, Any]) -> Any:
    values = bind(op, args, kw)
    tensors = [(n, x) for n, x in values.items() if isinstance(x, Tensor)]
    rank = max(x.dim() for _, x in tensors)
    for name, x in tensors:
        values[name] = align(x, level, rank)
    reduction = values.get("reduction", 1)
    values["reduction"] = 0
    return wrap(_reduce(call(op, values), reduction), level.level)


def loss_backward_rule(
    op: OpOverload, level: Level, args: tuple[Any, ...], kw: dict[str, Any]
) -> Any:
    values = bind(op, args, kw)
    g = values["grad_output"]
    tensors = [(n, x) for n, x in values.items() if isinstance(x, Tensor) and n != "grad_output"]
    rank = max(x.dim() for _, x in tensors)
    for name, x in tensors:
        values[name] = align(x, level, rank)
    shape = values["self"].shape
    reduction = values["reduction"]
    gp = align(g, level, g.dim())
    if reduction != 0:
        gp = gp.reshape(level.size, *([1] * rank))
        if reduction == 1:
            count = 1
            for s in shape[1:]:
                count *= s
            gp = gp / count
        gp = gp.expand(shape)
    else:
        gp = align(g, level, rank).expand(shape)
    values["grad_output"] = gp
    values["reduction"] = 0
    return wrap(call(op, values), level.level)


for _name in (
    "mse_loss l1_loss smooth_l1_loss huber_loss soft_margin_loss binary_cross_entropy "
    "binary_cross_entropy_with_logits"
).split():
    register_rule(getattr(aten, _name).default, loss_rule)
for _name in (
    "smooth_l1_loss_backward huber_loss_backward soft_margin_loss_backward "
    "binary_cross_entropy_backward"
).split():
    register_rule(getattr(aten, _name).default, loss_backward_rule)


def _nll_parts(values: dict[str, Any], level: Level) -> tuple[Tensor, Tensor, tuple[int, ...]]:
    """Input ``[B * N, C]``, target ``[B * N]`` and the per-example shape ``[B, N]``
    (``[B]`` for a 1-D input)."""
    x, t = values["self"], values["target"]
    xp = align(x, level, x.dim())
    tp = align(t, level, t.dim())
    c = xp.shape[-1]
    return xp.reshape(-1, c), tp.reshape(-1), tuple(tp.shape)


def _nll_rule(
    name: str,
    batched_weight: Callable[[dict[str, Any], Level], Any],
    flat: Callable[[OpOverload, Level, dict[str, Any], Tensor, Tensor, tuple[int, ...]], Any],
) -> Callable[[OpOverload, Level, tuple[Any, ...], dict[str, Any]], Any]:
    """The vmap rule of ``nll_loss_forward`` or ``nll_loss_backward``: the per-example loop
    for inputs of more than 2 dims, ``batched_weight`` when the class weights are batched,
    else ``flat`` over the batch folded into the rows (``_nll_parts``)."""

    def rule(op: OpOverload, level: Level, args: tuple[Any, ...], kw: dict[str, Any]) -> Any:
        values = bind(op, args, kw)
        if values["self"].dim() > 2:
            return slow_fallback(op, 0, args, kw)
        if _any_batched(level, values.get("weight")):
            return batched_weight(values, level)
        return flat(op, level, values, *_nll_parts(values, level))

    rule.__name__ = rule.__qualname__ = name
    return rule


def _nll_forward_flat(
    op: OpOverload,
    level: Level,
    values: dict[str, Any],
    xs: Tensor,
    ts: Tensor,
    shape: tuple[int, ...],
) -> Any:
    """``nll_loss_forward`` of the rows of every example at once, reduced per example."""
    weight, ignore = values.get("weight"), values["ignore_index"]
    losses, _ = op(xs, ts, weight, 0, ignore)
    if weight is None:  # each target's weight: 1, or 0 where it is ignored
        weights = aten.ne.Scalar(ts, ignore).to(xs.dtype)
    else:
        weights, _ = op(xs.new_full((1, 1), -1.0).expand(xs.shape), ts, weight, 0, ignore)
    losses, weights = losses.view(shape), weights.view(shape)
    reduction = values["reduction"]
    if len(shape) == 1:  # a 1-D input: one element per example
        total = weights
        out = losses if reduction != 1 else losses / weights
    else:
        total = weights.sum(1)
        out = losses if reduction == 0 else losses.sum(1)
        if reduction == 1:
            out = out / total
    if reduction == 0:
        total = total.new_zeros((level.size,))
    return wrap(out, level.level), wrap(total, level.level)


def _nll_backward_flat(
    op: OpOverload,
    level: Level,
    values: dict[str, Any],
    xs: Tensor,
    ts: Tensor,
    shape: tuple[int, ...],
) -> Any:
    """``nll_loss_backward`` of the rows of every example at once."""
    g, reduction = values["grad_output"], values["reduction"]
    gp = align(g, level, g.dim())
    if reduction != 0:
        if reduction == 1:
            gp = gp / align(values["total_weight"], level, 0)
        gp = gp.reshape(level.size, *([1] * (len(shape) - 1))).expand(shape)
    tw = values["total_weight"]
    tw = unwrap(tw, level)[0].reshape(-1)[0] if _any_batched(level, tw) else tw
    grad = op(gp.reshape(-1), xs, ts, values.get("weight"), 0, values["ignore_index"], tw)
    return wrap(grad.view(level.size, *values["self"].shape), level.level)


def _target_weights(values: dict[str, Any], level: Level) -> tuple[Tensor, Tensor, Tensor]:
    """Per-example class weights (``[B, C]``) at each target: the input ``[B, N, C]``, each
    target's class (ignored ones at 0, ``[B, N]``) and its weight (0 where ignored)."""
    x, t = values["self"], values["target"]
    size, c = level.size, x.shape[-1]
    xp = align(x, level, x.dim()).reshape(size, -1, c)
    tp = align(t, level, t.dim()).reshape(size, -1)
    wp = align(values["weight"], level, 1)
    valid = aten.ne.Scalar(tp, values["ignore_index"])
    safe = aten.where.self(valid, tp, aten.zeros_like.default(tp))
    return xp, safe, aten.mul.Tensor(aten.gather.default(wp, 1, safe), valid.to(wp.dtype))


def _nll_forward_batched_weight(values: dict[str, Any], level: Level) -> Any:
    """``nll_loss_forward`` with per-example class weights: each target's loss is minus its
    class's weight times its input entry (0 where ignored); the total weight sums them."""
    xp, safe, w = _target_weights(values, level)
    picked = aten.gather.default(xp, 2, safe.unsqueeze(-1)).squeeze(-1)  # [B, N]
    losses = aten.neg.default(aten.mul.Tensor(w.to(xp.dtype), picked))
    reduction, size = values["reduction"], level.size
    if reduction == 0:
        out = losses.reshape(size, *values["target"].shape)
        total = xp.new_zeros((size,))
    else:
        total = w.sum(1).to(xp.dtype)
        out = losses.sum(1)
        if reduction == 1:
            out = out / total
    return wrap(out, level.level), wrap(total, level.level)


def _nll_backward_batched_weight(values: dict[str, Any], level: Level) -> Any:
    """``nll_loss_backward`` with per-example class weights: each target's entry is minus
    its class's weight times the cotangent (over the total weight for a mean), 0 where the
    target is ignored, written into zeros at the target's class (``gather``, ``scatter``)."""
    x, g = values["self"], values["grad_output"]
    size = level.size
    xp, safe, w = _target_weights(values, level)
    reduction = values["reduction"]
    gp = align(g, level, g.dim()).reshape(size, -1)  # [B, N], or [B, 1] when reduced
    if reduction == 1:
        gp = gp / align(values["total_weight"], level, 0).reshape(size, 1)
    entries = aten.neg.default(aten.mul.Tensor(w, gp)).to(xp.dtype)
    out = aten.scatter.src(
        aten.zeros_like.default(xp), 2, safe.unsqueeze(-1), entries.unsqueeze(-1)
    )
    return wrap(out.view(size, *x.shape), level.level)


nll_loss_forward_rule = _nll_rule(
    "nll_loss_forward_rule", _nll_forward_batched_weight, _nll_forward_flat
)
nll_loss_backward_rule = _nll_rule(
    "nll_loss_backward_rule", _nll_backward_batched_weight, _nll_backward_flat
)
register_rule(aten.nll_loss_forward.default, nll_loss_forward_rule)
register_rule(aten.nll_loss_backward.default, nll_loss_backward_rule)
