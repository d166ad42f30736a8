"""CPU kernels of the loss ops and their backward ops, vectorised in NumPy.

# NOTE [ctc in log space]
``_ctc_loss`` runs the forward (alpha) recursion of Graves et al. in log space, one time step
per iteration, each step vectorised over the batch and the extended label sequence
``l' = (blank, l1, blank, l2, ..., blank)``: ``alpha_t(s) = lp_t(l'_s) + logsumexp(
alpha_{t-1}(s), alpha_{t-1}(s-1), alpha_{t-1}(s-2) where l'_s != l'_{s-2})``. Samples whose
input is shorter stop early: their entries past ``input_length`` stay -inf, and the loss reads
``alpha`` at each sample's own last step. The backward runs the beta recursion the same way,
from each sample's last step, and forms PyTorch's gradient ``exp(lp) - exp(log(sum over
s with l'_s = c of alpha * beta) + nll - lp)``: the gradient of the loss with respect to the
logits that ``log_softmax`` turned into ``log_probs`` (PyTorch's convention), summed per class
with one batched matmul against the one-hot labels.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ember.backends.cpu._util import Tensor, as_array, quiet_block, wrap
from ember.dispatch.keys import DispatchKey
from ember.library import impl
from ember.ops.native.loss import (
    check_bce,
    check_bce_values,
    check_huber,
    check_reduction,
    check_smooth_l1,
    ctc_geometry,
    floating_loss_dtype,
)
from ember.ops.native.nn import MEAN, SUM
from ember.ops.registry import ops

aten = ops.aten
CPU = DispatchKey.CPU


def _reduce(loss: np.ndarray, reduction: int) -> np.ndarray:
    if reduction == MEAN:
        return as_array(loss.mean(dtype=loss.dtype) if loss.size else np.array(np.nan, loss.dtype))
    if reduction == SUM:
        return as_array(loss.sum(dtype=loss.dtype))
    return loss


def _pair(self: Tensor, target: Tensor, op: str, kernel: str) -> tuple[np.ndarray, np.ndarray]:
    """Both inputs in their promoted floating dtype."""
    d = floating_loss_dtype(self, target, op, kernel).np
    return self._edata.astype(d, copy=False), target._edata.astype(d, copy=False)


def _norm(reduction: int, self: Tensor) -> float:
    """The mean reduction's ``1 / numel`` (1 otherwise)."""
    return 1.0 / self.numel() if reduction == MEAN and self.numel() else 1.0


def _result(arr: Any, like: np.ndarray) -> Tensor:
    return wrap(np.asarray(arr).astype(like.dtype, copy=False))


# --------------------------------------------------------------------------- binary cross entropy


@impl(aten.binary_cross_entropy.default, CPU)
def binary_cross_entropy(
    self: Tensor, target: Tensor, weight: Tensor | None = None, reduction: int = MEAN
) -> Tensor:
    check_bce(self, target, weight, reduction)
    x, t = self._edata, target._edata
    w = None if weight is None else weight._edata
    check_bce_values(x, t)
    with quiet_block():
        loss = (t - 1) * np.maximum(np.log1p(-x), -100) - t * np.maximum(np.log(x), -100)
        if w is not None:
            loss = loss * w
    return wrap(_reduce(np.asarray(loss, x.dtype), reduction))


@impl(aten.binary_cross_entropy_backward.default, CPU)
def binary_cross_entropy_backward(
    grad_output: Tensor,
    self: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    reduction: int = MEAN,
) -> Tensor:
    check_bce(self, target, weight, reduction)
    x, t, w = self._edata, target._edata, None if weight is None else weight._edata
    with quiet_block():
        g = (x - t) / np.maximum((1 - x) * x, 1e-12) * grad_output._edata
        if w is not None:
            g = g * w
        g = g * _norm(reduction, self)
    return _result(np.broadcast_to(g, x.shape) if g.shape != x.shape else g, x)


