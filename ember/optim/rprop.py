"""``Rprop``: resilient backpropagation, a per-element step size grown while the gradient
keeps its sign and shrunk when it flips (Riedmiller & Braun, 1993)."""

from __future__ import annotations

from typing import Any

import ember
from ember._tensor import Tensor
from ember.optim._hyperparameters import check_hyperparameters
from ember.optim.optimizer import Optimizer, as_real, refuse_unsupported

__all__ = ["Rprop"]


class Rprop(Optimizer):
    """Rprop, PyTorch's formulation: the step size (starting at ``lr``) is multiplied by
    ``etas[1]`` where the gradient kept its sign, by ``etas[0]`` where it flipped (and that
    element skips its update), clamped to ``step_sizes``; the parameter moves by the step size
    against the gradient's sign.

    >>> w = ember.nn.Parameter(ember.ones(2)); w.grad = ember.tensor([1.0, -1.0])
    >>> ember.optim.Rprop([w], lr=0.1).step(); w
    Parameter containing:
    tensor([0.9000, 1.1000], requires_grad=True)
    """

    def __init__(
        self,
        params: Any,
        lr: float = 1e-2,
        etas: tuple[float, float] = (0.5, 1.2),
        step_sizes: tuple[float, float] = (1e-6, 50),
        *,
        capturable: bool = False,
        foreach: bool | None = None,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        check_hyperparameters("Rprop", lr=lr, etas=etas)
        refuse_unsupported("Rprop", capturable=capturable, differentiable=differentiable)
        defaults = dict(
            lr=lr, etas=etas, step_sizes=step_sizes, foreach=foreach, maximize=maximize,
            differentiable=differentiable, capturable=capturable,
        )  # fmt: skip
        super().__init__(params, defaults)

    def _update(self, p: Tensor, group: dict[str, Any]) -> None:
        etaminus, etaplus = group["etas"]
        low, high = group["step_sizes"]
        state = self.state[p]
        if not state:
            state["step"] = ember.tensor(0.0, dtype=ember.float32)
            state["prev"] = ember.zeros_like(p)
            lr = group["lr"]
            state["step_size"] = ember.full_like(p.grad, complex(lr, lr) if p.is_complex() else lr)  # type: ignore[arg-type]
        state["step"].add_(1)
        grad = -p.grad if group["maximize"] else p.grad  # type: ignore[operator]
        p, grad, prev, step_size = as_real([p, grad, state["prev"], state["step_size"]])
        sign = grad.mul(prev).sign()
        factor = ember.where(sign > 0, etaplus, ember.where(sign < 0, etaminus, 1.0))
        step_size.mul_(factor.to(step_size.dtype)).clamp_(low, high)
        flipped = sign < 0
        grad = ember.where(flipped, ember.zeros_like(grad), grad)
        p.addcmul_(grad.sign(), step_size, value=-1)
        prev.copy_(grad)
