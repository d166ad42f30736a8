"""Learning-rate schedules: ``LRScheduler`` (base), ``StepLR``, ``CosineAnnealingLR``.

A scheduler sets ``group["lr"]`` of its optimizer's groups each ``step()``; it is stepped
once on construction (epoch 0), then once per epoch after ``optimizer.step()``.
"""

from __future__ import annotations

import math
from typing import Any

from ember.optim.optimizer import Optimizer

__all__ = ["CosineAnnealingLR", "LRScheduler", "StepLR"]


class LRScheduler:
    """Base class: subclasses give ``get_lr()`` (the next rates from the current ones) and
    may give ``_get_closed_form_lr()`` (rates at ``last_epoch`` from the base rates).

    >>> opt = ember.optim.SGD([ember.nn.Parameter(ember.ones(1))], lr=0.1)
    >>> ember.optim.lr_scheduler.StepLR(opt, step_size=2).get_last_lr()
    [0.1]
    """

    _get_closed_form_lr: Any = None

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                group.setdefault("initial_lr", group["lr"])
        else:
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise KeyError(
                        f"param 'initial_lr' is not specified in param_groups[{i}] when resuming "
                        "scheduler with last_epoch >= 0; load the optimizer's state_dict first"
                    )
        self.base_lrs: list[float] = [group["initial_lr"] for group in optimizer.param_groups]
        self.last_epoch = last_epoch
        self._step_count = 0
        self._is_initial = True
        self.step()
        self._is_initial = False

    def get_lr(self) -> list[float]:
        """The learning rates for the epoch ``last_epoch`` has just become."""
        raise NotImplementedError(f"{type(self).__name__} does not implement get_lr()")

    def get_last_lr(self) -> list[float]:
        """The learning rates the last ``step()`` set, one per parameter group.

        >>> opt = ember.optim.SGD([ember.nn.Parameter(ember.ones(1))], lr=0.5)
        >>> ember.optim.lr_scheduler.StepLR(opt, 1, gamma=0.1).get_last_lr()
        [0.5]
        """
        return self._last_lr

    def step(self, epoch: int | None = None) -> None:
        """Advance one epoch (or jump to ``epoch``) and set the groups' learning rates.

        >>> opt = ember.optim.SGD([ember.nn.Parameter(ember.ones(1))], lr=1.0)
        >>> s = ember.optim.lr_scheduler.StepLR(opt, 1, gamma=0.5); s.step(); s.get_last_lr()
        [0.5]
        """
        self._step_count += 1
        if epoch is None:
            self.last_epoch += 1
            values = self.get_lr()
        else:
            self.last_epoch = epoch
            closed = self._get_closed_form_lr
            values = closed() if closed is not None else self.get_lr()
        for group, lr in zip(self.optimizer.param_groups, values, strict=True):
            group["lr"] = lr
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

    def state_dict(self) -> dict[str, Any]:
        """Everything but the optimizer (its state is saved by the optimizer).

        >>> opt = ember.optim.SGD([ember.nn.Parameter(ember.ones(1))], lr=1.0)
        >>> ember.optim.lr_scheduler.StepLR(opt, 3).state_dict()["last_epoch"]
        0
        """
        return {k: v for k, v in self.__dict__.items() if k != "optimizer"}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore what ``state_dict`` returned."""
        self.__dict__.update(state_dict)


class StepLR(LRScheduler):
    """Multiply the learning rate by ``gamma`` every ``step_size`` epochs.

    >>> opt = ember.optim.SGD([ember.nn.Parameter(ember.ones(1))], lr=1.0)
    >>> s = ember.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.1)
    >>> for _ in range(2): s.step()
    >>> s.get_last_lr()
    [0.1]
    """

    def __init__(
        self, optimizer: Optimizer, step_size: int, gamma: float = 0.1, last_epoch: int = -1
    ) -> None:
        self.step_size = step_size
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        current = [group["lr"] for group in self.optimizer.param_groups]
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return current
        return [lr * self.gamma for lr in current]

    def _get_closed_form_lr(self) -> list[float]:  # type: ignore[override]
        return [base * self.gamma ** (self.last_epoch // self.step_size) for base in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    """Anneal the learning rate from its initial value to ``eta_min`` along half a cosine
    over ``T_max`` epochs (SGDR without restarts), computed recursively like PyTorch.

    >>> opt = ember.optim.SGD([ember.nn.Parameter(ember.ones(1))], lr=1.0)
    >>> s = ember.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=2)
    >>> s.step(); [round(v, 6) for v in s.get_last_lr()]
    [0.5]
    """

    def __init__(
        self, optimizer: Optimizer, T_max: int, eta_min: float = 0.0, last_epoch: int = -1
    ) -> None:
        self.T_max = T_max
        self.eta_min = eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        groups = self.optimizer.param_groups
        t, t_max, eta_min = self.last_epoch, self.T_max, self.eta_min
        if self._is_initial:
            return [group["lr"] for group in groups]
        if self._step_count == 1 and t > 0:
            return [
                eta_min + (base - eta_min) * (1 + math.cos(t * math.pi / t_max)) / 2
                for base in self.base_lrs
            ]
        if (t - 1 - t_max) % (2 * t_max) == 0:
            return [
                group["lr"] + (base - eta_min) * (1 - math.cos(math.pi / t_max)) / 2
                for base, group in zip(self.base_lrs, groups, strict=True)
            ]
        ratio = (1 + math.cos(math.pi * t / t_max)) / (1 + math.cos(math.pi * (t - 1) / t_max))
        return [ratio * (group["lr"] - eta_min) + eta_min for group in groups]

    def _get_closed_form_lr(self) -> list[float]:  # type: ignore[override]
        cos = (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2
        return [self.eta_min + (base - self.eta_min) * cos for base in self.base_lrs]
