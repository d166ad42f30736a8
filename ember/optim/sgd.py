"""``SGD``: stochastic gradient descent with momentum, dampening, Nesterov and weight decay."""

from __future__ import annotations

from typing import Any

from ember.ops.registry import ops
from ember.optim.optimizer import Optimizer, by_device

_ADD_ = ops.aten.add_.Tensor._dispatch  # the op's dispatch: no resolution per parameter
_foreach_neg = ops.aten._foreach_neg.default
_foreach_add_list = ops.aten._foreach_add.List
_foreach_add_list_ = ops.aten._foreach_add_.List
_foreach_mul_ = ops.aten._foreach_mul_.Scalar

__all__ = ["SGD"]


class SGD(Optimizer):
    """Stochastic gradient descent, PyTorch's formulation (momentum buffer starts at the
    first gradient; ``nesterov`` looks ahead along it).

    >>> w = ember.nn.Parameter(ember.ones(2)); w.grad = ember.ones(2)
    >>> ember.optim.SGD([w], lr=0.5).step(); w
    Parameter containing:
    tensor([0.5000, 0.5000], requires_grad=True)
    """

    def __init__(
        self,
        params: Any,
        lr: float = 1e-3,
        momentum: float = 0,
        dampening: float = 0,
        weight_decay: float = 0,
        nesterov: bool = False,
        *,
        maximize: bool = False,
        foreach: bool | None = None,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        if differentiable or fused:
            raise NotImplementedError(
                "SGD: differentiable=True and fused=True are not supported by ember; leave them "
                "unset (the default update gives the same values)"
            )
        defaults = dict(
            lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
            nesterov=nesterov, maximize=maximize, foreach=foreach,
            differentiable=differentiable, fused=fused,
        )  # fmt: skip
        super().__init__(params, defaults)

    def _update_foreach(self, group: dict[str, Any]) -> None:  # NOTE [foreach updates]
        """``_update_group`` with one foreach op per step for all the group's parameters."""
        params = [p for p in group["params"] if p.grad is not None]
        if not params:
            return
        lr, momentum, dampening = group["lr"], group["momentum"], group["dampening"]
        weight_decay, nesterov = group["weight_decay"], group["nesterov"]
        states = [self.state[p] for p in params] if momentum != 0 else []
        for ps, sts in by_device(params, states or [None] * len(params)):
            steps = [p.grad for p in ps]
            if group["maximize"]:
                steps = _foreach_neg(steps)
            if weight_decay != 0:
                steps = _foreach_add_list(steps, ps, alpha=weight_decay)
            if momentum != 0:
                bufs = [st.get("momentum_buffer") for st in sts]
                if all(b is not None for b in bufs):
                    _foreach_mul_(bufs, momentum)
                    _foreach_add_list_(bufs, steps, alpha=1 - dampening)
                else:  # the first step: each buffer starts at its gradient
                    for i, (b, st) in enumerate(zip(bufs, sts, strict=True)):
                        if b is None:
                            bufs[i] = st["momentum_buffer"] = steps[i].detach().clone()
                        else:
                            b.mul_(momentum).add_(steps[i], alpha=1 - dampening)
                # (PyTorch's foreach form adds into the gradients here; this leaves .grad be)
                steps = _foreach_add_list(steps, bufs, alpha=momentum) if nesterov else bufs
            _foreach_add_list_(ps, steps, alpha=-lr)

    def _update_group(self, group: dict[str, Any]) -> None:
        """The update of every parameter with a gradient, the hyperparameters read once."""
        lr, momentum, dampening = group["lr"], group["momentum"], group["dampening"]
        weight_decay, nesterov, maximize = (
            group["weight_decay"],
            group["nesterov"],
            group["maximize"],
        )
        neg_lr = -lr
        for p in group["params"]:
            grad = p.grad
            if grad is None:
                continue
            step = -grad if maximize else grad
            if weight_decay != 0:
                step = step.add(p, alpha=weight_decay)
            if momentum != 0:
                state = self.state[p]
                buf = state.get("momentum_buffer")
                if buf is None:
                    buf = state["momentum_buffer"] = step.detach().clone()  # as PyTorch
                else:
                    buf.mul_(momentum).add_(step, alpha=1 - dampening)
                step = step.add(buf, alpha=momentum) if nesterov else buf
            _ADD_(p, step, alpha=neg_lr)
