"""``Adafactor``: Adam-like steps whose second moment of a matrix is kept factored, as a row
and a column of running mean squares (Shazeer & Stern, 2018), in PyTorch 2.13's formulation.

# NOTE [Adafactor]
At step t (from 1), with ``beta2_t = 1 - t ** beta2_decay``, ``rho_t = min(lr, 1/sqrt(t))``
and ``alpha_t = max(eps2, rms(p)) * rho_t`` (``rms(p)`` before this step's weight decay):
the parameter first shrinks by ``1 - lr * weight_decay``; a parameter of 2 or more dims keeps
``row_var`` (the gradient's mean square over its last dim) and ``col_var`` (over its
second-last), each a lerp towards this step's by ``1 - beta2_t``, and estimates the second
moment as ``row_var @ col_var / max(mean(row_var), eps1)``; a vector or scalar keeps
``variance``, the lerped squared gradient. The update is ``grad / sqrt(max(estimate, eps1^2))``,
scaled down by ``max(1, rms(update) / d)``, and the parameter moves by ``-alpha_t`` times it.
``eps1`` None is the parameter dtype's machine epsilon. PyTorch's single-tensor loop fixes
that epsilon from the first parameter with a gradient; ember takes each parameter's own
dtype's (the same whenever the parameters share a dtype).
"""

from __future__ import annotations

from typing import Any

import ember
from ember._tensor import Tensor
from ember.ops.registry import ops
from ember.optim.optimizer import Optimizer

aten = ops.aten

__all__ = ["Adafactor"]


def _lerp_by_weight(selves: list[Tensor], ends: list[Tensor], weights: list[float]) -> None:
    """``selves[i].lerp_(ends[i], weights[i])``, one foreach op per distinct weight (the
    parameters of a group share their step count, so usually one)."""
    for w in dict.fromkeys(weights):
        idx = [i for i, x in enumerate(weights) if x == w]
        aten._foreach_lerp_.Scalar([selves[i] for i in idx], [ends[i] for i in idx], w)


