"""``Adagrad``: per-coordinate step sizes from the sum of all past squared gradients
(Duchi, Hazan & Singer), with an optional decaying learning rate."""

from __future__ import annotations

from typing import Any

import ember
from ember._tensor import Tensor
from ember.ops.registry import ops
from ember.optim._hyperparameters import check_hyperparameters
from ember.optim.optimizer import Optimizer, as_real, refuse_unsupported

aten = ops.aten

__all__ = ["Adagrad"]


class Adagrad(Optimizer):
    """Adagrad, PyTorch's formulation: ``sum += grad**2``, ``p -= clr * grad / (sqrt(sum) +
    eps)`` with ``clr = lr / (1 + (step - 1) * lr_decay)``. Its state is made on construction.

    >>> w = ember.nn.Parameter(ember.ones(2)); w.grad = ember.full((2,), 2.0)
    >>> ember.optim.Adagrad([w], lr=0.5).step(); w
    Parameter containing:
    tensor([0.5000, 0.5000], requires_grad=True)
    """

    def __init__(
        self,
        params: Any,
        lr: float = 1e-2,
        lr_decay: float = 0,
        weight_decay: float = 0,
        initial_accumulator_value: float = 0,
        eps: float = 1e-10,
        foreach: bool | None = None,
        *,
        maximize: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        check_hyperparameters(
            "Adagrad", lr=lr, lr_decay=lr_decay, weight_decay=weight_decay,
            initial_accumulator_value=initial_accumulator_value, eps=eps,
        )  # fmt: skip
        refuse_unsupported("Adagrad", differentiable=differentiable, fused=fused)
        defaults = dict(
            lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
            initial_accumulator_value=initial_accumulator_value, foreach=foreach,
            maximize=maximize, differentiable=differentiable, fused=fused,
        )  # fmt: skip
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                self._init_state(p, group)

    def _init_state(self, p: Tensor, group: dict[str, Any]) -> dict[str, Any]:
        """``p``'s step count and sum of squared gradients (from ``initial_accumulator_value``
        of the defaults, as PyTorch), made on construction."""
        state = self.state[p]
        if not state:
            init = self.defaults["initial_accumulator_value"]
            state["step"] = ember.tensor(0.0, dtype=ember.float32)
            state["sum"] = ember.full_like(p, complex(init, init) if p.is_complex() else init)
        return state

    def _update(self, p: Tensor, group: dict[str, Any]) -> None:
        state, grad = self._begin_update(p, group)
        clr = group["lr"] / (1 + (state["step"].item() - 1) * group["lr_decay"])
        p, grad, state_sum = as_real([p, grad, state["sum"]])
        state_sum.addcmul_(grad, grad, value=1)
        std = state_sum.sqrt().add_(group["eps"])
        p.addcdiv_(grad, std, value=-clr)

    def _update_foreach(self, group: dict[str, Any]) -> None:
        """``_update`` for every parameter of the group at once, one foreach op per step."""
        for ps, sts in self._with_grads(group):
            steps = self._count_steps(sts)
            grads = self._grads(ps, group)
            lr, lr_decay = group["lr"], group["lr_decay"]
            minus_clr = [-lr / (1 + (s.item() - 1) * lr_decay) for s in steps]
            ps, grads = as_real(ps), as_real(grads)
            sums = as_real([st["sum"] for st in sts])
            aten._foreach_addcmul_.Scalar(sums, grads, grads, 1)
            std = aten._foreach_sqrt.default(sums)
            aten._foreach_add_.Scalar(std, group["eps"])
            aten._foreach_addcdiv_.ScalarList(ps, grads, std, minus_clr)