# --------------------------------------------------------------------------- smooth L1, Huber


@impl(aten.smooth_l1_loss.default, CPU)
def smooth_l1_loss(
    self: Tensor, target: Tensor, reduction: int = MEAN, beta: float = 1.0
) -> Tensor:
    check_reduction(reduction, "smooth_l1_loss")
    check_smooth_l1(beta)
    x, t = _pair(self, target, "smooth_l1_loss", "smooth_l1_cpu")
    with quiet_block():
        z = np.abs(x - t)
        loss = z if beta == 0 else np.where(z < beta, 0.5 * z * z / beta, z - 0.5 * beta)
    return wrap(_reduce(np.asarray(loss, x.dtype), reduction))


def _difference_backward(
    grad_output: Tensor,
    self: Tensor,
    target: Tensor,
    reduction: int,
    names: tuple[str, str],
    rule: Callable[[np.ndarray, np.ndarray], np.ndarray],
) -> Tensor:
    """The backward of a loss of ``self - target`` (smooth L1, Huber): ``rule(d, g)``, ``d``
    the difference and ``g`` the output's gradient scaled for the reduction; ``names`` are
    the op's and PyTorch's kernel's, for the errors."""
    check_reduction(reduction, names[0])
    x, t = _pair(self, target, *names)
    g = grad_output._edata * _norm(reduction, self)
    with quiet_block():
        out = rule(x - t, g)
    return _result(out, self._edata)


@impl(aten.smooth_l1_loss_backward.default, CPU)
def smooth_l1_loss_backward(
    grad_output: Tensor, self: Tensor, target: Tensor, reduction: int, beta: float
) -> Tensor:
    def rule(d: np.ndarray, g: np.ndarray) -> np.ndarray:
        if beta <= 0:  # PyTorch's l1_loss_backward
            return np.sign(d) * g
        return np.where(d <= -beta, -g, np.where(d >= beta, g, d * g / beta))

    names = ("smooth_l1_loss_backward", "smooth_l1_backward_cpu")
    return _difference_backward(grad_output, self, target, reduction, names, rule)


@impl(aten.huber_loss.default, CPU)
def huber_loss(self: Tensor, target: Tensor, reduction: int = MEAN, delta: float = 1.0) -> Tensor:
    check_reduction(reduction, "huber_loss")
    check_huber(delta)
    x, t = _pair(self, target, "huber_loss", "huber_cpu")
    with quiet_block():
        z = np.abs(x - t)
        loss = np.where(z < delta, 0.5 * z * z, delta * (z - 0.5 * delta))
    # the result has the input's dtype (PyTorch's output is allocated like the input)
    return wrap(_reduce(np.asarray(loss, x.dtype), reduction).astype(self.dtype.np, copy=False))


@impl(aten.huber_loss_backward.default, CPU)
def huber_loss_backward(
    grad_output: Tensor, self: Tensor, target: Tensor, reduction: int, delta: float
) -> Tensor:
    def rule(d: np.ndarray, g: np.ndarray) -> np.ndarray:
        return np.where(d <= -delta, -g * delta, np.where(d >= delta, g * delta, d * g))

    names = ("huber_loss_backward", "huber_backward_cpu")
    return _difference_backward(grad_output, self, target, reduction, names, rule)


# --------------------------------------------------------------------------- soft margin


@impl(aten.soft_margin_loss.default, CPU)
def soft_margin_loss(self: Tensor, target: Tensor, reduction: int = MEAN) -> Tensor:
    check_reduction(reduction, "soft_margin_loss")
    x, t = _pair(self, target, "soft_margin_loss", "soft_margin_loss")
    with quiet_block():
        loss = np.log1p(np.exp(-t * x))
    return wrap(_reduce(np.asarray(loss, x.dtype), reduction))


