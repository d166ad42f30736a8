"""Learning-rate schedules, as ``torch.optim.lr_scheduler``: ``LRScheduler`` (the base) and
the schedules built on it, ``ReduceLROnPlateau`` (driven by a metric), and the two that
compose others (``SequentialLR``, ``ChainedScheduler``).

A scheduler sets ``group["lr"]`` of its optimizer's groups each ``step()``; it is stepped
once on construction (epoch 0), then once per epoch (or batch) after ``optimizer.step()``.

# NOTE [chainable schedules]
Most schedules compute the next rates from the *current* ``group["lr"]`` (``get_lr``), so
several can act on one optimizer at once (``ChainedScheduler``): each multiplies in its own
factor. ``step(epoch)`` jumps instead, from the base rates, by the closed form
(``_get_closed_form_lr``) where a schedule has one. Rates are computed with the same float
arithmetic, in the same order, as PyTorch's, so the sequences agree to the last bit.
"""

from __future__ import annotations

import math
import types
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from ember.optim.optimizer import Optimizer

__all__ = [
    "ChainedScheduler", "ConstantLR", "CosineAnnealingLR", "CosineAnnealingWarmRestarts",
    "CyclicLR", "ExponentialLR", "LRScheduler", "LambdaLR", "LinearLR", "MultiStepLR",
    "MultiplicativeLR", "OneCycleLR", "PolynomialLR", "ReduceLROnPlateau", "SequentialLR", "StepLR",
]  # fmt: skip


def _group_values(optimizer: Optimizer, key: str) -> list[Any]:
    return [group[key] for group in optimizer.param_groups]


def _per_group(name: str, optimizer: Optimizer, value: Any) -> list[Any]:
    """``value`` once per parameter group: a list or tuple must have one per group."""
    n = len(optimizer.param_groups)
    if isinstance(value, (list, tuple)):
        if len(value) != n:
            raise ValueError(
                f"{name} must have the same length as optimizer.param_groups. {name} has "
                f"{len(value)} values, param_groups has {n}."
            )
        return list(value)
    return [value] * n


def _check_optimizer(optimizer: Any) -> None:
    """A scheduler is made for an ``Optimizer`` (TypeError, as PyTorch's, otherwise)."""
    if not isinstance(optimizer, Optimizer):
        raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")


class LRScheduler:
    """Base class: subclasses give ``get_lr()`` (the next rates from the current ones) and
    may give ``_get_closed_form_lr()`` (rates at ``last_epoch`` from the base rates).

    >>> opt = ember.optim.SGD([ember.nn.Parameter(ember.ones(1))], lr=0.1)
    >>> ember.optim.lr_scheduler.StepLR(opt, step_size=2).get_last_lr()
    [0.1]
    """

    _get_closed_form_lr: Any = None
    _is_initial: bool = False

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1) -> None:
        _check_optimizer(optimizer)
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
        self.base_lrs: list[float] = _group_values(optimizer, "initial_lr")
        self.last_epoch = last_epoch
        self._initial_step()

    def _initial_step(self) -> None:
        """The step the constructor takes (to epoch ``last_epoch + 1``), with ``_is_initial``
        set so a schedule can leave the rates as they are."""
        self._step_count = 0
        self._is_initial = True
        try:
            self.step()
        finally:
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
        self._update_lr(epoch)

    def _update_lr(self, epoch: int | None = None) -> None:
        if epoch is None:
            self.last_epoch += 1
            values = self.get_lr()
        else:
            self.last_epoch = epoch
            closed = self._get_closed_form_lr
            values = closed() if closed is not None else self.get_lr()
        self._set_lrs(values)

    def _set_lrs(self, values: Iterable[float]) -> None:
        for group, lr in zip(self.optimizer.param_groups, values, strict=True):
            group["lr"] = lr
        self._last_lr = _group_values(self.optimizer, "lr")

    def state_dict(self) -> dict[str, Any]:
        """Everything but the optimizer (its state is saved by the optimizer).

        >>> opt = ember.optim.SGD([ember.nn.Parameter(ember.ones(1))], lr=1.0)
        >>> ember.optim.lr_scheduler.StepLR(opt, 3).state_dict()["last_epoch"]
        0
        """
        return {k: v for k, v in self.__dict__.items() if k != "optimizer"}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore what ``state_dict`` returned.

        >>> opt = ember.optim.SGD([ember.nn.Parameter(ember.ones(1))], lr=1.0)
        >>> s = ember.optim.lr_scheduler.StepLR(opt, 3); s.load_state_dict(s.state_dict())
        """
        self.__dict__.update(state_dict)


class _LambdaScheduler(LRScheduler):
    """A schedule given by one function of the epoch per group, saved in ``state_dict`` only
    when it is a callable object (its ``__dict__``), not a function or lambda."""

    def __init__(
        self,
        optimizer: Optimizer,
        lr_lambda: Callable[[int], float] | list[Callable[[int], float]],
        last_epoch: int = -1,
    ) -> None:
        self._check_lambdas(lr_lambda)
        self.optimizer = optimizer
        n = len(optimizer.param_groups)
        if isinstance(lr_lambda, (list, tuple)):
            if len(lr_lambda) != n:
                raise ValueError(f"Expected {n} lr_lambdas, but got {len(lr_lambda)}")
            self.lr_lambdas: list[Callable[[int], float]] = list(lr_lambda)
        else:
            self.lr_lambdas = [lr_lambda] * n
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _check_lambdas(lr_lambda: Any) -> None:
        """What a schedule asks of ``lr_lambda`` before its length is checked: nothing here."""

    def state_dict(self) -> dict[str, Any]:
        """Everything but the optimizer; the lambdas as ``None`` or their ``__dict__``.

        >>> opt = ember.optim.SGD([ember.nn.Parameter(ember.ones(1))], lr=1.0)
        >>> ember.optim.lr_scheduler.LambdaLR(opt, lambda e: 0.5).state_dict()["lr_lambdas"]
        [None]
        """
        out = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "lr_lambdas")}
        out["lr_lambdas"] = [
            None if isinstance(fn, types.FunctionType) else fn.__dict__.copy()
            for fn in self.lr_lambdas
        ]
        return out

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore what ``state_dict`` returned (a callable object's attributes too)."""
        self.__dict__.update({k: v for k, v in state_dict.items() if k != "lr_lambdas"})
        for fn, saved in zip(self.lr_lambdas, state_dict["lr_lambdas"], strict=True):
            if saved is not None:
                fn.__dict__.update(saved)


