"""``RMSprop``: divide the gradient by a running root mean square of recent gradients
(Hinton's lecture 6e), optionally centered and with momentum."""

from __future__ import annotations

from typing import Any

from ember._tensor import Tensor
from ember.ops.registry import ops
from ember.optim._hyperparameters import check_hyperparameters
from ember.optim.optimizer import Optimizer, as_real, refuse_unsupported

aten = ops.aten

__all__ = ["RMSprop"]


class RMSprop(Optimizer):
    """RMSprop, PyTorch's formulation (``eps`` added after the square root; the momentum
    buffer accumulates ``grad / avg``).

    >>> w = ember.nn.Parameter(ember.ones(2)); w.grad = ember.ones(2)
    >>> ember.optim.RMSprop([w], lr=0.01, alpha=0.75).step(); w
    Parameter containing:
    tensor([0.9800, 0.9800], requires_grad=True)
    """

    def __init__(
        self,
        params: Any,
        lr: float = 1e-2,
        alpha: float = 0.99,
        eps: float = 1e-8,
        weight_decay: float = 0,
        momentum: float = 0,
        centered: bool = False,
        capturable: bool = False,
        foreach: bool | None = None,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        check_hyperparameters(
            "RMSprop", lr=lr, eps=eps, momentum=momentum, weight_decay=weight_decay, alpha=alpha
        )
        refuse_unsupported("RMSprop", capturable=capturable, differentiable=differentiable)
        defaults = dict(
            lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered,
            weight_decay=weight_decay, capturable=capturable, foreach=foreach,
            maximize=maximize, differentiable=differentiable,
        )  # fmt: skip
        super().__init__(params, defaults)

    def _buffer_names(self, group: dict[str, Any]) -> tuple[str, ...]:
        """The running mean square, and the momentum buffer and running mean of the
        gradient when ``momentum`` and ``centered`` ask for them."""
        names: tuple[str, ...] = ("square_avg",)
        if group["momentum"] > 0:
            names += ("momentum_buffer",)
        if group["centered"]:
            names += ("grad_avg",)
        return names

    def _update(self, p: Tensor, group: dict[str, Any]) -> None:
        lr, alpha, eps = group["lr"], group["alpha"], group["eps"]
        momentum = group["momentum"]
        state, grad = self._begin_update(p, group)
        p, grad, square_avg = as_real([p, grad, state["square_avg"]])
        square_avg.mul_(alpha).addcmul_(grad, grad, value=1 - alpha)
        if group["centered"]:
            (grad_avg,) = as_real([state["grad_avg"]])
            grad_avg.lerp_(grad, 1 - alpha)
            avg = square_avg.addcmul(grad_avg, grad_avg, value=-1).sqrt_()
        else:
            avg = square_avg.sqrt()
        avg.add_(eps)
        if momentum > 0:
            (buf,) = as_real([state["momentum_buffer"]])
            buf.mul_(momentum).addcdiv_(grad, avg)
            p.add_(buf, alpha=-lr)
        else:
            p.addcdiv_(grad, avg, value=-lr)

    def _update_foreach(self, group: dict[str, Any]) -> None:
        """``_update`` for every parameter of the group at once, one foreach op per step."""
        lr, alpha, eps = group["lr"], group["alpha"], group["eps"]
        momentum = group["momentum"]
        for ps, sts in self._with_grads(group):
            self._count_steps(sts)
            grads = self._grads(ps, group)
            ps, grads = as_real(ps), as_real(grads)
            square_avgs = as_real([st["square_avg"] for st in sts])
            aten._foreach_mul_.Scalar(square_avgs, alpha)
            aten._foreach_addcmul_.Scalar(square_avgs, grads, grads, 1 - alpha)
            if group["centered"]:
                grad_avgs = as_real([st["grad_avg"] for st in sts])
                aten._foreach_lerp_.Scalar(grad_avgs, grads, 1 - alpha)
                avg = aten._foreach_addcmul.Scalar(square_avgs, grad_avgs, grad_avgs, -1)
                aten._foreach_sqrt_.default(avg)
            else:
                avg = aten._foreach_sqrt.default(square_avgs)
            aten._foreach_add_.Scalar(avg, eps)
            if momentum > 0:
                bufs = as_real([st["momentum_buffer"] for st in sts])
                aten._foreach_mul_.Scalar(bufs, momentum)
                aten._foreach_addcdiv_.Scalar(bufs, grads, avg)
                aten._foreach_add_.List(ps, bufs, alpha=-lr)
            else:
                aten._foreach_addcdiv_.Scalar(ps, grads, avg, -lr)