@impl(aten.soft_margin_loss_backward.default, CPU)
def soft_margin_loss_backward(
    grad_output: Tensor, self: Tensor, target: Tensor, reduction: int
) -> Tensor:
    check_reduction(reduction, "soft_margin_loss_backward")
    x, t = _pair(self, target, "soft_margin_loss_backward", "soft_margin_loss_backward")
    with quiet_block():
        z = np.exp(-t * x)
        out = -_norm(reduction, self) * t * z / (1 + z) * grad_output._edata
    return _result(out, self._edata)


# --------------------------------------------------------------------------- CTC


def _ctc_labels(
    targets: Tensor, target_lengths: Sequence[int], n: int, s_max: int, c: int
) -> np.ndarray:
    """The targets as a padded ``(N, S)`` int64 array (padding 0), range-checked."""
    tg = targets._edata.astype(np.int64, copy=False)
    lengths = np.asarray(target_lengths, np.int64)
    keep = np.arange(s_max)[None, :] < lengths[:, None]
    if tg.ndim == 1:
        starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
        idx = np.minimum(starts[:, None] + np.arange(s_max)[None, :], max(tg.shape[0] - 1, 0))
        labels = tg[idx] if tg.size else np.zeros((n, s_max), np.int64)
    else:
        labels = tg[:, :s_max]
    labels = np.where(keep, labels, 0)
    if ((labels < 0) | (labels >= c)).any():
        bad = labels[(labels < 0) | (labels >= c)][0]
        raise RuntimeError(f"ctc_loss: target index {int(bad)} is out of range for {c} classes")
    return labels


