"""``Adam``: adaptive moment estimation (Kingma & Ba), optionally AMSGrad and decoupled
weight decay (which is ``AdamW``)."""

from __future__ import annotations

import math
from typing import Any

import ember
from ember._tensor import Tensor
from ember.ops.registry import ops
from ember.optim._hyperparameters import check_hyperparameters
from ember.optim.optimizer import Optimizer, adam_moments, adam_moments_foreach, as_real

aten = ops.aten

__all__ = ["Adam"]


class Adam(Optimizer):
    """Adam, PyTorch's single-tensor formulation (bias-corrected moments; ``eps`` added
    after the square root).

    >>> w = ember.nn.Parameter(ember.ones(2)); w.grad = ember.ones(2)
    >>> ember.optim.Adam([w], lr=0.1).step(); w
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
        amsgrad: bool = False,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
        decoupled_weight_decay: bool = False,
    ) -> None:
        check_hyperparameters("Adam", lr=lr, eps=eps, betas=betas, weight_decay=weight_decay)
        if capturable or differentiable or fused:
            raise NotImplementedError(
                f"{type(self).__name__}: capturable, differentiable and fused are not supported "
                "by ember; leave them unset (the single-tensor update gives the same values)"
            )
        defaults = dict(
            lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
            maximize=maximize, foreach=foreach, capturable=capturable,
            differentiable=differentiable, fused=fused,
            decoupled_weight_decay=decoupled_weight_decay,
        )  # fmt: skip
        super().__init__(params, defaults)

    def _update_foreach(self, group: dict[str, Any]) -> None:
        """``_update`` for every parameter of the group at once, one foreach op per step."""
        lr, (beta1, beta2), eps = group["lr"], group["betas"], group["eps"]
        for ps, sts in self._with_grads(group):
            grads = self._grads(ps, group)
            steps = self._count_steps(sts)
            ps, grads, exp_avgs, exp_avg_sqs = adam_moments_foreach(ps, grads, sts, group["betas"])
            counts = [s.item() for s in steps]
            step_sizes = [-lr / (1 - beta1**n) for n in counts]
            bias_correction2_sqrt = [math.sqrt(1 - beta2**n) for n in counts]
            second = exp_avg_sqs
            if group["amsgrad"]:
                second = as_real([st["max_exp_avg_sq"] for st in sts])
                aten._foreach_maximum_.List(second, exp_avg_sqs)
            denom = aten._foreach_sqrt.default(second)
            aten._foreach_div_.ScalarList(denom, bias_correction2_sqrt)
            aten._foreach_add_.Scalar(denom, eps)
            aten._foreach_addcdiv_.ScalarList(ps, exp_avgs, denom, step_sizes)

    def _buffer_names(self, group: dict[str, Any]) -> tuple[str, ...]:
        """The two moments, and with ``amsgrad`` the running maximum of the second."""
        if group["amsgrad"]:
            return ("exp_avg", "exp_avg_sq", "max_exp_avg_sq")
        return ("exp_avg", "exp_avg_sq")

    def _update(self, p: Tensor, group: dict[str, Any]) -> None:
        lr, (beta1, beta2), eps = group["lr"], group["betas"], group["eps"]
        state, grad = self._begin_update(p, group)
        p, grad, exp_avg, exp_avg_sq = adam_moments(p, grad, state, group["betas"])
        step = state["step"].item()
        step_size = lr / (1 - beta1**step)
        bias_correction2_sqrt = math.sqrt(1 - beta2**step)
        second = exp_avg_sq
        if group["amsgrad"]:
            (second,) = as_real([state["max_exp_avg_sq"]])
            second.copy_(ember.maximum(second, exp_avg_sq))
        denom = (second.sqrt() / bias_correction2_sqrt).add_(eps)
        p.addcdiv_(exp_avg, denom, value=-step_size)  # type: ignore[attr-defined]
