"""Batching rules of the ops over sequences with a batch dimension ``N`` of their own:
``_ctc_loss`` and its backward, the fused LSTM layer ``mkldnn_rnn_layer`` and its backward.

The vmap dimension folds into ``N`` (``B`` examples of ``N`` sequences are one call on
``B * N`` sequences), which is right only where the op's results stay separate per sequence:

- ``_ctc_loss``'s loss and ``log_alpha`` are per sequence, and so is ``_ctc_loss_backward``'s
  gradient of ``log_probs``: both fold (the int length lists repeated per example, 1-D
  concatenated targets concatenated per example).
- ``mkldnn_rnn_layer`` folds when its weights are not batched (a batched weight differs per
  example: the slow fallback). Its workspace comes back in each example's own layout, so
  its backward (and a loop of the op) sees what the op would have given that example.
- ``mkldnn_rnn_layer_backward`` sums the weights' gradients over ``N``: folded, it would
  merge the examples' gradients. So the folded call only yields the gates' gradients
  ``dG`` (with an identity for ``W_ih`` and a zero input of ``4H`` features, its input
  gradient is ``dG`` itself: the gates' gradients depend on the workspace, ``W_hh`` and the
  cotangents, never on ``x`` or ``W_ih``); the input's gradient is ``dG @ W_ih`` and each
  example's weight and bias gradients are its own sums of ``dG`` against its inputs and
  previous hidden states. The hidden and cell states' gradients are per sequence and come
  from the folded call directly. A batched ``W_hh`` (per-example recurrence) takes the slow
  fallback.
"""

from __future__ import annotations

from typing import Any

from ember._batched.args import bind, call
from ember._batched.kernel import materialize, register_rule, slow_fallback, unwrap
from ember._batched.tensor import Level, wrap
from ember._tensor import Tensor
from ember.ops.native.loss import ctc_geometry
from ember.ops.native.rnn import check_rnn_layer
from ember.ops.registry import OpOverload, ops

aten = ops.aten


def _batched(level: Level, *xs: Any) -> bool:
    return any(isinstance(x, Tensor) and unwrap(x, level)[1] for x in xs)


def _fold(x: Tensor, level: Level, dim: int) -> Tensor:
    """``x``'s physical tensor (expanded if unbatched) with the vmap dimension folded into
    logical dimension ``dim``: example ``b``'s entries at ``b * x.shape[dim] + i``."""
    v = materialize(x, level).movedim(0, dim)
    return v.reshape(*v.shape[:dim], v.shape[dim] * v.shape[dim + 1], *v.shape[dim + 2 :])


