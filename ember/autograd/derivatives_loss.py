"""Derivative lines of the loss ops (format: ``function_table.py``), PyTorch's
derivatives.yaml entries: each loss through its backward op, each backward op (double
backward) by formulas in ember ops. ``_ctc_loss_backward`` has none, as in PyTorch. The
compositions (``kl_div``, ``ctc_loss``, ...) need no line: their parts are differentiated.
"""

from __future__ import annotations

from typing import Any

from ember.autograd.function_table import defvjp
from ember.ops.registry import ops

aten = ops.aten
_NONE, _MEAN, _SUM = 0, 1, 2
_EPS = 1e-12


def _scaled(t: Any, reduction: int, numel: int) -> Any:
    return t / numel if reduction == _MEAN else t


def _to_grad_output(t: Any, grad_output: Any, reduction: int) -> Any:
    """The gradient for a backward op's ``grad_output`` from its elementwise terms ``t``:
    summed when the loss was reduced (``grad_output`` is then 0-dim)."""
    return t if reduction == _NONE else t.sum().reshape(grad_output.shape)


# --------------------------------------------------------------------------- losses


def _bce_target(g: Any, self: Any, target: Any, weight: Any, reduction: int) -> Any:
    # d/dt of -(t log x + (1 - t) log(1 - x)) = log(1 - x) - log(x) = -logit(x)
    out = g * ((-self).log1p() - self.log())
    if weight is not None:
        out = out * weight
    return _scaled(out, reduction, target.numel())


def _bce_weight(g: Any, self: Any, target: Any, weight: Any, reduction: int) -> Any:
    # the unweighted loss, as the kernel computes it (logs clamped at -100); PyTorch refuses
    # this gradient, ember gives it
    if weight is None:
        return None
    unweighted = aten.binary_cross_entropy.default(self.detach(), target.detach(), None, 0)
    return _scaled(unweighted * g, reduction, self.numel())


defvjp(aten.binary_cross_entropy.default, lambda g, self, target, weight=None, reduction=_MEAN: (
    aten.binary_cross_entropy_backward.default(g, self, target, weight, reduction),
    _bce_target(g, self, target, weight, reduction),
    _bce_weight(g, self, target, weight, reduction)))  # fmt: skip
defvjp(aten.smooth_l1_loss.default, lambda g, self, target, reduction=_MEAN, beta=1.0: (
    aten.smooth_l1_loss_backward.default(g, self, target, reduction, beta),
    aten.smooth_l1_loss_backward.default(g, target, self, reduction, beta)))  # fmt: skip
defvjp(aten.huber_loss.default, lambda g, self, target, reduction=_MEAN, delta=1.0: (
    aten.huber_loss_backward.default(g, self, target, reduction, delta),
    aten.huber_loss_backward.default(g, target, self, reduction, delta)))  # fmt: skip
defvjp(aten.soft_margin_loss.default, lambda g, self, target, reduction=_MEAN: (
    aten.soft_margin_loss_backward.default(g, self, target, reduction),
    # the target's gradient, which PyTorch refuses: the loss is symmetric in self and target
    aten.soft_margin_loss_backward.default(g, target, self, reduction)))  # fmt: skip
defvjp(
    aten._ctc_loss.default,
    lambda g, log_probs, targets, input_lengths, target_lengths, blank=0, zero_infinity=False, *, result: (  # noqa: E501
        aten._ctc_loss_backward.default(
            g[0],
            log_probs,
            targets,
            input_lengths,
            target_lengths,
            result[0],
            result[1],
            blank,
            zero_infinity,
        ),
        None,
    ),  # fmt: skip
    outputs=(True, False),  # log_alpha carries no gradient, as in PyTorch
    name="CtcLossBackward0",  # PyTorch's name: derivatives.yaml calls the op _ctc_loss
)

# --------------------------------------------------------------------------- double backward


def _bce_double(
    g: Any, grad_output: Any, self: Any, target: Any, weight: Any = None, reduction: int = _MEAN
) -> tuple[Any, Any, Any, None]:
    n = self.numel()
    w = 1 if weight is None else weight
    d = (self - target) / ((self + _EPS) * (1 - self + _EPS))
    g_out = _to_grad_output(_scaled(d * g * w, reduction, n), grad_output, reduction)
    gi = (self * self - 2 * self * target + target) / (
        (self + _EPS).pow(2) * (1 - self + _EPS).pow(2)
    )
    g_self = _scaled(gi * g * grad_output * w, reduction, n)
    denom = (self * (1 - self)).detach().clamp_min(_EPS)
    g_target = _scaled(-g * grad_output * w / denom, reduction, n)
    g_weight = None
    if weight is not None:  # the kernel is linear in the weight
        plain = aten.binary_cross_entropy_backward.default(grad_output, self, target, None,
                                                           reduction)  # fmt: skip
        g_weight = g * plain
    return g_out, g_self, g_target, g_weight


def _smooth_l1_double(
    g: Any, grad_output: Any, self: Any, target: Any, reduction: int, beta: float
) -> tuple[Any, Any, Any]:
    n = self.numel()
    d = self - target
    if beta <= 0:
        slope = d.sign()
        inside = aten.zeros_like.default(d)
    else:
        slope = (d / beta).clamp(-1, 1)
        inside = (d.abs() < beta).to(g.dtype) / beta
    g_out = _to_grad_output(_scaled(slope * g, reduction, n), grad_output, reduction)
    g_self = _scaled(g * grad_output * inside, reduction, n)
    return g_out, g_self, -g_self


def _huber_double(
    g: Any, grad_output: Any, self: Any, target: Any, reduction: int, delta: float
) -> tuple[Any, Any, Any]:
    n = self.numel()
    d = self - target
    g_out = _to_grad_output(_scaled(d.clamp(-delta, delta) * g, reduction, n), grad_output,
                            reduction)  # fmt: skip
    g_self = _scaled(g * grad_output * (d.abs() < delta).to(g.dtype), reduction, n)
    return g_out, g_self, -g_self


def _soft_margin_double(
    g: Any, grad_output: Any, self: Any, target: Any, reduction: int
) -> tuple[Any, Any, Any]:
    n = self.numel()
    z = (-target * self).exp()
    first = -target * z / (1 + z)  # d loss / d self
    g_out = _to_grad_output(_scaled(first * g, reduction, n), grad_output, reduction)
    second = target * target * z / ((1 + z) * (1 + z))
    g_self = _scaled(g * grad_output * second, reduction, n)
    # d/dt of -t z / (1 + z) with z = exp(-t x): -(z / (1 + z)) + t x z / (1 + z)^2
    cross = -z / (1 + z) + target * self * z / ((1 + z) * (1 + z))
    g_target = _scaled(g * grad_output * cross, reduction, n)
    return g_out, g_self, g_target


defvjp(aten.binary_cross_entropy_backward.default, _bce_double)
defvjp(aten.smooth_l1_loss_backward.default, _smooth_l1_double)
defvjp(aten.huber_loss_backward.default, _huber_double)
defvjp(aten.soft_margin_loss_backward.default, _soft_margin_double)