class LambdaLR(_LambdaScheduler):
    """Set each group's learning rate to its initial rate times ``lr_lambda(epoch)``.

    >>> opt = ember.optim.SGD([ember.nn.Parameter(ember.ones(1))], lr=1.0)
    >>> s = ember.optim.lr_scheduler.LambdaLR(opt, lambda epoch: 0.5**epoch)
    >>> for _ in range(3): s.step()
    >>> s.get_last_lr()
    [0.125]
    """

    def get_lr(self) -> list[float]:
        return [
            base * fn(self.last_epoch)
            for fn, base in zip(self.lr_lambdas, self.base_lrs, strict=True)
        ]


class MultiplicativeLR(_LambdaScheduler):
    """Multiply each group's learning rate by ``lr_lambda(epoch)`` every epoch after the first.

    >>> opt = ember.optim.SGD([ember.nn.Parameter(ember.ones(1))], lr=1.0)
    >>> s = ember.optim.lr_scheduler.MultiplicativeLR(opt, lambda epoch: 0.5)
    >>> for _ in range(2): s.step()
    >>> s.get_last_lr()
    [0.25]
    """

    @staticmethod
    def _check_lambdas(lr_lambda: Any) -> None:
        """Every one of the lambdas must be callable, as PyTorch checks for this schedule."""
        for fn in lr_lambda if isinstance(lr_lambda, (list, tuple)) else [lr_lambda]:
            if not callable(fn):
                raise TypeError(f"lr_lambda should be a function, but got {type(fn).__name__}")

    def get_lr(self) -> list[float]:
        groups = self.optimizer.param_groups
        if self._is_initial:
            return _group_values(self.optimizer, "lr")
        return [
            group["lr"] * fn(self.last_epoch)
            for fn, group in zip(self.lr_lambdas, groups, strict=True)
        ]


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


class MultiStepLR(LRScheduler):
    """Multiply the learning rate by ``gamma`` at each epoch of ``milestones`` (by
    ``gamma**k`` at an epoch listed ``k`` times).

    >>> opt = ember.optim.SGD([ember.nn.Parameter(ember.ones(1))], lr=1.0)
    >>> s = ember.optim.lr_scheduler.MultiStepLR(opt, milestones=[1, 3], gamma=0.5)
    >>> for _ in range(3): s.step()
    >>> s.get_last_lr()
    [0.25]
    """

    def __init__(
        self,
        optimizer: Optimizer,
        milestones: Iterable[int],
        gamma: float = 0.1,
        last_epoch: int = -1,
    ) -> None:
        self.milestones = Counter(milestones)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        current = _group_values(self.optimizer, "lr")
        if self.last_epoch not in self.milestones:
            return current
        return [lr * self.gamma ** self.milestones[self.last_epoch] for lr in current]

    def _get_closed_form_lr(self) -> list[float]:  # type: ignore[override]
        passed = bisect_right(sorted(self.milestones.elements()), self.last_epoch)
        return [base * self.gamma**passed for base in self.base_lrs]


