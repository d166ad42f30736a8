"""The loss ops: schemas (catalogue) of PyTorch's losses with kernels (``binary_cross_entropy``,
``smooth_l1_loss``, ``huber_loss``, ``soft_margin_loss``, ``_ctc_loss``) and their backward
ops, the checks their CPU kernels and Meta rules share, and the losses PyTorch defines as
compositions (``kl_div``, ``margin_ranking_loss``, ``cosine_embedding_loss``,
``triplet_margin_loss``, ``poisson_nll_loss``, ``hinge_embedding_loss``, ``ctc_loss``).

``reduction`` is PyTorch's enum (0 none, 1 mean, 2 sum), as in ``ember/ops/native/nn.py``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ember.dispatch.keys import DispatchKey
from ember.dtypes import dtype, int64, promote_types
from ember.ops.native._define import define
from ember.ops.native.nn import MEAN, NONE, SUM, check_reduction, reduce_loss
from ember.ops.registry import impl, ops

if TYPE_CHECKING:
    from ember._tensor import Tensor

_FN = ("function",)
_NONE = ()

for _schema in (
    "binary_cross_entropy(Tensor self, Tensor target, Tensor? weight=None, int reduction=1) "
    "-> Tensor",
    "smooth_l1_loss(Tensor self, Tensor target, int reduction=1, float beta=1.0) -> Tensor",
    "huber_loss(Tensor self, Tensor target, int reduction=1, float delta=1.0) -> Tensor",
    "soft_margin_loss(Tensor self, Tensor target, int reduction=1) -> Tensor",
    "kl_div(Tensor self, Tensor target, int reduction=1, *, bool log_target=False) -> Tensor",
    "margin_ranking_loss(Tensor input1, Tensor input2, Tensor target, float margin=0.0, "
    "int reduction=1) -> Tensor",
    "cosine_embedding_loss(Tensor input1, Tensor input2, Tensor target, float margin=0.0, "
    "int reduction=1) -> Tensor",
    "hinge_embedding_loss(Tensor self, Tensor target, float margin=1.0, int reduction=1) -> Tensor",
    "triplet_margin_loss(Tensor anchor, Tensor positive, Tensor negative, float margin=1.0, "
    "float p=2, float eps=1e-06, bool swap=False, int reduction=1) -> Tensor",
    "poisson_nll_loss(Tensor input, Tensor target, bool log_input, bool full, float eps, "
    "int reduction) -> Tensor",
    "ctc_loss.IntList(Tensor log_probs, Tensor targets, int[] input_lengths, "
    "int[] target_lengths, int blank=0, int reduction=1, bool zero_infinity=False) -> Tensor",
    "ctc_loss.Tensor(Tensor log_probs, Tensor targets, Tensor input_lengths, "
    "Tensor target_lengths, int blank=0, int reduction=1, bool zero_infinity=False) -> Tensor",
    "_ctc_loss(Tensor log_probs, Tensor targets, int[] input_lengths, int[] target_lengths, "
    "int blank=0, bool zero_infinity=False) -> (Tensor, Tensor)",
):
    define(_schema, variants=_FN)
for _schema in (
    "binary_cross_entropy_backward(Tensor grad_output, Tensor self, Tensor target, "
    "Tensor? weight=None, int reduction=1) -> Tensor",
    "smooth_l1_loss_backward(Tensor grad_output, Tensor self, Tensor target, int reduction, "
    "float beta) -> Tensor",
    "huber_loss_backward(Tensor grad_output, Tensor self, Tensor target, int reduction, "
    "float delta) -> Tensor",
    "soft_margin_loss_backward(Tensor grad_output, Tensor self, Tensor target, int reduction) "
    "-> Tensor",
    "_ctc_loss_backward(Tensor grad, Tensor log_probs, Tensor targets, int[] input_lengths, "
    "int[] target_lengths, Tensor neg_log_likelihood, Tensor log_alpha, int blank, "
    "bool zero_infinity=False) -> Tensor",
):
    define(_schema, variants=_NONE)

# --------------------------------------------------------------------------- shared checks


def floating_loss_dtype(a: Any, b: Any, op: str, kernel: str) -> dtype:
    """The promoted dtype of a pointwise loss's two inputs; PyTorch has floating kernels only."""
    d = promote_types(a.dtype, b.dtype)
    if not d.is_floating_point:
        raise NotImplementedError(
            f"{op}: \"{kernel}\" not implemented for '{d._short}'; pass floating tensors"
        )
    return d


