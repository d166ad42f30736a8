"""Training loop, test accuracy and the per-epoch progress bar."""

from __future__ import annotations

import io
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol, TextIO

import ember
from ember import nn
from ember._tensor import Tensor
from ember.demo.data import Split, batches
from ember.demo.models import count_params
from ember.demo.modes import MODES, Runner
from ember.demo.parallel import Parallel
from ember.optim.optimizer import Optimizer


class Progress:
    """A text progress bar for one epoch: ``\\r`` updates per batch on a terminal, and only
    the finished line otherwise (so logs get one line per epoch).

    >>> from ember.demo.train import Progress
    >>> import io; p = Progress("mlp", 1, 2, 4, io.StringIO()); p.finish("done"); p.out.getvalue()
    'mlp  epoch 1/2 [############] 4/4 done\\n'
    """

    WIDTH = 12  # a finished line fits 80 columns (tests/test_main.py)

    def __init__(self, label: str, epoch: int, epochs: int, steps: int, out: TextIO) -> None:
        self.head = f"{label}  epoch {epoch:>{len(str(epochs))}}/{epochs}"
        self.steps = steps
        self.out = out
        self.live = out.isatty()

    def _bar(self, done: int) -> str:
        filled = self.WIDTH * done // max(self.steps, 1)
        return f"{self.head} [{'#' * filled}{'.' * (self.WIDTH - filled)}] {done}/{self.steps}"

    def update(self, done: int, loss: float) -> None:
        """Redraw the bar after ``done`` steps (on a terminal only)."""
        if self.live:
            self.out.write(f"\r{self._bar(done)} loss {loss:.4f}")
            self.out.flush()

    def finish(self, summary: str) -> None:
        """Draw the full bar followed by ``summary`` and end the line."""
        self.out.write(("\r" if self.live else "") + f"{self._bar(self.steps)} {summary}\n")
        self.out.flush()


@dataclass
class Result:
    """What training one model in one mode gave: accuracy on the test set, seconds spent in
    each epoch's training steps, and the model's size."""

    model: str
    mode: str
    params: int
    accuracy: float = 0.0
    epoch_seconds: list[float] = field(default_factory=list)
    epoch_losses: list[float] = field(default_factory=list)  # mean training loss per epoch

    @property
    def seconds_per_epoch(self) -> float:
        return sum(self.epoch_seconds) / max(len(self.epoch_seconds), 1)


def accuracy(run: Runner, x: Tensor, y: Tensor) -> float:
    """The fraction of ``x`` whose highest logit is at the label ``y``.

    >>> from ember.demo.train import accuracy
    >>> accuracy(lambda x: x, ember.tensor([[0.0, 1.0], [1.0, 0.0]]), ember.tensor([1, 1]))
    0.5
    """
    with ember.no_grad():
        logits = run(x)
        return (logits.argmax(1) == y.to(logits.device)).float().mean().item()


class Stepper(Protocol):
    """What a training step needs of an optimizer (an ``Optimizer``, or a wrapper of one)."""

    def zero_grad(self) -> None: ...

    def step(self) -> None: ...


def train_step(
    run: Runner, loss_fn: Callable[[Tensor, Tensor], Tensor], opt: Stepper, x: Tensor, y: Tensor
) -> Tensor:
    """One optimisation step on the batch ``(x, y)``; returns the loss (before the step).

    >>> from ember.demo.train import train_step
    >>> m = ember.nn.Linear(2, 2); o = ember.optim.SGD(m.parameters(), lr=0.1)
    >>> x, y = ember.ones(3, 2), ember.tensor([0, 1, 1])
    >>> train_step(m, ember.nn.CrossEntropyLoss(), o, x, y).shape
    ember.Size([])
    """
    loss = loss_fn(run(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return loss


def train(
    name: str,
    model: nn.Module,
    opt: Optimizer,
    data: Split,
    *,
    epochs: int,
    batch_size: int,
    seed: int,
    mode: str = "eager",
    out: TextIO | None = None,
    parallel: Parallel | None = None,
) -> Result:
    """Train ``model`` on ``data`` for ``epochs``, drawing a progress bar per epoch on ``out``
    (None: silent), and return its test accuracy and timings. With ``parallel`` (a job of
    several processes: ``ember.demo.parallel``) the model trains as DistributedDataParallel,
    each rank on its share of every batch; losses are the whole job's.

    >>> from ember.demo.train import train
    >>> from ember.demo import data, models; s = data.split_digits(64); m = models.mlp()
    >>> o = ember.optim.SGD(m.parameters(), lr=0.1)
    >>> train("mlp", m, o, s, epochs=1, batch_size=32, seed=0).epoch_seconds.__len__()
    1
    """
    how = MODES[mode]
    run, loss_fn = how(parallel.wrap(model) if parallel else model), nn.CrossEntropyLoss()
    result = Result(name, mode, count_params(model))
    for epoch in range(1, epochs + 1):
        loader = batches(data.train_x, data.train_y, batch_size, seed=seed * 1000 + epoch)
        bar = Progress(f"{name:<4} {mode:<8}", epoch, epochs, len(loader), out or io.StringIO())
        model.train()
        start, total, seen = time.perf_counter(), 0.0, 0
        for step, (x, y) in enumerate(loader, 1):
            weight = 1.0
            if parallel is not None:
                x, y, weight = parallel.shard(x, y)
            step_loss = loss_fn if weight == 1.0 else _weighted(loss_fn, weight)
            loss_t = train_step(run, step_loss, opt, x, how.move(y))
            how.end_step()
            loss = loss_t.item() / weight
            total, seen = total + loss * len(y), seen + len(y)
            bar.update(step, loss)
        result.epoch_seconds.append(time.perf_counter() - start)
        if parallel is not None:
            total, seen = parallel.total(total, seen)
        result.epoch_losses.append(total / seen)
        model.eval()
        result.accuracy = accuracy(run, data.test_x, data.test_y)
        bar.finish(
            f"loss {total / seen:.4f}  acc {result.accuracy:6.1%}  {result.epoch_seconds[-1]:.2f} s"
        )
    return result


def _weighted(
    loss_fn: Callable[[Tensor, Tensor], Tensor], weight: float
) -> Callable[[Tensor, Tensor], Tensor]:
    return lambda out, y: loss_fn(out, y) * weight