class ConstantLR(LRScheduler):
    """Multiply the learning rate by ``factor`` for the first ``total_iters`` epochs.

    >>> opt = ember.optim.SGD([ember.nn.Parameter(ember.ones(1))], lr=1.0)
    >>> s = ember.optim.lr_scheduler.ConstantLR(opt, factor=0.5, total_iters=2)
    >>> lrs = []
    >>> for _ in range(3): s.step(); lrs.append(s.get_last_lr()[0])
    >>> lrs
    [0.5, 1.0, 1.0]
    """

    def __init__(
        self,
        optimizer: Optimizer,
        factor: float = 1.0 / 3,
        total_iters: int = 5,
        last_epoch: int = -1,
    ) -> None:
        if factor > 1.0 or factor < 0:
            raise ValueError("Constant multiplicative factor expected to be between 0 and 1.")
        self.factor = factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        current = _group_values(self.optimizer, "lr")
        if self.last_epoch == 0:
            return [lr * self.factor for lr in current]
        if self.last_epoch != self.total_iters:
            return current
        return [lr * (1.0 / self.factor) for lr in current]

    def _get_closed_form_lr(self) -> list[float]:  # type: ignore[override]
        after = self.last_epoch >= self.total_iters
        return [base * (self.factor + after * (1 - self.factor)) for base in self.base_lrs]


class LinearLR(LRScheduler):
    """Scale the learning rate by a factor going linearly from ``start_factor`` to
    ``end_factor`` over ``total_iters`` epochs, then by ``end_factor``.

    >>> opt = ember.optim.SGD([ember.nn.Parameter(ember.ones(1))], lr=1.0)
    >>> s = ember.optim.lr_scheduler.LinearLR(opt, start_factor=0.5, total_iters=2)
    >>> lrs = []
    >>> for _ in range(3): s.step(); lrs.append(s.get_last_lr()[0])
    >>> lrs
    [0.75, 1.0, 1.0]
    """

    def __init__(
        self,
        optimizer: Optimizer,
        start_factor: float = 1.0 / 3,
        end_factor: float = 1.0,
        total_iters: int = 5,
        last_epoch: int = -1,
    ) -> None:
        if start_factor > 1.0 or start_factor <= 0:
            raise ValueError(
                "Starting multiplicative factor expected to be greater than 0 and less or "
                "equal to 1."
            )
        if end_factor > 1.0 or end_factor < 0:
            raise ValueError("Ending multiplicative factor expected to be between 0 and 1.")
        self.start_factor = start_factor
        self.end_factor = end_factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        current = _group_values(self.optimizer, "lr")
        start, end, n = self.start_factor, self.end_factor, self.total_iters
        if self.last_epoch == 0:
            return [lr * start for lr in current]
        if self._is_initial or self.last_epoch > n:
            return current
        ratio = 1.0 + (end - start) / (n * start + (self.last_epoch - 1) * (end - start))
        return [lr * ratio for lr in current]

    def _get_closed_form_lr(self) -> list[float]:  # type: ignore[override]
        start, end, n = self.start_factor, self.end_factor, self.total_iters
        return [
            base * (start + (end - start) * min(n, self.last_epoch) / n) for base in self.base_lrs
        ]


class ExponentialLR(LRScheduler):
    """Multiply the learning rate by ``gamma`` every epoch.

    >>> opt = ember.optim.SGD([ember.nn.Parameter(ember.ones(1))], lr=1.0)
    >>> s = ember.optim.lr_scheduler.ExponentialLR(opt, gamma=0.5)
    >>> for _ in range(3): s.step()
    >>> s.get_last_lr()
    [0.125]
    """

    def __init__(self, optimizer: Optimizer, gamma: float, last_epoch: int = -1) -> None:
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        current = _group_values(self.optimizer, "lr")
        if self._is_initial:  # (a resumed schedule must not step twice)
            return current
        return [lr * self.gamma for lr in current]

    def _get_closed_form_lr(self) -> list[float]:  # type: ignore[override]
        return [base * self.gamma**self.last_epoch for base in self.base_lrs]


class PolynomialLR(LRScheduler):
    """Decay the learning rate as ``(1 - epoch / total_iters) ** power`` of the initial rate,
    reaching 0 at ``total_iters``.

    >>> opt = ember.optim.SGD([ember.nn.Parameter(ember.ones(1))], lr=1.0)
    >>> s = ember.optim.lr_scheduler.PolynomialLR(opt, total_iters=4, power=2.0)
    >>> s.step(); s.get_last_lr()
    [0.5625]
    """

    def __init__(
        self,
        optimizer: Optimizer,
        total_iters: int = 5,
        power: float = 1.0,
        last_epoch: int = -1,
    ) -> None:
        self.total_iters = total_iters
        self.power = power
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        current = _group_values(self.optimizer, "lr")
        t, n = self.last_epoch, self.total_iters
        if self._is_initial or t > n:
            return current
        factor = ((1.0 - t / n) / (1.0 - (t - 1) / n)) ** self.power
        return [lr * factor for lr in current]

    def _get_closed_form_lr(self) -> list[float]:  # type: ignore[override]
        left = 1.0 - min(self.total_iters, self.last_epoch) / self.total_iters
        return [base * left**self.power for base in self.base_lrs]


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