def check_bce(self: Tensor, target: Tensor, weight: Tensor | None, reduction: int) -> None:
    """binary_cross_entropy takes inputs of one floating dtype (no promotion)."""
    op = "binary_cross_entropy"
    check_reduction(reduction, op)
    for t in (target, weight):
        if t is not None and t.dtype is not self.dtype:
            raise RuntimeError(
                f"{op}: Found dtype {t.dtype._short} but expected {self.dtype._short}; cast the "
                "target and weight to the input's dtype"
            )
    if not self.dtype.is_floating_point:
        raise NotImplementedError(
            f"{op}: \"binary_cross_entropy\" not implemented for '{self.dtype._short}'"
        )


def check_bce_values(self: Any, target: Any) -> None:
    """binary_cross_entropy's input and target are probabilities (NaN is not one)."""
    for name, a in (("input", self), ("target", target)):
        with np.errstate(invalid="ignore"):
            inside = (a >= 0) & (a <= 1)
        if not inside.all():
            raise RuntimeError(
                f"binary_cross_entropy: all elements of {name} should be between 0 and 1 (pass "
                "probabilities, e.g. sigmoid(logits), or use binary_cross_entropy_with_logits)"
            )


def check_smooth_l1(beta: float) -> None:
    if beta < 0:
        raise RuntimeError(
            "smooth_l1_loss: smooth_l1_loss does not support negative values for beta."
        )


def check_huber(delta: float) -> None:
    if delta <= 0:
        raise RuntimeError("huber_loss: huber_loss does not support non-positive values for delta.")


def ctc_geometry(
    log_probs: Tensor,
    targets: Tensor,
    input_lengths: Sequence[int],
    target_lengths: Sequence[int],
    blank: int,
) -> tuple[int, int, int, int]:
    """``(T, N, C, S)`` of ``_ctc_loss`` (S: the longest target); raises PyTorch's errors for
    shapes and lengths (target values are checked by the kernel)."""
    op = "ctc_loss"
    if log_probs.ndim != 3:
        raise RuntimeError(
            f"{op}: log_probs must be 3-D (T, N, C), got {list(log_probs.shape)}; unbatched "
            "inputs go through ctc_loss, which adds the batch dim"
        )
    t_max, n, c = log_probs.shape
    if not log_probs.dtype.is_floating_point:
        raise NotImplementedError(
            f"{op}: \"ctc_loss_cpu\" not implemented for '{log_probs.dtype._short}'"
        )
    if not 0 <= blank < c:
        raise RuntimeError(f"{op}: blank must be in label range, got blank={blank} for {c} classes")
    if len(input_lengths) != n:
        raise RuntimeError(
            f"{op}: input_lengths must be of size batch_size, got {len(input_lengths)} for a "
            f"batch of {n}"
        )
    if len(target_lengths) != n:
        raise RuntimeError(
            f"{op}: target_lengths must be of size batch_size, got {len(target_lengths)} for a "
            f"batch of {n}"
        )
    for length in input_lengths:
        if not 0 <= length <= t_max:
            raise RuntimeError(
                f"{op}: Expected input_lengths to have value at most {t_max}, but got value "
                f"{length} (while checking arguments for ctc_loss_cpu)"
            )
    for length in target_lengths:
        if length < 0:
            raise RuntimeError(f"{op}: target_lengths must be non-negative, got {length}")
    s_max = max(target_lengths, default=0)
    if targets.dtype is not int64 and targets.dtype.name != "int32":
        raise RuntimeError(
            f"{op}: targets must be int64 or int32 class indices, got {targets.dtype}"
        )
    if targets.ndim == 1:
        if targets.shape[0] != sum(target_lengths):  # exactly the lengths, as PyTorch's
            raise RuntimeError(
                f"{op}: Expected tensor to have size {sum(target_lengths)} at dimension 0, but "
                f"got size {targets.shape[0]} for argument #2 'targets' (the concatenated "
                "targets: their size is the sum of target_lengths)"
            )
    elif targets.ndim == 2:
        if targets.shape[0] != n:
            raise RuntimeError(
                f"{op}: Expected targets of batch size {n}, got {list(targets.shape)}"
            )
        if targets.shape[1] < s_max:
            raise RuntimeError(
                f"{op}: Expected tensor to have size at least {s_max} at dimension 1, but got "
                f"size {targets.shape[1]} for argument #2 'targets' (while checking arguments "
                "for ctc_loss_cpu)"
            )
    else:
        raise RuntimeError(
            f"{op}: targets must be 1-D (concatenated) or 2-D (N, S), got {list(targets.shape)}"
        )
    return t_max, n, c, s_max


