"""``Adamax``: Adam with the infinity norm in place of the second moment (Kingma & Ba, §7)."""

from __future__ import annotations

from typing import Any

import ember
from ember._tensor import Tensor
from ember.ops.registry import ops
from ember.optim._hyperparameters import check_hyperparameters
from ember.optim.optimizer import Optimizer, as_real, refuse_unsupported

aten = ops.aten

__all__ = ["Adamax"]


class Adamax(Optimizer):
    """Adamax, PyTorch's formulation (``exp_inf = max(beta2 * exp_inf, |grad| + eps)``; only
    the first moment is bias-corrected).

    >>> w = ember.nn.Parameter(ember.ones(2)); w.grad = ember.ones(2)
    >>> ember.optim.Adamax([w], lr=0.1).step(); w
    Parameter containing:
    tensor([0.9000, 0.9000], requires_grad=True)
    """

    def __init__(
        self,
        params: Any,
        lr: float = 2e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        foreach: bool | None = None,
        *,
        maximize: bool = False,
        differentiable: bool = False,
        capturable: bool = False,
    ) -> None:
        check_hyperparameters("Adamax", lr=lr, eps=eps, betas=betas, weight_decay=weight_decay)
        refuse_unsupported("Adamax", capturable=capturable, differentiable=differentiable)
        defaults = dict(
            lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, foreach=foreach,
            maximize=maximize, differentiable=differentiable, capturable=capturable,
        )  # fmt: skip
        super().__init__(params, defaults)

    _state_buffers = ("exp_avg", "exp_inf")

    def _update(self, p: Tensor, group: dict[str, Any]) -> None:
        lr, (beta1, beta2), eps = group["lr"], group["betas"], group["eps"]
        state, grad = self._begin_update(p, group)
        p, grad, exp_avg, exp_inf = as_real([p, grad, state["exp_avg"], state["exp_inf"]])
        exp_avg.lerp_(grad, 1 - beta1)
        exp_inf.mul_(beta2)
        exp_inf.copy_(ember.maximum(exp_inf, grad.abs().add_(eps)))
        clr = lr / (1 - beta1 ** state["step"].item())
        p.addcdiv_(exp_avg, exp_inf, value=-clr)

    def _update_foreach(self, group: dict[str, Any]) -> None:
        """``_update`` for every parameter of the group at once, one foreach op per step."""
        lr, (beta1, beta2), eps = group["lr"], group["betas"], group["eps"]
        for ps, sts in self._with_grads(group):
            steps = self._count_steps(sts)
            grads = self._grads(ps, group)
            ps, grads = as_real(ps), as_real(grads)
            exp_avgs = as_real([st["exp_avg"] for st in sts])
            exp_infs = as_real([st["exp_inf"] for st in sts])
            aten._foreach_lerp_.Scalar(exp_avgs, grads, 1 - beta1)
            aten._foreach_mul_.Scalar(exp_infs, beta2)
            norms = aten._foreach_abs.default(grads)
            aten._foreach_add_.Scalar(norms, eps)
            aten._foreach_maximum_.List(exp_infs, norms)
            minus_clr = [-(lr / (1 - beta1 ** s.item())) for s in steps]
            aten._foreach_addcdiv_.ScalarList(ps, exp_avgs, exp_infs, minus_clr)