class CosineAnnealingWarmRestarts(LRScheduler):
    """Anneal the learning rate along half a cosine from its initial value to ``eta_min``
    over ``T_i`` epochs, then restart, with ``T_0`` the first period and each next one
    ``T_mult`` times longer (SGDR). ``step(epoch)`` may take a fractional epoch (a step per
    batch: ``epoch + i / iters``).

    >>> opt = ember.optim.SGD([ember.nn.Parameter(ember.ones(1))], lr=1.0)
    >>> s = ember.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=2)
    >>> s.step(1.5); [round(v, 4) for v in s.get_last_lr()]
    [0.1464]
    >>> s.step(); s.T_cur, [round(v, 4) for v in s.get_last_lr()]
    (0.5, [0.8536])
    """

    def __init__(
        self,
        optimizer: Optimizer,
        T_0: int,
        T_mult: int = 1,
        eta_min: float = 0.0,
        last_epoch: int = -1,
    ) -> None:
        if T_0 <= 0 or not isinstance(T_0, int):
            raise ValueError(f"Expected positive integer T_0, but got {T_0}")
        if T_mult < 1 or not isinstance(T_mult, int):
            raise ValueError(f"Expected integer T_mult >= 1, but got {T_mult}")
        if not isinstance(eta_min, (float, int)):
            raise ValueError(
                f"Expected float or int eta_min, but got {eta_min} of type {type(eta_min)}"
            )
        self.T_0 = T_0
        self.T_i = T_0
        self.T_mult = T_mult
        self.eta_min = eta_min
        self.T_cur: float = last_epoch
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        cos = 1 + math.cos(math.pi * self.T_cur / self.T_i)
        return [self.eta_min + (base - self.eta_min) * cos / 2 for base in self.base_lrs]

    def step(self, epoch: float | None = None) -> None:
        """Advance one epoch, or go to ``epoch`` (fractional or not), and set the rates.

        >>> opt = ember.optim.SGD([ember.nn.Parameter(ember.ones(1))], lr=1.0)
        >>> s = ember.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=1, T_mult=2)
        >>> s.step(2.0); s.T_i, s.T_cur
        (2, 1.0)
        """
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:
            epoch = self.last_epoch + 1
            self.T_cur = self.T_cur + 1
            if self.T_cur >= self.T_i:
                self.T_cur = self.T_cur % self.T_i
                self.T_i = self.T_i * self.T_mult
        elif epoch < 0:
            raise ValueError(f"Expected non-negative epoch, but got {epoch}")
        elif epoch < self.T_0:
            self.T_i, self.T_cur = self.T_0, epoch
        elif self.T_mult == 1:
            self.T_cur = epoch % self.T_0
        else:  # the restart epoch is in: T_0 * (T_mult**n - 1) / (T_mult - 1) <= epoch
            n = int(math.log(epoch / self.T_0 * (self.T_mult - 1) + 1, self.T_mult))
            self.T_cur = epoch - self.T_0 * (self.T_mult**n - 1) / (self.T_mult - 1)
            self.T_i = self.T_0 * self.T_mult**n
        self.last_epoch = math.floor(epoch)
        self._set_lrs(self.get_lr())


class _MomentumCycle(LRScheduler):
    """What ``OneCycleLR`` and ``CyclicLR`` share with ``cycle_momentum``: each group's
    momentum (Adam's ``beta1`` where the optimizer has ``betas``) moved between its
    ``base_momentum`` and ``max_momentum``, against the learning rate."""

    use_beta1: bool

    def _check_momentum(self, optimizer: Optimizer) -> None:
        """Refuse an optimizer with neither option; note which one it has."""
        if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
            raise ValueError(
                "optimizer must support momentum or beta1 with `cycle_momentum` option enabled"
            )
        self.use_beta1 = "betas" in optimizer.defaults

    def _start_momentum(self, optimizer: Optimizer, highs: list[Any], lows: list[Any]) -> None:
        """A fresh schedule: each group's momentum at its ``highs`` entry, and its range
        (``max_momentum``, ``base_momentum``) kept in the group."""
        for group, high, low in zip(optimizer.param_groups, highs, lows, strict=True):
            self._set_momentum(group, high)
            group["max_momentum"] = high
            group["base_momentum"] = low

    def _set_momentum(self, group: dict[str, Any], value: float) -> None:
        """Set ``group``'s momentum, or the first of its ``betas``, to ``value``."""
        if self.use_beta1:
            group["betas"] = (value, *group["betas"][1:])
        else:
            group["momentum"] = value