# --------------------------------------------------------------------------- decompositions

aten = ops.aten
_CIA = DispatchKey.CompositeImplicitAutograd


def _refuse_integral(op: str, *tensors: Tensor) -> None:
    for t in tensors:
        if t.dtype.is_complex:
            raise RuntimeError(f"{op}: Complex inputs not supported.")
        if not t.dtype.is_floating_point:
            raise RuntimeError(f"{op}: Integral inputs not supported.")


@impl(aten.kl_div.default, _CIA)
def kl_div(
    self: Tensor, target: Tensor, reduction: int = MEAN, *, log_target: bool = False
) -> Tensor:
    _refuse_integral("kl_div", self, target)
    if log_target:
        out = target.exp() * (target - self)
    else:  # xlogy(target, target): 0 where target is 0
        xlogy = aten.where.ScalarSelf(target == 0, 0.0, target * target.log())
        out = xlogy - target * self
    return reduce_loss(out, reduction)


@impl(aten.margin_ranking_loss.default, _CIA)
def margin_ranking_loss(
    input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0, reduction: int = MEAN
) -> Tensor:
    out = (-target * (input1 - input2) + margin).clamp_min(0)
    return reduce_loss(out, reduction)


_EPSILON = 1e-12


@impl(aten.cosine_embedding_loss.default, _CIA)
def cosine_embedding_loss(
    input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0, reduction: int = MEAN
) -> Tensor:
    op = "cosine_embedding_loss"
    d = target.ndim
    if d not in (0, 1):
        raise RuntimeError(f"{op}: 0D or 1D target tensor expected, multi-target not supported")
    want = 2 if d == 1 else 1
    if input1.ndim != want or input2.ndim != want:
        raise RuntimeError(
            f"{op}: {d}D target tensor expects {want}D input tensors, but found inputs with "
            f"sizes {list(input1.shape)} and {list(input2.shape)}."
        )
    prod = (input1 * input2).sum(d)
    mag1 = (input1 * input1).sum(d) + _EPSILON
    mag2 = (input2 * input2).sum(d) + _EPSILON
    cos = prod / (mag1 * mag2).sqrt()
    zeros = aten.zeros_like.default(cos)
    pos = aten.where.self(target == 1, 1 - cos, zeros)
    neg = aten.where.self(target == -1, (cos - margin).clamp_min(0), zeros)
    return reduce_loss(pos + neg, reduction)


@impl(aten.hinge_embedding_loss.default, _CIA)
def hinge_embedding_loss(
    self: Tensor, target: Tensor, margin: float = 1.0, reduction: int = MEAN
) -> Tensor:
    zeros = aten.zeros_like.default(self)
    margin_part = aten.where.self(target != 1, (margin - self).clamp_min(0), zeros)
    self_part = aten.where.self(target != -1, self, zeros)
    return reduce_loss(margin_part + self_part, reduction)


