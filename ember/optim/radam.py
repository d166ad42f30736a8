"""``RAdam``: Adam whose adaptive step is switched on, and rectified, only once the variance
of the second-moment estimate is tractable (Liu et al.); before that, SGD with momentum."""

from __future__ import annotations

import math
from typing import Any

from ember._tensor import Tensor
from ember.ops.registry import ops
from ember.optim._hyperparameters import check_hyperparameters
from ember.optim.optimizer import (
    Optimizer,
    adam_moments,
    adam_moments_foreach,
    refuse_unsupported,
)

aten = ops.aten

__all__ = ["RAdam"]


class RAdam(Optimizer):
    """RAdam, PyTorch's formulation: while the approximated SMA length ``rho_t`` is at most 5
    the step is ``lr * exp_avg / (1 - beta1**t)``; after, Adam's step times the rectification.

    >>> w = ember.nn.Parameter(ember.ones(2)); w.grad = ember.ones(2)
    >>> ember.optim.RAdam([w], lr=0.1).step(); w
    Parameter containing:
    tensor([0.9000, 0.9000], requires_grad=True)
    """

    def __init__(
        self,
        params: Any,
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        decoupled_weight_decay: bool = False,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
    ) -> None:
        check_hyperparameters("RAdam", lr=lr, eps=eps, betas=betas, weight_decay=weight_decay)
        refuse_unsupported("RAdam", capturable=capturable, differentiable=differentiable)
        defaults = dict(
            lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, maximize=maximize,
            foreach=foreach, capturable=capturable,
            decoupled_weight_decay=decoupled_weight_decay, differentiable=differentiable,
        )  # fmt: skip
        super().__init__(params, defaults)

    _state_buffers = ("exp_avg", "exp_avg_sq")

    @staticmethod
    def _step_size(group: dict[str, Any], step: float) -> tuple[float, bool]:
        """The coefficient of the update at step ``step`` and whether it is rectified: then
        ``p += c * exp_avg / (sqrt(exp_avg_sq) + eps)``, else ``p += c * exp_avg``."""
        lr, (beta1, beta2) = group["lr"], group["betas"]
        correction1, correction2 = 1 - beta1**step, 1 - beta2**step
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * step * (beta2**step) / correction2
        if rho_t <= 5.0:
            return -lr / correction1, False
        rect = math.sqrt(
            (rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)
        )
        return -lr * rect * math.sqrt(correction2) / correction1, True

    def _update(self, p: Tensor, group: dict[str, Any]) -> None:
        state, grad = self._begin_update(p, group)
        p, grad, exp_avg, exp_avg_sq = adam_moments(p, grad, state, group["betas"])
        coef, rectified = self._step_size(group, state["step"].item())
        if rectified:
            p.addcdiv_(exp_avg, exp_avg_sq.sqrt().add_(group["eps"]), value=coef)
        else:
            p.add_(exp_avg.mul(coef))

    def _update_foreach(self, group: dict[str, Any]) -> None:
        """``_update`` for every parameter of the group at once, one foreach op per step
        (parameters at different steps may fall on both sides of the rectification)."""
        for ps, sts in self._with_grads(group):
            steps = self._count_steps(sts)
            grads = self._grads(ps, group)
            ps, grads, exp_avgs, exp_avg_sqs = adam_moments_foreach(ps, grads, sts, group["betas"])
            sizes = [self._step_size(group, s.item()) for s in steps]
            rect = [i for i, (_, r) in enumerate(sizes) if r]
            plain = [i for i, (_, r) in enumerate(sizes) if not r]
            if rect:
                denom = aten._foreach_sqrt.default([exp_avg_sqs[i] for i in rect])
                aten._foreach_add_.Scalar(denom, group["eps"])
                aten._foreach_addcdiv_.ScalarList(
                    [ps[i] for i in rect], [exp_avgs[i] for i in rect], denom,
                    [sizes[i][0] for i in rect],
                )  # fmt: skip
            if plain:
                scaled = aten._foreach_mul.ScalarList(
                    [exp_avgs[i] for i in plain], [sizes[i][0] for i in plain]
                )
                aten._foreach_add_.List([ps[i] for i in plain], scaled)