class OneCycleLR(_MomentumCycle):
    """The 1cycle policy (Smith): per batch, raise the learning rate from ``max_lr /
    div_factor`` to ``max_lr`` over ``pct_start`` of ``total_steps``, then anneal it to
    ``initial_lr / final_div_factor`` (``three_phase``: back to the initial rate first),
    along a cosine or a line; momentum (SGD's ``momentum`` or Adam's ``beta1``) cycles
    inversely between ``max_momentum`` and ``base_momentum``.

    >>> opt = ember.optim.SGD([ember.nn.Parameter(ember.ones(1))], lr=0.1, momentum=0.9)
    >>> s = ember.optim.lr_scheduler.OneCycleLR(opt, max_lr=1.0, total_steps=10)
    >>> for _ in range(2): s.step()
    >>> round(s.get_last_lr()[0], 4), round(opt.param_groups[0]["momentum"], 4)
    (1.0, 0.85)
    """

    def __init__(
        self,
        optimizer: Optimizer,
        max_lr: float | list[float],
        total_steps: int | None = None,
        epochs: int | None = None,
        steps_per_epoch: int | None = None,
        pct_start: float = 0.3,
        anneal_strategy: str = "cos",
        cycle_momentum: bool = True,
        base_momentum: float | list[float] = 0.85,
        max_momentum: float | list[float] = 0.95,
        div_factor: float = 25.0,
        final_div_factor: float = 1e4,
        three_phase: bool = False,
        last_epoch: int = -1,
    ) -> None:
        _check_optimizer(optimizer)
        self.optimizer = optimizer
        if total_steps is not None:
            if total_steps <= 0 or not isinstance(total_steps, int):
                raise ValueError(f"Expected positive integer total_steps, but got {total_steps}")
            self.total_steps = total_steps
        elif epochs is not None and steps_per_epoch is not None:
            if not isinstance(epochs, int) or epochs <= 0:
                raise ValueError(f"Expected positive integer epochs, but got {epochs}")
            if not isinstance(steps_per_epoch, int) or steps_per_epoch <= 0:
                raise ValueError(
                    f"Expected positive integer steps_per_epoch, but got {steps_per_epoch}"
                )
            self.total_steps = epochs * steps_per_epoch
        else:
            raise ValueError("You must define either total_steps OR (epochs AND steps_per_epoch)")
        self._schedule_phases = self._phases(float(pct_start * self.total_steps), three_phase)
        if pct_start < 0 or pct_start > 1 or not isinstance(pct_start, float):
            raise ValueError(f"Expected float between 0 and 1 pct_start, but got {pct_start}")
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(
                f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}"
            )
        self._anneal_func_type = anneal_strategy
        max_lrs = _per_group("max_lr", optimizer, max_lr)
        if last_epoch == -1:
            for group, top in zip(optimizer.param_groups, max_lrs, strict=True):
                group["initial_lr"] = top / div_factor
                group["max_lr"] = top
                group["min_lr"] = group["initial_lr"] / final_div_factor
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            self._check_momentum(optimizer)
            highs = _per_group("max_momentum", optimizer, max_momentum)
            lows = _per_group("base_momentum", optimizer, base_momentum)
            if last_epoch == -1:
                self._start_momentum(optimizer, highs, lows)
        super().__init__(optimizer, last_epoch)

    def _phases(self, rise_end: float, three_phase: bool) -> list[dict[str, Any]]:
        """Each phase: the step it ends at and the group keys of the values it goes between."""

        def phase(end_step: float, lr: tuple[str, str], momentum: tuple[str, str]) -> dict:
            return dict(
                end_step=end_step, start_lr=lr[0], end_lr=lr[1],
                start_momentum=momentum[0], end_momentum=momentum[1],
            )  # fmt: skip

        up, down = ("max_momentum", "base_momentum"), ("base_momentum", "max_momentum")
        last = self.total_steps - 1
        if three_phase:
            return [
                phase(rise_end - 1, ("initial_lr", "max_lr"), up),
                phase(2 * rise_end - 2, ("max_lr", "initial_lr"), down),
                phase(last, ("initial_lr", "min_lr"), ("max_momentum", "max_momentum")),
            ]
        return [phase(rise_end - 1, ("initial_lr", "max_lr"), up),
                phase(last, ("max_lr", "min_lr"), down)]  # fmt: skip

    def _anneal(self, start: float, end: float, pct: float) -> float:
        """From ``start`` at ``pct`` 0 to ``end`` at 1, along half a cosine or a line."""
        if self._anneal_func_type == "cos":
            return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)
        return (end - start) * pct + start

    def get_lr(self) -> list[float]:
        step = self.last_epoch
        if step > self.total_steps:
            raise ValueError(
                f"Tried to step {step} times. The specified number of total steps is "
                f"{self.total_steps}"
            )
        lrs = []
        for group in self.optimizer.param_groups:
            start_step = 0.0
            for i, phase in enumerate(self._schedule_phases):
                end_step = phase["end_step"]
                if step <= end_step or i == len(self._schedule_phases) - 1:
                    break
                start_step = end_step
            pct = (step - start_step) / (end_step - start_step)
            lrs.append(self._anneal(group[phase["start_lr"]], group[phase["end_lr"]], pct))
            if self.cycle_momentum:
                momentum = self._anneal(
                    group[phase["start_momentum"]], group[phase["end_momentum"]], pct
                )
                self._set_momentum(group, momentum)
        return lrs