@impl(aten.triplet_margin_loss.default, _CIA)
def triplet_margin_loss(
    anchor: Tensor,
    positive: Tensor,
    negative: Tensor,
    margin: float = 1.0,
    p: float = 2,
    eps: float = 1e-6,
    swap: bool = False,
    reduction: int = MEAN,
) -> Tensor:
    a, b, c = anchor.ndim, positive.ndim, negative.ndim
    if not a == b == c:
        raise RuntimeError(
            "triplet_margin_loss: The anchor, positive, and negative tensors are expected to "
            f"have the same number of dimensions, but got: anchor {a}D, positive {b}D, and "
            f"negative {c}D inputs"
        )
    dist_pos = aten.pairwise_distance.default(anchor, positive, p, eps)
    dist_neg = aten.pairwise_distance.default(anchor, negative, p, eps)
    if swap:
        dist_neg = aten.minimum.default(
            dist_neg, aten.pairwise_distance.default(positive, negative, p, eps)
        )
    return reduce_loss((margin + dist_pos - dist_neg).clamp_min(0), reduction)


@impl(aten.poisson_nll_loss.default, _CIA)
def poisson_nll_loss(
    input: Tensor, target: Tensor, log_input: bool, full: bool, eps: float, reduction: int
) -> Tensor:
    if log_input:
        loss = input.exp() - target * input
    else:
        loss = input - target * (input + eps).log()
    if full:
        stirling = target * target.log() - target + 0.5 * (2 * math.pi * target).log()
        loss = loss + stirling.masked_fill(target <= 1, 0)
    return reduce_loss(loss, reduction)


@impl(aten.ctc_loss.IntList, _CIA)
def ctc_loss(
    log_probs: Tensor,
    targets: Tensor,
    input_lengths: Sequence[int],
    target_lengths: Sequence[int],
    blank: int = 0,
    reduction: int = MEAN,
    zero_infinity: bool = False,
) -> Tensor:
    batched = log_probs.ndim == 3
    lp = log_probs if batched else log_probs.unsqueeze(1)
    nll = aten._ctc_loss.default(
        lp, targets.to(int64), list(input_lengths), list(target_lengths), blank, zero_infinity
    )[0]
    if zero_infinity:
        nll = aten.where.self(nll == math.inf, aten.zeros.default([], dtype=nll.dtype), nll)
    if reduction == MEAN:
        lengths = nll.new_tensor(list(target_lengths))  # nll's dtype and device
        return (nll / lengths.clamp_min(1)).mean()
    if reduction == SUM:
        return nll.sum()
    return nll if batched else nll.squeeze(0)


@impl(aten.ctc_loss.Tensor, _CIA)
def ctc_loss_tensor(
    log_probs: Tensor,
    targets: Tensor,
    input_lengths: Tensor,
    target_lengths: Tensor,
    blank: int = 0,
    reduction: int = MEAN,
    zero_infinity: bool = False,
) -> Tensor:
    for name, t in (("input_lengths", input_lengths), ("target_lengths", target_lengths)):
        if t.dtype.is_floating_point or t.dtype.is_complex:
            raise RuntimeError(
                f"ctc_loss: {name} must be integral, got {t.dtype}; pass lengths as int64"
            )
    if "meta" in (log_probs.device.type, input_lengths.device.type, target_lengths.device.type):
        # no lengths to read: the result's shape and dtype need none (the loss per sample,
        # or one reduced value)
        batched = log_probs.ndim == 3
        shape = [log_probs.shape[1]] if reduction == NONE and batched else []
        return aten.zeros.default(shape, dtype=log_probs.dtype, device=log_probs.device)
    il = [int(v) for v in input_lengths.reshape(-1).tolist()]
    tl = [int(v) for v in target_lengths.reshape(-1).tolist()]
    return ctc_loss(log_probs, targets, il, tl, blank, reduction, zero_infinity)
