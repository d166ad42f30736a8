"""``Adadelta``: steps scaled by the ratio of running root mean squares of past updates and
past gradients (Zeiler), so the units of the update match the parameter's."""

from __future__ import annotations

from typing import Any

from ember._tensor import Tensor
from ember.ops.registry import ops
from ember.optim._hyperparameters import check_hyperparameters
from ember.optim.optimizer import Optimizer, as_real, refuse_unsupported

aten = ops.aten

__all__ = ["Adadelta"]


class Adadelta(Optimizer):
    """Adadelta, PyTorch's formulation (``delta = sqrt(acc_delta + eps) / sqrt(square_avg +
    eps) * grad``, scaled by ``lr``).

    >>> w = ember.nn.Parameter(ember.ones(2)); w.grad = ember.ones(2)
    >>> ember.optim.Adadelta([w], rho=0.0, eps=0.25).step(); w
    Parameter containing:
    tensor([0.5528, 0.5528], requires_grad=True)
    """

    def __init__(
        self,
        params: Any,
        lr: float = 1.0,
        rho: float = 0.9,
        eps: float = 1e-6,
        weight_decay: float = 0,
        foreach: bool | None = None,
        *,
        capturable: bool = False,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        check_hyperparameters("Adadelta", lr=lr, rho=rho, eps=eps, weight_decay=weight_decay)
        refuse_unsupported("Adadelta", capturable=capturable, differentiable=differentiable)
        defaults = dict(
            lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize,
            capturable=capturable, foreach=foreach, differentiable=differentiable,
        )  # fmt: skip
        super().__init__(params, defaults)

    _state_buffers = ("square_avg", "acc_delta")

    def _update(self, p: Tensor, group: dict[str, Any]) -> None:
        lr, rho, eps = group["lr"], group["rho"], group["eps"]
        state, grad = self._begin_update(p, group)
        p, grad, square_avg, acc_delta = as_real([p, grad, state["square_avg"], state["acc_delta"]])
        square_avg.mul_(rho).addcmul_(grad, grad, value=1 - rho)
        std = square_avg.add(eps).sqrt_()
        delta = acc_delta.add(eps).sqrt_().div_(std).mul_(grad)
        acc_delta.mul_(rho).addcmul_(delta, delta, value=1 - rho)
        p.add_(delta, alpha=-lr)

    def _update_foreach(self, group: dict[str, Any]) -> None:
        """``_update`` for every parameter of the group at once, one foreach op per step."""
        lr, rho, eps = group["lr"], group["rho"], group["eps"]
        for ps, sts in self._with_grads(group):
            self._count_steps(sts)
            grads = self._grads(ps, group)
            ps, grads = as_real(ps), as_real(grads)
            square_avgs = as_real([st["square_avg"] for st in sts])
            acc_deltas = as_real([st["acc_delta"] for st in sts])
            aten._foreach_mul_.Scalar(square_avgs, rho)
            aten._foreach_addcmul_.Scalar(square_avgs, grads, grads, 1 - rho)
            std = aten._foreach_add.Scalar(square_avgs, eps)
            aten._foreach_sqrt_.default(std)
            deltas = aten._foreach_add.Scalar(acc_deltas, eps)
            aten._foreach_sqrt_.default(deltas)
            aten._foreach_div_.List(deltas, std)
            aten._foreach_mul_.List(deltas, grads)
            aten._foreach_mul_.Scalar(acc_deltas, rho)
            aten._foreach_addcmul_.Scalar(acc_deltas, deltas, deltas, 1 - rho)
            aten._foreach_add_.List(ps, deltas, alpha=-lr)