class CyclicLR(_MomentumCycle):
    """The cyclical learning-rate policy (Smith): per batch, the rate goes from ``base_lr``
    up to ``max_lr`` over ``step_size_up`` steps and back over ``step_size_down``, the
    amplitude scaled per cycle (``triangular``: 1, ``triangular2``: halved each cycle) or
    per step (``exp_range``: ``gamma ** step``, or a ``scale_fn``); momentum cycles inversely.

    >>> opt = ember.optim.SGD([ember.nn.Parameter(ember.ones(1))], lr=0.1, momentum=0.9)
    >>> s = ember.optim.lr_scheduler.CyclicLR(opt, 0.1, 1.0, step_size_up=2)
    >>> for _ in range(2): s.step()
    >>> round(s.get_last_lr()[0], 4), round(opt.param_groups[0]["momentum"], 4)
    (1.0, 0.8)
    """

    def __init__(
        self,
        optimizer: Optimizer,
        base_lr: float | list[float],
        max_lr: float | list[float],
        step_size_up: int = 2000,
        step_size_down: int | None = None,
        mode: str = "triangular",
        gamma: float = 1.0,
        scale_fn: Callable[[float], float] | None = None,
        scale_mode: str = "cycle",
        cycle_momentum: bool = True,
        base_momentum: float | list[float] = 0.8,
        max_momentum: float | list[float] = 0.9,
        last_epoch: int = -1,
    ) -> None:
        _check_optimizer(optimizer)
        base_lrs = _per_group("base_lr", optimizer, base_lr)
        if last_epoch == -1:
            for lr, group in zip(base_lrs, optimizer.param_groups, strict=True):
                group["lr"] = lr
        self.max_lrs = _per_group("max_lr", optimizer, max_lr)
        up = float(step_size_up)
        down = float(step_size_down) if step_size_down is not None else up
        self.total_size = up + down
        self.step_ratio = up / self.total_size
        if mode not in ("triangular", "triangular2", "exp_range") and scale_fn is None:
            raise ValueError("mode is invalid and scale_fn is None")
        self.mode, self.gamma = mode, gamma
        self._scale_fn_custom = scale_fn
        self.scale_mode = scale_mode
        if scale_fn is None:
            self.scale_mode = "iterations" if mode == "exp_range" else "cycle"
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            self._check_momentum(optimizer)
            self.base_momentums = _per_group("base_momentum", optimizer, base_momentum)
            self.max_momentums = _per_group("max_momentum", optimizer, max_momentum)
            if last_epoch == -1:
                self._start_momentum(optimizer, self.max_momentums, self.base_momentums)
        super().__init__(optimizer, last_epoch)
        self.base_lrs = base_lrs

    def scale_fn(self, x: float) -> float:
        """The amplitude factor at cycle (or step) ``x``."""
        if self._scale_fn_custom is not None:
            return self._scale_fn_custom(x)
        if self.mode == "triangular":
            return 1.0
        if self.mode == "triangular2":
            return 1 / (2.0 ** (x - 1))
        return self.gamma**x

    def get_lr(self) -> list[float]:
        cycle = math.floor(1 + self.last_epoch / self.total_size)
        x = 1.0 + self.last_epoch / self.total_size - cycle
        if x <= self.step_ratio:
            scale_factor = x / self.step_ratio
        else:
            scale_factor = (x - 1) / (self.step_ratio - 1)
        at = cycle if self.scale_mode == "cycle" else self.last_epoch
        lrs = [
            base + (top - base) * scale_factor * self.scale_fn(at)
            for base, top in zip(self.base_lrs, self.max_lrs, strict=True)
        ]
        if self.cycle_momentum:
            for group, low, high in zip(
                self.optimizer.param_groups, self.base_momentums, self.max_momentums, strict=True
            ):
                self._set_momentum(group, high - (high - low) * scale_factor * self.scale_fn(at))
        return lrs

    def state_dict(self) -> dict[str, Any]:
        """Everything but the optimizer and a custom ``scale_fn`` (functions do not pickle
        reliably; PyTorch leaves them out too).

        >>> opt = ember.optim.SGD([ember.nn.Parameter(ember.ones(1))], lr=1.0, momentum=0.9)
        >>> "_scale_fn_custom" in ember.optim.lr_scheduler.CyclicLR(opt, 0.1, 1.0).state_dict()
        False
        """
        state = super().state_dict()
        state.pop("_scale_fn_custom", None)
        return state


