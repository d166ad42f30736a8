"""``NAdam``: Adam with Nesterov momentum (Dozat), with Keras' momentum schedule
``mu_t = beta1 * (1 - 0.5 * 0.96 ** (t * momentum_decay))``."""

from __future__ import annotations

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

__all__ = ["NAdam"]


class NAdam(Optimizer):
    """NAdam, PyTorch's formulation: the product of the ``mu_t`` so far is kept in float32
    state (``mu_product``), and the update mixes the gradient and the first moment.

    >>> w = ember.nn.Parameter(ember.ones(2)); w.grad = ember.ones(2)
    >>> ember.optim.NAdam([w], lr=0.1).step(); w
    Parameter containing:
    tensor([0.8944, 0.8944], requires_grad=True)
    """

    def __init__(
        self,
        params: Any,
        lr: float = 2e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        momentum_decay: float = 4e-3,
        decoupled_weight_decay: bool = False,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
    ) -> None:
        check_hyperparameters(
            "NAdam",
            lr=lr,
            eps=eps,
            betas=betas,
            weight_decay=weight_decay,
            momentum_decay=momentum_decay,
        )
        refuse_unsupported("NAdam", capturable=capturable, differentiable=differentiable)
        defaults = dict(
            lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
            momentum_decay=momentum_decay, decoupled_weight_decay=decoupled_weight_decay,
            maximize=maximize, foreach=foreach, capturable=capturable,
            differentiable=differentiable,
        )  # fmt: skip
        super().__init__(params, defaults)

    _state_scalars = {"step": 0.0, "mu_product": 1.0}
    _state_buffers = ("exp_avg", "exp_avg_sq")

    @staticmethod
    def _coefficients(group: dict[str, Any], step: float, mu_product: Tensor) -> tuple[float, ...]:
        """Update ``mu_product`` in place for step ``step``; return ``1 - beta2**step`` and the
        coefficients of the gradient and of the first moment in the update."""
        lr, (beta1, beta2), decay = group["lr"], group["betas"], group["momentum_decay"]
        mu = beta1 * (1.0 - 0.5 * 0.96 ** (step * decay))
        mu_next = beta1 * (1.0 - 0.5 * 0.96 ** ((step + 1) * decay))
        mu_product.mul_(mu)
        product = mu_product.item()
        grad_coef = -lr * (1.0 - mu) / (1.0 - product)
        avg_coef = (-lr * mu_next) / (1.0 - product * mu_next)
        return 1 - beta2**step, grad_coef, avg_coef

    def _update(self, p: Tensor, group: dict[str, Any]) -> None:
        state, grad = self._begin_update(p, group)
        correction2, grad_coef, avg_coef = self._coefficients(
            group, state["step"].item(), state["mu_product"]
        )
        p, grad, exp_avg, exp_avg_sq = adam_moments(p, grad, state, group["betas"])
        denom = exp_avg_sq.div(correction2).sqrt_().add_(group["eps"])
        p.addcdiv_(grad, denom, value=grad_coef)
        p.addcdiv_(exp_avg, denom, value=avg_coef)

    def _update_foreach(self, group: dict[str, Any]) -> None:
        """``_update`` for every parameter of the group at once, one foreach op per step."""
        for ps, sts in self._with_grads(group):
            steps = self._count_steps(sts)
            grads = self._grads(ps, group)
            coefs = [
                self._coefficients(group, s.item(), st["mu_product"])
                for s, st in zip(steps, sts, strict=True)
            ]
            corrections2, grad_coefs, avg_coefs = (list(c) for c in zip(*coefs, strict=True))
            ps, grads, exp_avgs, exp_avg_sqs = adam_moments_foreach(ps, grads, sts, group["betas"])
            denom = aten._foreach_div.ScalarList(exp_avg_sqs, corrections2)
            aten._foreach_sqrt_.default(denom)
            aten._foreach_add_.Scalar(denom, group["eps"])
            aten._foreach_addcdiv_.ScalarList(ps, grads, denom, grad_coefs)
            aten._foreach_addcdiv_.ScalarList(ps, exp_avgs, denom, avg_coefs)
