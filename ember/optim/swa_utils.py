"""Weight averaging, as ``torch.optim.swa_utils``: ``AveragedModel`` (stochastic weight
averaging, or an exponential moving average of the weights with ``get_ema_multi_avg_fn``),
``SWALR`` (the learning rate annealed to a constant for the averaging phase) and
``update_bn`` (batch-norm statistics recomputed for the averaged weights).

>>> model = ember.nn.Linear(2, 1)
>>> su = ember.optim.swa_utils
>>> ema = su.AveragedModel(model, multi_avg_fn=su.get_ema_multi_avg_fn(0.9))
>>> ema.update_parameters(model); int(ema.n_averaged)
1
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Iterable
from typing import Any

import ember
from ember._tensor import Tensor
from ember.autograd.grad_mode import no_grad
from ember.nn.modules.batchnorm import _BatchNorm
from ember.nn.modules.module import Module
from ember.ops.registry import ops
from ember.optim.lr_scheduler import LRScheduler
from ember.optim.optimizer import Optimizer

__all__ = [
    "SWALR",
    "AveragedModel",
    "get_ema_avg_fn",
    "get_ema_multi_avg_fn",
    "get_swa_avg_fn",
    "get_swa_multi_avg_fn",
    "update_bn",
]

_foreach_lerp_ = ops.aten._foreach_lerp_.Scalar

AvgFn = Callable[[Tensor, Tensor, Any], Tensor]
MultiAvgFn = Callable[[list[Tensor], list[Tensor], Any], None]


def get_ema_multi_avg_fn(decay: float = 0.999) -> MultiAvgFn:
    """In-place EMA of lists of tensors of one dtype: ``ema = decay * ema + (1 - decay) *
    current`` (one foreach ``lerp_`` for floating ones; integer ones, such as a batch
    norm's ``num_batches_tracked``, rounded back into their dtype)."""

    @no_grad()
    def ema_update(ema: list[Tensor], current: list[Tensor], num_averaged: Any) -> None:
        if not ema:
            return
        if ema[0].is_floating_point() or ema[0].is_complex():
            _foreach_lerp_(ema, current, 1 - decay)
            return
        for e, c in zip(ema, current, strict=True):
            e.copy_(e * decay + c * (1 - decay))

    return ema_update


def get_swa_multi_avg_fn() -> MultiAvgFn:
    """In-place running mean of lists of tensors of one dtype over ``num_averaged``
    earlier values (integer ones step by the truncated quotient)."""

    @no_grad()
    def swa_update(avg: list[Tensor], current: list[Tensor], num_averaged: Any) -> None:
        if not avg:
            return
        n = int(num_averaged)
        if avg[0].is_floating_point() or avg[0].is_complex():
            _foreach_lerp_(avg, current, 1 / (n + 1))
            return
        for a, c in zip(avg, current, strict=True):
            a.add_((c - a).div(n + 1, rounding_mode="trunc"))

    return swa_update


def get_ema_avg_fn(decay: float = 0.999) -> AvgFn:
    """The EMA of one tensor: ``decay * ema + (1 - decay) * current``."""

    @no_grad()
    def ema_update(ema: Tensor, current: Tensor, num_averaged: Any) -> Tensor:
        return decay * ema + (1 - decay) * current

    return ema_update


def get_swa_avg_fn() -> AvgFn:
    """The running mean of one tensor over ``num_averaged`` earlier values."""

    @no_grad()
    def swa_update(avg: Tensor, current: Tensor, num_averaged: Any) -> Tensor:
        return avg + (current - avg) / (num_averaged + 1)

    return swa_update


class AveragedModel(Module):
    """A copy of ``model`` whose parameters (and, with ``use_buffers``, buffers) are the
    average of the models passed to ``update_parameters``: a running mean by default,
    ``avg_fn`` per tensor or ``multi_avg_fn`` on whole lists otherwise. Without
    ``use_buffers`` its buffers follow the model's latest ones.

    >>> m = ember.nn.Linear(1, 1, bias=False)
    >>> swa = ember.optim.swa_utils.AveragedModel(m)
    >>> with ember.no_grad():
    ...     for v in (1.0, 3.0):
    ...         _ = m.weight.fill_(v); swa.update_parameters(m)
    >>> float(swa.module.weight)
    2.0
    """

    n_averaged: Tensor

    def __init__(
        self,
        model: Module,
        device: Any = None,
        avg_fn: AvgFn | None = None,
        multi_avg_fn: MultiAvgFn | None = None,
        use_buffers: bool = False,
    ) -> None:
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = copy.deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", ember.tensor(0, dtype=ember.long))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        return self.module(*args, **kwargs)

    def _tensors(self, model: Module) -> list[Tensor]:
        if self.use_buffers:
            return [*model.parameters(), *model.buffers()]
        return list(model.parameters())

    def update_parameters(self, model: Module) -> None:
        """Fold ``model``'s current weights into the average."""
        mine = [t.detach() for t in self._tensors(self.module)]
        theirs = [t.detach().to(a.device) for t, a in zip(self._tensors(model), mine, strict=True)]
        n = self.n_averaged
        with no_grad():
            if int(n) == 0:
                for a, c in zip(mine, theirs, strict=True):
                    a.copy_(c)
            elif self.avg_fn is not None:
                for a, c in zip(mine, theirs, strict=True):
                    a.copy_(self.avg_fn(a, c, n.to(a.device)))
            else:  # a multi-tensor average takes the tensors a dtype at a time
                fn = self.multi_avg_fn or get_swa_multi_avg_fn()
                groups: dict[Any, tuple[list[Tensor], list[Tensor]]] = {}
                for a, c in zip(mine, theirs, strict=True):
                    pair = groups.setdefault((a.device.type, a.dtype), ([], []))
                    pair[0].append(a)
                    pair[1].append(c)
                for avg, cur in groups.values():
                    fn(avg, cur, n.to(avg[0].device))
            if not self.use_buffers:  # the model's statistics, as they are now
                for b, c in zip(self.module.buffers(), model.buffers(), strict=False):
                    b.detach().copy_(c.detach().to(b.device))
            n.add_(1)


@no_grad()
def update_bn(loader: Iterable[Any], model: Module, device: Any = None) -> None:
    """Recompute every batch norm's running statistics of ``model`` over ``loader``: the
    statistics reset, then one pass in training mode with a cumulative average
    (``momentum=None``); each layer's momentum and the model's mode are restored after."""
    momenta: dict[_BatchNorm, Any] = {}
    for module in model.modules():
        if isinstance(module, _BatchNorm):
            module.reset_running_stats()
            momenta[module] = module.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for module in momenta:
        module.momentum = None
    for batch in loader:
        if isinstance(batch, (list, tuple)):
            batch = batch[0]
        if device is not None:
            batch = batch.to(device)
        model(batch)
    for module, momentum in momenta.items():
        module.momentum = momentum
    model.train(was_training)


class SWALR(LRScheduler):
    """Anneal each group's learning rate to its ``swa_lr`` over ``anneal_epochs`` steps
    (``"cos"`` or ``"linear"``), then hold it there.

    >>> opt = ember.optim.SGD([ember.nn.Parameter(ember.ones(1))], lr=1.0)
    >>> s = ember.optim.swa_utils.SWALR(opt, swa_lr=0.1, anneal_epochs=2, anneal_strategy="linear")
    >>> s.step(); s.step(); [round(v, 6) for v in s.get_last_lr()]
    [0.1]
    """

    def __init__(
        self,
        optimizer: Optimizer,
        swa_lr: float | list[float],
        anneal_epochs: int = 10,
        anneal_strategy: str = "cos",
        last_epoch: int = -1,
    ) -> None:
        lrs = (
            swa_lr if isinstance(swa_lr, (list, tuple)) else [swa_lr] * len(optimizer.param_groups)
        )
        if len(lrs) != len(optimizer.param_groups):
            raise ValueError(
                "swa_lr must have the same length as optimizer.param_groups: swa_lr has "
                f"{len(lrs)}, optimizer.param_groups has {len(optimizer.param_groups)}"
            )
        for group, lr in zip(optimizer.param_groups, lrs, strict=True):
            group["swa_lr"] = lr
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(
                f"anneal_strategy must by one of 'cos' or 'linear', instead got {anneal_strategy}"
            )
        self.anneal_func = _cos if anneal_strategy == "cos" else _linear
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _get_initial_lr(lr: float, swa_lr: float, alpha: float) -> float:
        """The rate one step back, undone from ``lr = swa_lr * alpha + prev * (1 - alpha)``."""
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def get_lr(self) -> list[float]:
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        span = max(1, self.anneal_epochs)
        prev_alpha = self.anneal_func(max(0.0, min(1.0, (step - 1) / span)))
        alpha = self.anneal_func(max(0.0, min(1.0, step / span)))
        groups = self.optimizer.param_groups
        prev = [self._get_initial_lr(g["lr"], g["swa_lr"], prev_alpha) for g in groups]
        return [g["swa_lr"] * alpha + lr * (1 - alpha) for g, lr in zip(groups, prev, strict=True)]


def _cos(t: float) -> float:
    return (1 - math.cos(math.pi * t)) / 2


def _linear(t: float) -> float:
    return t