class SequentialLR(LRScheduler):
    """Run ``schedulers`` one after another: the ``i``-th from epoch ``milestones[i - 1]``
    (restarted there at its epoch 0).

    >>> opt = ember.optim.SGD([ember.nn.Parameter(ember.ones(1))], lr=1.0)
    >>> warm = ember.optim.lr_scheduler.LinearLR(opt, start_factor=0.5, total_iters=2)
    >>> decay = ember.optim.lr_scheduler.ExponentialLR(opt, gamma=0.5)
    >>> s = ember.optim.lr_scheduler.SequentialLR(opt, [warm, decay], milestones=[2])
    >>> lrs = []
    >>> for _ in range(4): s.step(); lrs.append(s.get_last_lr()[0])
    >>> lrs
    [0.75, 1.0, 0.5, 0.25]
    """

    def __init__(
        self,
        optimizer: Optimizer,
        schedulers: list[LRScheduler],
        milestones: list[int],
        last_epoch: int = -1,
    ) -> None:
        _check_composed(self, optimizer, schedulers, "at least one scheduler")
        if len(milestones) != len(schedulers) - 1:
            raise ValueError(
                "Sequential Schedulers expects number of schedulers provided to be one more "
                f"than the number of milestone points, but got number of schedulers "
                f"{len(schedulers)} and the number of milestones to be equal to "
                f"{len(milestones)}"
            )
        self._schedulers = schedulers
        self._milestones = milestones
        self.last_epoch = last_epoch + 1
        self.optimizer = optimizer
        for group in optimizer.param_groups:  # undo what the schedulers' constructors did
            group["lr"] = group["initial_lr"]
        self.recursive_undo()
        first = self._schedulers[bisect_right(milestones, 0)]
        first._initial_step()
        self._last_lr = first.get_last_lr()

    def recursive_undo(self, sched: Any = None) -> None:
        """Take back the epoch each scheduler inside (however nested) counted on creation."""
        target = self if sched is None else sched
        if hasattr(target, "_schedulers"):
            for s in target._schedulers:
                self.recursive_undo(s)
        elif hasattr(target, "last_epoch"):
            target.last_epoch -= 1

    def step(self) -> None:  # type: ignore[override]
        """Advance the scheduler whose turn it is (restarting it at its milestone)."""
        self.last_epoch += 1
        idx = bisect_right(self._milestones, self.last_epoch)
        scheduler = self._schedulers[idx]
        if idx > 0 and self._milestones[idx - 1] == self.last_epoch:
            scheduler._update_lr(0)
        else:
            scheduler.step()
        self._last_lr = scheduler.get_last_lr()

    def state_dict(self) -> dict[str, Any]:
        """Everything but the optimizer, with each inner scheduler's ``state_dict``."""
        return _composed_state_dict(self)

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore what ``state_dict`` returned, the inner schedulers' too."""
        _load_composed_state_dict(self, state_dict)


class ChainedScheduler(LRScheduler):
    """Step every one of ``schedulers`` at each step, so their factors multiply (NOTE
    [chainable schedules]).

    >>> opt = ember.optim.SGD([ember.nn.Parameter(ember.ones(1))], lr=1.0)
    >>> a = ember.optim.lr_scheduler.ConstantLR(opt, factor=0.5, total_iters=2)
    >>> b = ember.optim.lr_scheduler.ExponentialLR(opt, gamma=0.5)
    >>> s = ember.optim.lr_scheduler.ChainedScheduler([a, b])
    >>> s.step(); s.get_last_lr()
    [0.25]
    """

    def __init__(
        self, schedulers: Sequence[LRScheduler], optimizer: Optimizer | None = None
    ) -> None:
        optimizer = optimizer or (schedulers[0].optimizer if schedulers else None)
        _check_composed(self, optimizer, schedulers, "at least one scheduler to be chained")
        self._schedulers = schedulers
        self.optimizer = optimizer
        self._last_lr = _group_values(schedulers[-1].optimizer, "lr")

    def step(self) -> None:  # type: ignore[override]
        """Step each scheduler in turn."""
        for scheduler in self._schedulers:
            scheduler.step()
        self._last_lr = _group_values(self._schedulers[-1].optimizer, "lr")

    def state_dict(self) -> dict[str, Any]:
        """Everything but the optimizer, with each inner scheduler's ``state_dict``."""
        return _composed_state_dict(self)

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore what ``state_dict`` returned, the inner schedulers' too."""
        _load_composed_state_dict(self, state_dict)


def _check_composed(
    composer: LRScheduler, optimizer: Optimizer | None, schedulers: Sequence[Any], need: str
) -> None:
    """PyTorch's checks on the schedulers a ``SequentialLR``/``ChainedScheduler`` runs."""
    name = type(composer).__name__
    if len(schedulers) < 1:
        raise ValueError(f"{name} expects {need}, but got no scheduler.")
    for i, scheduler in enumerate(schedulers):
        if not hasattr(scheduler, "optimizer"):
            raise TypeError(f"{name} at index {i} should have `optimizer` as its attribute.")
        if isinstance(scheduler, ReduceLROnPlateau):
            raise ValueError(
                f"{name} does not support `ReduceLROnPlateau` scheduler as it requires "
                "additional kwargs to be specified when calling `step`, but got one at index "
                f"{i} in the given schedulers sequence."
            )
        if optimizer != scheduler.optimizer:
            raise ValueError(
                f"{name} expects all schedulers to belong to the same optimizer, but got "
                f"scheduler {type(scheduler).__name__} at index {i} has "
                f"{scheduler.optimizer}, which is different from {type(optimizer).__name__}."
            )


def _composed_state_dict(composer: Any) -> dict[str, Any]:
    out = {k: v for k, v in composer.__dict__.items() if k not in ("optimizer", "_schedulers")}
    out["_schedulers"] = [s.state_dict() for s in composer._schedulers]
    return out


def _load_composed_state_dict(composer: Any, state_dict: dict[str, Any]) -> None:
    composer.__dict__.update({k: v for k, v in state_dict.items() if k != "_schedulers"})
    for scheduler, saved in zip(composer._schedulers, state_dict["_schedulers"], strict=True):
        scheduler.load_state_dict(saved)


