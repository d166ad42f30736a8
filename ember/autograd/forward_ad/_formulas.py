"""Written forward derivative formulas (NOTE [forward rules] in ``_rules.py``), one line each.

``defjvp(op, formula)``: ``formula(t, args, kwargs, result)`` gets one tangent per Tensor
parameter of the schema (None where there is none), the op's arguments and its output, and
returns the output tangent (a tuple for several outputs; None: no tangent, that is zero).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from ember import dtypes
from ember.autograd.forward_ad import _rules
from ember.autograd.forward_ad._rules import WRITTEN, get_param, replaced, tensor_params
from ember.ops.registry import OpOverload, ops

aten = ops.aten

Formula = Callable[[tuple[Any, ...], tuple[Any, ...], dict[str, Any], Any], Any]


def defjvp(op: OpOverload, formula: Formula) -> None:
    """Register the forward derivative of ``op`` (this module's docstring); it replaces the
    derived rule (NOTE [forward rules]).

    >>> from ember.autograd.forward_ad import defjvp, rule_name
    >>> rule_name(ember.ops.aten.mm.default)
    'written'
    """

    def rule(op: OpOverload, args: Any, kwargs: Any, tangents: Any, out: Any) -> Any:
        return formula(tangents, args, kwargs, out)

    WRITTEN[op] = rule

    _rules._RULES.pop(op, None)


def _add(a: Any, b: Any) -> Any:
    return b if a is None else a if b is None else a + b


def multilinear(op: OpOverload, additive: int | None = None) -> Formula:
    """The rule of an op linear in each Tensor parameter separately (``mm``, ``einsum``):
    the sum over inputs with a tangent of the op with that input replaced by it. With
    ``additive`` (``addmm``'s ``self``, a convolution's ``bias``), that parameter is a term
    added to the product: it is zeroed in the other terms, and its own term zeroes the first
    other input (``beta * t`` for ``addmm``)."""
    params = tensor_params(op)

    def formula(t: tuple[Any, ...], args: Any, kwargs: Any, result: Any) -> Any:
        total = None
        for i, p in enumerate(params):
            ti = t[i]
            if ti is None:
                continue
            if p[2]:  # Tensor[] (einsum's operands): each element in turn
                xs = get_param(args, kwargs, p)
                for j, tj in enumerate(ti):
                    if tj is not None:
                        items = list(xs)
                        items[j] = tj
                        total = _add(
                            total,
                            op(
                                *replaced(op, args, kwargs, {i: items})[0],
                                **replaced(op, args, kwargs, {i: items})[1],
                            ),
                        )
                continue
            new: dict[int, Any] = {i: ti}
            if additive is not None and i != additive:
                x = get_param(args, kwargs, params[additive])
                new[additive] = None if x is None else aten.zeros_like.default(x)
            elif additive is not None:
                other = 0 if additive != 0 else 1
                new[other] = aten.zeros_like.default(get_param(args, kwargs, params[other]))
            a, k = replaced(op, args, kwargs, new)
            total = _add(total, op(*a, **k))
        return total

    return formula


def _zero_scalar(op: OpOverload, name: str) -> Formula:
    """An op affine in its tensor input through a Scalar ``name`` (``masked_fill`` with a
    value): the op of the tangent with that Scalar zero."""

    def formula(t: tuple[Any, ...], args: Any, kwargs: Any, result: Any) -> Any:
        if t[0] is None:
            return None
        pos = [a.name for a in op._schema.arguments].index(name)
        a = list(args)
        k = dict(kwargs)
        if pos < len(a):
            a[pos] = 0
        else:
            k[name] = 0
        a[0] = t[0]
        return op(*a, **k)

    return formula


def _softmax(t: Any, a: Any, k: Any, y: Any) -> Any:
    dim = a[1]
    return y * (t[0] - (y * t[0]).sum(dim, keepdim=True))


def _log_softmax(t: Any, a: Any, k: Any, y: Any) -> Any:
    dim = a[1]
    return t[0] - (y.exp() * t[0]).sum(dim, keepdim=True)


def _dropout(t: Any, a: Any, k: Any, r: Any) -> Any:
    p, train = a[1], a[2] if len(a) > 2 else k.get("train")
    if train is False:
        return (t[0], None)
    scale = 0.0 if p == 1 else 1.0 / (1.0 - p)
    return (aten.native_dropout_backward.default(t[0], r[1], scale), None)


def _conv(t: Any, a: Any, k: Any, r: Any) -> Any:
    """Bilinear in (input, weight), plus the bias broadcast over channels."""
    x, w, b, *rest = a
    total = None
    if t[0] is not None:
        total = aten.convolution.default(t[0], w, None, *rest)
    if t[1] is not None:
        total = _add(total, aten.convolution.default(x, t[1], None, *rest))
    if len(t) > 2 and t[2] is not None:
        shape = [1] * r.dim()
        shape[1] = -1
        total = _add(total, t[2].reshape(shape).expand(r.shape))
    return total


def _logcumsumexp(t: Any, a: Any, k: Any, y: Any) -> Any:
    """``sum over j <= i of exp(x[j] - y[i]) t[j]``, as log-cum-sum-exps of the positive and
    the negative parts of ``t`` (no overflow for large ``x``)."""
    x, dim = a[0], a[1] if len(a) > 1 else k["dim"]
    if x.ndim == 0:
        return t[0]
    pos = (x + t[0].clamp(min=0).log()).logcumsumexp(dim)
    neg = (x + (-t[0]).clamp(min=0).log()).logcumsumexp(dim)
    return (pos - y).exp() - (neg - y).exp()


def _pnorm_tangent(diff: Any, td: Any, d: Any, p: float) -> Any:
    """The derivative of ``d = ||diff||_p`` (over the last dim) along ``td`` (zero where
    ``d`` is, as PyTorch's subgradient)."""
    zero = d == 0
    safe = aten.where.ScalarSelf(zero, 1.0, d)
    if p == 0:
        return aten.zeros_like.default(d)
    if p == float("inf"):
        mask = diff.abs() == d.unsqueeze(-1)
        num = (mask * diff.sign() * td).sum(-1) / mask.sum(-1).clamp(min=1)
    elif p == 2:
        num = (diff * td).sum(-1) / safe
    else:
        num = (diff.abs().pow(p - 1) * diff.sign() * td).sum(-1) / safe.pow(p - 1)
    return aten.where.ScalarSelf(zero, 0.0, num)


def _cdist(t: Any, a: Any, k: Any, d: Any) -> Any:
    """The p-norm distance's derivative along ``t1[i] - t2[j]``."""
    x1, x2, p = a[0], a[1], a[2]
    t1 = t[0] if t[0] is not None else aten.zeros_like.default(x1)
    t2 = t[1] if t[1] is not None else aten.zeros_like.default(x2)
    diff = x1.unsqueeze(-2) - x2.unsqueeze(-3)
    return _pnorm_tangent(diff, t1.unsqueeze(-2) - t2.unsqueeze(-3), d, p)


def _pdist(t: Any, a: Any, k: Any, d: Any) -> Any:
    """pdist's rows ``i < j``, as ``_cdist``'s."""
    x = a[0]
    p = a[1] if len(a) > 1 else k.get("p", 2.0)
    n = x.shape[0]
    i, j = aten.triu_indices.default(n, n, 1, device=x.device)
    return _pnorm_tangent(x[i] - x[j], t[0][i] - t[0][j], d, p)


def _grid_sampler(backward: OpOverload) -> Formula:
    """Linear in the input; in the grid, each output location depends on its own grid
    point only, so ``backward`` with a one-hot gradient per channel gives that channel's
    derivative at every location at once (one backward per channel)."""

    def formula(t: Any, a: Any, k: Any, out: Any) -> Any:
        x, grid, *rest = a
        total = None
        if t[0] is not None:
            total = aten.grid_sampler_2d.default(t[0], grid, *rest) if grid.ndim == 4 else (
                aten.grid_sampler_3d.default(t[0], grid, *rest))  # fmt: skip
        if t[1] is not None:
            chans = []
            for c in range(out.shape[1]):
                g = aten.zeros_like.default(out)
                g[:, c] = 1.0
                dgrid = backward(g, x, grid, *rest, [False, True])[1]
                chans.append((dgrid * t[1]).sum(-1))
            total = _add(total, aten.stack.default(chans, 1))
        return total

    return formula


def _flash_attention(t: Any, a: Any, k: Any, r: Any) -> Any:
    """``out = softmax(scale * q @ kᵀ + mask) @ v``, differentiated through that composition
    (PyTorch's fused op has no forward derivative; its logsumexp output has no tangent)."""
    q, key, v = a[0], a[1], a[2]
    is_causal = a[4] if len(a) > 4 else k.get("is_causal", False)
    mask, scale = k.get("attn_mask"), k.get("scale")
    tq, tk, tv = t[0], t[1], t[2]
    rep = q.shape[1] // key.shape[1]
    if rep != 1:  # grouped heads: each key/value head serves ``rep`` query heads
        key, v = key.repeat_interleave(rep, 1), v.repeat_interleave(rep, 1)
        tk = None if tk is None else tk.repeat_interleave(rep, 1)
        tv = None if tv is None else tv.repeat_interleave(rep, 1)
    c = 1.0 / math.sqrt(q.shape[-1]) if scale is None else scale
    logits = (q @ key.mT) * c
    if is_causal:
        lq, lk = q.shape[-2], key.shape[-2]
        keep = aten.ones.default([lq, lk], dtype=dtypes.bool_, device=q.device).tril()
        logits = logits.masked_fill(~keep, -math.inf)
    if mask is not None:  # added as numbers, a bool mask too, as the fused kernel does
        logits = logits + mask
    p = aten._softmax.default(logits, -1, False)
    out = None
    if tq is not None or tk is not None:
        ds = (tq @ key.mT) * c if tq is not None else None
        if tk is not None:
            ds = (q @ tk.mT) * c if ds is None else ds + (q @ tk.mT) * c
        out = (p * (ds - (p * ds).sum(-1, keepdim=True))) @ v
    if tv is not None:
        out = p @ tv if out is None else out + p @ tv
    return (out, None)


def _tangent_of_first(t: Any, a: Any, k: Any, r: Any) -> Any:
    return t[0]


for _op in (aten.mm.default, aten.bmm.default, aten.mv.default, aten.dot.default,
            aten.vdot.default, aten.mul.Tensor, aten.linalg_cross.default,
            aten.einsum.default):  # fmt: skip
    defjvp(_op, multilinear(_op))
for _op in (aten.addmm.default, aten.addmv.default, aten.addr.default,
            aten.baddbmm.default, aten.addbmm.default):  # fmt: skip
    defjvp(_op, multilinear(_op, additive=0))
defjvp(aten.convolution.default, _conv)
defjvp(aten._softmax.default, _softmax)
defjvp(aten.logcumsumexp.default, _logcumsumexp)
defjvp(aten._cdist_forward.default, _cdist)
defjvp(aten._pdist_forward.default, _pdist)
defjvp(aten.grid_sampler_2d.default, _grid_sampler(aten.grid_sampler_2d_backward.default))
defjvp(aten.grid_sampler_3d.default, _grid_sampler(aten.grid_sampler_3d_backward.default))
defjvp(aten._log_softmax.default, _log_softmax)
defjvp(aten._scaled_dot_product_flash_attention_for_cpu.default, _flash_attention)
defjvp(aten.native_dropout.default, _dropout)
defjvp(aten.masked_fill.Scalar, _zero_scalar(aten.masked_fill.Scalar, "value"))
defjvp(aten.index_fill.int_Scalar, _zero_scalar(aten.index_fill.int_Scalar, "value"))
defjvp(aten.scatter.value, _zero_scalar(aten.scatter.value, "value"))
defjvp(aten.constant_pad_nd.default, _zero_scalar(aten.constant_pad_nd.default, "value"))
defjvp(aten.where.ScalarOther, lambda t, a, k, r: aten.where.ScalarOther(a[0], t[1], 0.0)
       if t[1] is not None else None)  # fmt: skip
defjvp(aten.where.ScalarSelf, lambda t, a, k, r: aten.where.ScalarSelf(a[0], 0.0, t[1])
       if t[1] is not None else None)  # fmt: skip
defjvp(aten.add.Scalar, _tangent_of_first)
defjvp(aten.sub.Scalar, _tangent_of_first)
defjvp(aten.rsub.Scalar, lambda t, a, k, r: -t[0] * (a[2] if len(a) > 2 else k.get("alpha", 1)))
defjvp(aten.fill.Scalar, lambda t, a, k, r: aten.zeros_like.default(r))