class Adafactor(Optimizer):
    """Adafactor (NOTE [Adafactor]); PyTorch 2.13's arguments and defaults.

    >>> w = ember.nn.Parameter(ember.ones(2)); w.grad = ember.ones(2)
    >>> ember.optim.Adafactor([w]).step(); w
    Parameter containing:
    tensor([0.9900, 0.9900], requires_grad=True)
    """

    def __init__(
        self,
        params: Any,
        lr: float | Tensor = 1e-2,
        beta2_decay: float = -0.8,
        eps: tuple[float | None, float] = (None, 1e-3),
        d: float = 1.0,
        weight_decay: float = 0.0,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
    ) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 >= beta2_decay:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        if eps[0] is not None and not 0.0 <= eps[0]:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
        if not 0.0 <= eps[1]:
            raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
        if not 1.0 <= d:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")
        defaults = dict(
            lr=lr, beta2_decay=beta2_decay, eps=eps, d=d, weight_decay=weight_decay,
            foreach=foreach, maximize=maximize,
        )  # fmt: skip
        super().__init__(params, defaults)

    def _init_state(self, p: Tensor, group: dict[str, Any]) -> dict[str, Any]:
        """``step``, then ``row_var`` and ``col_var`` (the gradient's shape with its last,
        then its second-last, dim 1) for a parameter of 2 or more dims, else ``variance``."""
        if p.is_complex():
            raise RuntimeError(
                "Adafactor does not support complex parameters (got a parameter of dtype "
                f"{p.dtype}); optimize its real view, torch.view_as_real(p)"
            )
        state = self.state[p]
        if not state:
            state["step"] = ember.tensor(0.0, dtype=ember.float32)
            if p.grad.dim() > 1:  # type: ignore[union-attr]
                row, col = list(p.grad.shape), list(p.grad.shape)  # type: ignore[union-attr]
                row[-1], col[-2] = 1, 1
                state["row_var"] = p.grad.new_zeros(row)  # type: ignore[union-attr]
                state["col_var"] = p.grad.new_zeros(col)  # type: ignore[union-attr]
            else:
                state["variance"] = ember.zeros_like(p.grad)
        return state

    @staticmethod
    def _schedule(group: dict[str, Any], step: float, p: Tensor) -> tuple[float, float]:
        """(``1 - beta2_t``, ``alpha_t``) at ``step`` for ``p``, before its weight decay."""
        lr = float(group["lr"])
        rho = min(lr, 1 / step**0.5)
        rms = p.norm(2).item() / (p.numel() ** 0.5)
        return step ** group["beta2_decay"], max(group["eps"][1], rms) * rho

    @staticmethod
    def _eps1(group: dict[str, Any], p: Tensor) -> float:
        eps1 = group["eps"][0]
        return ember.finfo(p.dtype).eps if eps1 is None else eps1

    def _update(self, p: Tensor, group: dict[str, Any]) -> None:
        state = self._init_state(p, group)
        state["step"].add_(1)
        grad = -p.grad if group["maximize"] else p.grad  # type: ignore[operator]
        one_minus_beta2, alpha = self._schedule(group, state["step"].item(), p)
        eps1 = self._eps1(group, p)
        if group["weight_decay"] != 0:
            p.mul_(1 - float(group["lr"]) * group["weight_decay"])
        if grad.dim() > 1:
            row_var, col_var = state["row_var"], state["col_var"]
            row_mean = ember.linalg.vector_norm(grad, dim=-1, keepdim=True).square_()
            row_var.lerp_(row_mean.div_(grad.size(-1)), one_minus_beta2)
            col_mean = ember.linalg.vector_norm(grad, dim=-2, keepdim=True).square_()
            col_var.lerp_(col_mean.div_(grad.size(-2)), one_minus_beta2)
            estimate = row_var @ col_var
            estimate.div_(row_var.mean(dim=-2, keepdim=True).clamp_(min=eps1))
        else:
            variance = state["variance"]
            variance.lerp_(grad * grad, one_minus_beta2)
            estimate = variance.clone()
        update = estimate.clamp_(min=eps1 * eps1).rsqrt_().mul_(grad)
        denom = max(1.0, update.norm(2).item() / ((update.numel() ** 0.5) * group["d"]))
        p.add_(update, alpha=-alpha / denom)

    def _update_foreach(self, group: dict[str, Any]) -> None:
        """``_update`` for the group's parameters at once: the moments and the steps by
        foreach ops, over the matrices and the vectors separately."""
        lr, wd = float(group["lr"]), group["weight_decay"]
        for ps, sts in self._with_grads(group):
            steps = self._count_steps(sts)
            grads = [p.grad for p in ps]
            if group["maximize"]:
                grads = aten._foreach_neg.default(grads)
            plan = [self._schedule(group, s.item(), p) for s, p in zip(steps, ps, strict=True)]
            if wd != 0:
                aten._foreach_mul_.Scalar(ps, 1 - lr * wd)
            estimates: list[Any] = [None] * len(ps)
            mats = [i for i, g in enumerate(grads) if g.dim() > 1]
            vecs = [i for i, g in enumerate(grads) if g.dim() <= 1]
            if mats:
                gs = [grads[i] for i in mats]
                rows = [sts[i]["row_var"] for i in mats]
                cols = [sts[i]["col_var"] for i in mats]
                weights = [plan[i][0] for i in mats]
                for vars_, dim in ((rows, -1), (cols, -2)):
                    means = [ember.linalg.vector_norm(g, dim=dim, keepdim=True) for g in gs]
                    aten._foreach_mul_.List(means, means)
                    aten._foreach_div_.ScalarList(means, [g.size(dim) for g in gs])
                    _lerp_by_weight(vars_, means, weights)
                row_means = [r.mean(dim=-2, keepdim=True) for r in rows]
                for i, r, c, m in zip(mats, rows, cols, row_means, strict=True):
                    estimates[i] = (r @ c).div_(m.clamp_(min=self._eps1(group, ps[i])))
            if vecs:
                variances = [sts[i]["variance"] for i in vecs]
                squares = aten._foreach_mul.List([grads[i] for i in vecs], [grads[i] for i in vecs])
                _lerp_by_weight(variances, squares, [plan[i][0] for i in vecs])
                for i, v in zip(vecs, variances, strict=True):
                    estimates[i] = v.clone()
            for i, p in enumerate(ps):
                eps1 = self._eps1(group, p)
                update = estimates[i].clamp_(min=eps1 * eps1).rsqrt_().mul_(grads[i])
                denom = max(1.0, update.norm(2).item() / ((update.numel() ** 0.5) * group["d"]))
                p.add_(update, alpha=-plan[i][1] / denom)