class ReduceLROnPlateau(LRScheduler):
    """Multiply the learning rate by ``factor`` when a metric (``step(metric)``) has not
    improved for more than ``patience`` epochs; improving means beating the best value by
    ``threshold`` (relative or absolute), and ``cooldown`` epochs after a reduction are not
    counted. The rate stays at least ``min_lr``; a change smaller than ``eps`` is skipped.

    >>> opt = ember.optim.SGD([ember.nn.Parameter(ember.ones(1))], lr=1.0)
    >>> s = ember.optim.lr_scheduler.ReduceLROnPlateau(opt, patience=1, factor=0.5)
    >>> for loss in [3.0, 2.0, 2.0, 2.0]: s.step(loss)
    >>> s.get_last_lr()
    [0.5]
    """

    def __init__(
        self,
        optimizer: Optimizer,
        mode: str = "min",
        factor: float = 0.1,
        patience: int = 10,
        threshold: float = 1e-4,
        threshold_mode: str = "rel",
        cooldown: int = 0,
        min_lr: list[float] | float = 0,
        eps: float = 1e-8,
    ) -> None:
        if factor >= 1.0:
            raise ValueError("Factor should be < 1.0.")
        self.factor = factor
        _check_optimizer(optimizer)
        self.optimizer = optimizer
        n = len(optimizer.param_groups)
        if isinstance(min_lr, (list, tuple)):
            if len(min_lr) != n:
                raise ValueError(f"expected {n} min_lrs, got {len(min_lr)}")
            self.default_min_lr: float | None = None
            self.min_lrs = list(min_lr)
        else:
            self.default_min_lr = min_lr
            self.min_lrs = [min_lr] * n
        self.patience = patience
        self.cooldown = cooldown
        self.eps = eps
        self.last_epoch = 0
        self._last_lr = _group_values(optimizer, "lr")
        self._init_is_better(mode, threshold, threshold_mode)
        self._reset()

    def _init_is_better(self, mode: str, threshold: float, threshold_mode: str) -> None:
        if mode not in ("min", "max"):
            raise ValueError("mode " + mode + " is unknown!")
        if threshold_mode not in ("rel", "abs"):
            raise ValueError("threshold mode " + threshold_mode + " is unknown!")
        self.mode_worse = math.inf if mode == "min" else -math.inf
        self.mode = mode
        self.threshold = threshold
        self.threshold_mode = threshold_mode

    def _reset(self) -> None:
        self.best = self.mode_worse
        self.cooldown_counter = 0
        self.num_bad_epochs = 0

    @property
    def in_cooldown(self) -> bool:
        """Whether the epochs after the last reduction are still being skipped."""
        return self.cooldown_counter > 0

    def _is_better(self, a: float, best: float) -> bool:
        if self.mode == "min":
            if self.threshold_mode == "rel":
                return a < best * (1.0 - self.threshold)
            return a < best - self.threshold
        if self.threshold_mode == "rel":
            return a > best * (self.threshold + 1.0)
        return a > best + self.threshold

    def step(self, metrics: Any, epoch: int | None = None) -> None:  # type: ignore[override]
        """Record this epoch's metric (a number or 0-dim tensor) and reduce if it is time.

        >>> opt = ember.optim.SGD([ember.nn.Parameter(ember.ones(1))], lr=1.0)
        >>> ember.optim.lr_scheduler.ReduceLROnPlateau(opt, mode="max").step(ember.tensor(0.5))
        """
        current = float(metrics)
        self.last_epoch = self.last_epoch + 1 if epoch is None else epoch
        if self._is_better(current, self.best):
            self.best = current
            self.num_bad_epochs = 0
        else:
            self.num_bad_epochs += 1
        if self.in_cooldown:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0
        if self.num_bad_epochs > self.patience:
            self._reduce_lr()
            self.cooldown_counter = self.cooldown
            self.num_bad_epochs = 0
        self._last_lr = _group_values(self.optimizer, "lr")

    def _reduce_lr(self) -> None:
        groups = self.optimizer.param_groups
        if len(groups) != len(self.min_lrs):
            if self.default_min_lr is None:
                raise RuntimeError(
                    f"The number of param groups in the `optimizer` ({len(groups)}) differs "
                    f"from when `ReduceLROnPlateau` was initialized ({len(self.min_lrs)}), "
                    "usually due to a new param group being added to the optimizer. Please "
                    "modify the `min_lrs` field to match the length of the `optimizer` param "
                    "groups."
                )
            self.min_lrs = [self.default_min_lr] * len(groups)
        for group, min_lr in zip(groups, self.min_lrs, strict=True):
            old = float(group["lr"])
            new = max(old * self.factor, min_lr)
            if old - new > self.eps:
                group["lr"] = new

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore what ``state_dict`` returned.

        >>> opt = ember.optim.SGD([ember.nn.Parameter(ember.ones(1))], lr=1.0)
        >>> s = ember.optim.lr_scheduler.ReduceLROnPlateau(opt); s.load_state_dict(s.state_dict())
        """
        self.__dict__.update(state_dict)
        self._init_is_better(self.mode, self.threshold, self.threshold_mode)
