"""``SparseAdam``: Adam for sparse gradients (``Embedding(sparse=True)``), updating only
the moments and values of the rows a gradient touches."""

from __future__ import annotations

from typing import Any

import ember
from ember.optim.optimizer import Optimizer

__all__ = ["SparseAdam"]


class SparseAdam(Optimizer):
    """Adam, lazily: a sparse gradient updates the first and second moments and the
    parameter only where it has values: the sparse COO gradients of ``Embedding(sparse=True)``
    (``docs/sparse.md``). As in PyTorch, a dense gradient is an error.

    >>> w = ember.nn.Parameter(ember.ones(2))
    >>> ember.optim.SparseAdam([w], lr=0.1).defaults["betas"]
    (0.9, 0.999)
    """

    def __init__(
        self,
        params: Any,
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        maximize: bool = False,
    ) -> None:
        if not 0.0 < lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        defaults = dict(lr=lr, betas=betas, eps=eps, maximize=maximize)
        super().__init__(params, defaults)
        sparse, complex_ = [], []
        for gi, group in enumerate(self.param_groups):
            for pi, p in enumerate(group["params"]):
                if getattr(p, "is_sparse", False):
                    sparse.append([gi, pi])
                if p.is_complex():
                    complex_.append([gi, pi])
        if sparse:
            raise ValueError(
                f"Sparse params at indices {sparse}: SparseAdam requires dense parameter tensors"
            )
        if complex_:
            raise ValueError(
                f"Complex params at indices {complex_}: SparseAdam does not support complex "
                "parameters"
            )

    def _update(self, p: Any, group: dict[str, Any]) -> None:
        """PyTorch's lazy Adam step on a COO gradient: moments and values change only at
        the gradient's (coalesced) indices. A dense gradient raises, as PyTorch's."""
        if not getattr(p.grad, "is_sparse", False):
            raise RuntimeError(
                "SparseAdam does not support dense gradients, please consider Adam instead"
            )
        lr, (beta1, beta2), eps = group["lr"], group["betas"], group["eps"]
        grad = p.grad.coalesce()
        if group["maximize"]:
            grad = -grad
        state = self.state[p]
        if not state:
            state["step"] = 0
            state["exp_avg"] = ember.zeros_like(p)
            state["exp_avg_sq"] = ember.zeros_like(p)
        state["step"] += 1
        index = tuple(grad.indices())  # one index tensor per sparse dim; rows unique
        values = grad.values()
        exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
        exp_avg[index] += values.sub(exp_avg[index]).mul_(1 - beta1)
        exp_avg_sq[index] += values.pow(2).sub_(exp_avg_sq[index]).mul_(1 - beta2)
        numer = exp_avg[index]
        denom = exp_avg_sq[index].sqrt_().add_(eps)
        step = state["step"]
        step_size = lr * (1 - beta2**step) ** 0.5 / (1 - beta1**step)
        p[index] += numer.div_(denom).mul_(-step_size)