def _logsumexp3(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    m = np.maximum(np.maximum(a, b), c)
    m = np.where(m == -np.inf, 0, m)
    return np.log(np.exp(a - m) + np.exp(b - m) + np.exp(c - m)) + m


def _ctc_setup(
    log_probs: Tensor,
    targets: Tensor,
    input_lengths: Sequence[int],
    target_lengths: Sequence[int],
    blank: int,
) -> tuple[Any, ...]:
    """The pieces both recursions use: the extended labels ``(N, L)``, which of them may
    skip from two back, ``lp`` at them ``(N, T, L)``, lengths and sizes."""
    t_max, n, c, s_max = ctc_geometry(log_probs, targets, input_lengths, target_lengths, blank)
    labels = _ctc_labels(targets, target_lengths, n, s_max, c)
    width = 2 * s_max + 1
    ext = np.full((n, width), blank, np.int64)
    ext[:, 1::2] = labels
    skip = np.zeros((n, width), np.bool_)
    skip[:, 3::2] = labels[:, 1:] != labels[:, :-1]  # a label may follow a different one
    lp = log_probs._edata.transpose(1, 0, 2)  # (N, T, C)
    lpe = np.take_along_axis(lp, np.broadcast_to(ext[:, None, :], (n, t_max, width)), axis=2)
    il = np.asarray(input_lengths, np.int64)
    tl = np.asarray(target_lengths, np.int64)
    return ext, skip, lpe, il, tl, t_max, n, c, width


def _shift(x: np.ndarray, k: int, fill: float) -> np.ndarray:
    """``x`` moved ``k`` places along the last axis (right for k > 0), filled with ``fill``."""
    out = np.full_like(x, fill)
    if k > 0:
        out[:, k:] = x[:, :-k]
    else:
        out[:, :k] = x[:, -k:]
    return out


@impl(aten._ctc_loss.default, CPU)
def _ctc_loss(
    log_probs: Tensor,
    targets: Tensor,
    input_lengths: Sequence[int],
    target_lengths: Sequence[int],
    blank: int = 0,
    zero_infinity: bool = False,
) -> tuple[Tensor, Tensor]:
    ext, skip, lpe, il, tl, t_max, n, c, width = _ctc_setup(
        log_probs, targets, input_lengths, target_lengths, blank
    )
    dt = lpe.dtype
    ninf = -np.inf
    alpha = np.full((n, t_max, width), ninf, dt)
    valid = np.arange(width)[None, :] < (2 * tl + 1)[:, None]  # (N, L)
    rows = np.arange(n)
    if t_max:
        alpha[:, 0, 0] = lpe[:, 0, 0]
        first = tl > 0
        alpha[rows[first], 0, 1] = lpe[rows[first], 0, 1]
    with quiet_block():
        for t in range(1, t_max):
            prev = alpha[:, t - 1]
            a3 = np.where(skip, _shift(prev, 2, ninf), ninf)
            alpha[:, t] = _logsumexp3(prev, _shift(prev, 1, ninf), a3) + lpe[:, t]
        alpha = np.where(valid[:, None, :], alpha, ninf)
        alpha[np.arange(t_max)[None, :] >= il[:, None]] = ninf
        last = np.maximum(il - 1, 0)
        end = alpha[rows, last]  # (N, L)
        a = end[rows, 2 * tl]
        b = np.where(tl > 0, end[rows, np.maximum(2 * tl - 1, 0)], ninf)
        m = np.maximum(a, b)
        m = np.where(m == ninf, 0, m)
        nll = -(np.log(np.exp(a - m) + np.exp(b - m)) + m)
        nll = np.where(il > 0, nll, np.where(tl == 0, 0, np.inf))
    return wrap(nll.astype(dt, copy=False)), wrap(alpha.astype(dt, copy=False))


@impl(aten._ctc_loss_backward.default, CPU)
def _ctc_loss_backward(
    grad: Tensor,
    log_probs: Tensor,
    targets: Tensor,
    input_lengths: Sequence[int],
    target_lengths: Sequence[int],
    neg_log_likelihood: Tensor,
    log_alpha: Tensor,
    blank: int,
    zero_infinity: bool = False,
) -> Tensor:
    ext, skip, lpe, il, tl, t_max, n, c, width = _ctc_setup(
        log_probs, targets, input_lengths, target_lengths, blank
    )
    dt = lpe.dtype
    ninf = -np.inf
    rows = np.arange(n)
    beta = np.full((n, t_max, width), ninf, dt)
    start = np.full((n, width), ninf, dt)  # beta at each sample's last step
    last = np.maximum(il - 1, 0)
    start[rows, 2 * tl] = lpe[rows, last, 2 * tl]
    has = tl > 0
    start[rows[has], 2 * tl[has] - 1] = lpe[rows[has], last[has], 2 * tl[has] - 1]
    skip_from = _shift(skip, -2, False)  # s may jump to s + 2
    nxt = np.full((n, width), ninf, dt)
    with quiet_block():
        for t in range(t_max - 1, -1, -1):
            b3 = np.where(skip_from, _shift(nxt, -2, ninf), ninf)
            cur = _logsumexp3(nxt, _shift(nxt, -1, ninf), b3) + lpe[:, t]
            cur = np.where((t == il - 1)[:, None], start, cur)
            cur[t > il - 1] = ninf
            beta[:, t] = cur
            nxt = cur
        ab = log_alpha._edata + beta  # (N, T, L)
        m = ab.max(axis=2, keepdims=True) if width else np.zeros((n, t_max, 1), dt)
        m = np.where(m == ninf, 0, m)
        onehot = (ext[:, :, None] == np.arange(c)[None, None, :]).astype(dt)  # (N, L, C)
        lcab = np.log(np.matmul(np.exp(ab - m), onehot)) + m  # (N, T, C)
        lp = log_probs._edata.transpose(1, 0, 2)
        nll = neg_log_likelihood._edata[:, None, None]
        g = (np.exp(lp) - np.exp(lcab + nll - lp)) * grad._edata.reshape(n, 1, 1)
        g = np.where((np.arange(t_max)[None, :] < il[:, None])[:, :, None], g, 0)
        if zero_infinity:
            g = np.where((neg_log_likelihood._edata == np.inf)[:, None, None], 0, g)
    return wrap(np.ascontiguousarray(g.transpose(1, 0, 2)).astype(dt, copy=False))