def _unfold(y: Tensor, size: int, dim: int) -> Tensor:
    """``_fold``'s inverse on a result: dimension ``dim`` of ``B * N`` split into the vmap
    dimension (moved to the front) and ``N``."""
    y = y.reshape(*y.shape[:dim], size, y.shape[dim] // size, *y.shape[dim + 1 :])
    return y.movedim(dim, 0)


# ------------------------------------------------------------------ CTC


def _ctc_folded(v: dict[str, Any], level: Level) -> dict[str, Any]:
    """``_ctc_loss``'s (or its backward's) arguments for ``B * N`` sequences."""
    size = level.size
    lp, tg = v["log_probs"], v["targets"]
    il, tl = list(v["input_lengths"]), list(v["target_lengths"])
    # the op's shape and length checks on the examples' shapes (its own errors)
    ctc_geometry(lp, tg, il, tl, v.get("blank", 0))
    out = dict(v)
    out["log_probs"] = _fold(lp, level, 1)
    if tg.dim() == 2:
        out["targets"] = _fold(tg, level, 0)
    else:  # each example's concatenated targets, one example after the other
        out["targets"] = materialize(tg, level)[:, : sum(tl)].reshape(-1)
    out["input_lengths"], out["target_lengths"] = il * size, tl * size
    for name in ("grad", "neg_log_likelihood"):
        if name in v:
            out[name] = _fold(v[name], level, 0)
    if "log_alpha" in v:
        out["log_alpha"] = _fold(v["log_alpha"], level, 0)
    return out


def ctc_loss_rule(op: OpOverload, level: Level, args: tuple[Any, ...], kw: dict[str, Any]) -> Any:
    nll, log_alpha = call(op, _ctc_folded(bind(op, args, kw), level))
    return wrap(_unfold(nll, level.size, 0), level.level), wrap(
        _unfold(log_alpha, level.size, 0), level.level
    )


def ctc_loss_backward_rule(
    op: OpOverload, level: Level, args: tuple[Any, ...], kw: dict[str, Any]
) -> Any:
    grad = call(op, _ctc_folded(bind(op, args, kw), level))  # (T, B * N, C)
    return wrap(_unfold(grad, level.size, 1), level.level)


# ------------------------------------------------------------------ fused LSTM layer


def _workspace_split(ws: Tensor, size: int, t: int, n: int, h: int) -> Tensor:
    """The folded call's workspace ``(T, 4, B*N, H)`` gates then ``(T, B*N, H)`` cells, as
    ``(B, 5*T*N*H)``: each example's workspace in the op's own layout."""
    k = t * 4 * size * n * h
    acts = ws[:k].reshape(t, 4, size, n * h).movedim(2, 0).reshape(size, -1)
    cells = ws[k:].reshape(t, size, n * h).movedim(1, 0).reshape(size, -1)
    return aten.cat.default([acts, cells], 1)


def _workspace_join(ws: Tensor, t: int, n: int, h: int) -> Tensor:
    """``_workspace_split``'s inverse: ``(B, 5*T*N*H)`` back to the folded layout."""
    size = ws.shape[0]
    k = t * 4 * n * h
    acts = ws[:, :k].reshape(size, t, 4, n * h).movedim(0, 2).reshape(-1)
    cells = ws[:, k:].reshape(size, t, n * h).movedim(0, 1).reshape(-1)
    return aten.cat.default([acts, cells])


def rnn_layer_rule(op: OpOverload, level: Level, args: tuple[Any, ...], kw: dict[str, Any]) -> Any:
    v = bind(op, args, kw)
    if _batched(level, v["weight0"], v["weight1"], v["weight2"], v["weight3"]):
        return slow_fallback(op, 0, args, kw)  # per-example weights: nothing to fold
    x, bf = v["input"], v["batch_first"]
    t, n, _, h = check_rnn_layer(
        x, v["weight0"], v["weight1"], v["hx_"], v["cx_"], v["batch_sizes"], v["mode"],
        v["hidden_size"], bf,
    )  # fmt: skip
    size = level.size
    nd = 0 if bf else 1
    folded = {**v, "input": _fold(x, level, nd)}
    folded["hx_"], folded["cx_"] = _fold(v["hx_"], level, 0), _fold(v["cx_"], level, 0)
    out, hy, cy, ws = call(op, folded)
    return (
        wrap(_unfold(out, size, nd), level.level),
        wrap(_unfold(hy, size, 0), level.level),
        wrap(_unfold(cy, size, 0), level.level),
        wrap(_workspace_split(ws, size, t, n, h), level.level),
    )


def rnn_layer_backward_rule(
    op: OpOverload, level: Level, args: tuple[Any, ...], kw: dict[str, Any]
) -> Any:
    v = bind(op, args, kw)
    if _batched(level, v["weight2"]):
        return slow_fallback(op, 0, args, kw)  # a per-example recurrence
    x, w_ih, bf, reverse = v["input"], v["weight1"], v["batch_first"], v["reverse"]
    t, n, i, h = check_rnn_layer(
        x, w_ih, v["weight2"], v["hx_"], v["cx_tmp"], v["batch_sizes"], v["mode"],
        v["hidden_size"], bf,
    )  # fmt: skip
    size = level.size
    nd = 0 if bf else 1
    w_phys = unwrap(w_ih, level)[0]  # only its dtype and device are read here
    folded = dict(v)
    for name in ("hx_", "cx_tmp", "hy_", "cy_", "grad_hy", "grad_cy"):
        if v.get(name) is not None:
            folded[name] = _fold(v[name], level, 0)
    for name in ("output", "grad_output"):
        if v.get(name) is not None:
            folded[name] = _fold(v[name], level, nd)
    folded["workspace"] = _workspace_join(materialize(v["workspace"], level), t, n, h)
    shape = [size * n, t, 4 * h] if bf else [t, size * n, 4 * h]
    folded["input"] = aten.zeros.default(shape, dtype=x.dtype, device=x.device)
    eye = aten.eye.default(4 * h, dtype=w_phys.dtype, device=w_phys.device)
    folded["weight1"] = eye
    for name in ("weight3", "weight4"):  # the bias gradients come per example below
        folded[name] = aten.zeros.default(list(v[name].shape), dtype=x.dtype, device=x.device)
    dg, _, _, _, _, grad_hx, grad_cx = call(op, folded)
    # every example's steps in the op's time-major order: (B, T, N, 4H) and its inputs
    dg = _unfold(dg, size, nd)
    xs = materialize(x, level)
    hs = materialize(v["output"], level)
    if bf:
        dg, xs, hs = dg.transpose(1, 2), xs.transpose(1, 2), hs.transpose(1, 2)
    hx = materialize(v["hx_"], level).unsqueeze(1)  # (B, 1, N, H)
    if t == 0:
        h_prev = hs
    elif reverse:
        h_prev = aten.cat.default([hs[:, 1:], hx], 1)
    else:
        h_prev = aten.cat.default([hx, hs[:, :-1]], 1)
    flat = dg.reshape(size, t * n, 4 * h)
    grad_w_ih = flat.transpose(1, 2).matmul(xs.reshape(size, t * n, i))
    grad_w_hh = flat.transpose(1, 2).matmul(h_prev.reshape(size, t * n, h))
    grad_input = dg.matmul(w_ih if not _batched(level, w_ih) else w_phys.unsqueeze(1))
    if bf:
        grad_input = grad_input.transpose(1, 2)
    if v["has_biases"]:
        grad_b = flat.sum(1)
        grad_b2 = grad_b.clone()
    else:
        grad_b = aten.zeros.default([size, *v["weight3"].shape], dtype=x.dtype, device=x.device)
        grad_b2 = aten.zeros.default([size, *v["weight4"].shape], dtype=x.dtype, device=x.device)
    outs = (grad_input, grad_w_ih, grad_w_hh, grad_b, grad_b2)
    return (
        *(wrap(o.contiguous(), level.level) for o in outs),
        wrap(_unfold(grad_hx, size, 0), level.level),
        wrap(_unfold(grad_cx, size, 0), level.level),
    )


register_rule(aten._ctc_loss.default, ctc_loss_rule)
register_rule(aten._ctc_loss_backward.default, ctc_loss_backward_rule)
register_rule(aten.mkldnn_rnn_layer.default, rnn_layer_rule)
register_rule(aten.mkldnn_rnn_layer_backward.default, rnn_layer_backward_rule)
