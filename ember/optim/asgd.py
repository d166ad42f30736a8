"""``ASGD``: averaged stochastic gradient descent (Polyak & Juditsky, 1992)."""

from __future__ import annotations

from typing import Any

import ember
from ember._tensor import Tensor
from ember.optim._hyperparameters import check_hyperparameters
from ember.optim.optimizer import Optimizer, as_real, refuse_unsupported

__all__ = ["ASGD"]


class ASGD(Optimizer):
    """Averaged SGD, PyTorch's formulation: SGD with a decaying rate ``eta = lr / (1 + lambd *
    lr * step) ** alpha`` and weight shrinkage ``1 - lambd * eta``, keeping in ``state["ax"]``
    the running average of the parameter from step ``t0`` on.

    >>> w = ember.nn.Parameter(ember.ones(2)); w.grad = ember.ones(2)
    >>> opt = ember.optim.ASGD([w], lr=0.1); opt.step(); w
    Parameter containing:
    tensor([0.9000, 0.9000], requires_grad=True)
    """

    def __init__(
        self,
        params: Any,
        lr: float = 1e-2,
        lambd: float = 1e-4,
        alpha: float = 0.75,
        t0: float = 1e6,
        weight_decay: float = 0,
        foreach: bool | None = None,
        maximize: bool = False,
        differentiable: bool = False,
        capturable: bool = False,
    ) -> None:
        check_hyperparameters("ASGD", lr=lr, weight_decay=weight_decay)
        refuse_unsupported("ASGD", capturable=capturable, differentiable=differentiable)
        defaults = dict(
            lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay, foreach=foreach,
            maximize=maximize, differentiable=differentiable, capturable=capturable,
        )  # fmt: skip
        super().__init__(params, defaults)

    def _update(self, p: Tensor, group: dict[str, Any]) -> None:
        lr, lambd, alpha, t0 = group["lr"], group["lambd"], group["alpha"], group["t0"]
        state = self.state[p]
        if not state:
            state["step"] = ember.tensor(0.0, dtype=ember.float32)
            state["eta"] = ember.tensor(float(lr), dtype=ember.float32)
            state["mu"] = ember.tensor(1.0, dtype=ember.float32)
            state["ax"] = ember.zeros_like(p)
        grad = self._grad(p, group)
        p, grad, ax = as_real([p, grad, state["ax"]])
        state["step"].add_(1)
        eta = state["eta"].item()
        p.mul_(1 - lambd * eta)
        p.add_(grad, alpha=-eta)
        mu = state["mu"].item()
        if mu != 1:
            ax.add_(p.sub(ax).mul_(mu))
        else:
            ax.copy_(p)
        step = state["step"].item()
        state["eta"].fill_(lr / ((1 + lambd * lr * step) ** alpha))
        state["mu"].fill_(1 / max(1, step - t0))
