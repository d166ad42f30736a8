"""How a model runs: each mode prepares a module and the tensors it is given.

- ``eager``: every op runs when it is called, on the cpu device;
- ``lazy``: the model and its batches live on the lazy device (``ember.lazy``): a training
  step records a graph, and ``mark_step`` at its end compiles (or finds in the cache) and
  runs it, elementwise chains fused into numba loops;
- ``compiled``: the model is compiled ahead of time (``ember.compile``: forward and backward
  traced once per batch shape into graphs that ember's compiler turns into NumPy code with
  numba-fused loops); the optimizer step runs eagerly on the same parameters.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import ember
from ember import nn
from ember._tensor import Tensor

Runner = Callable[[Tensor], Tensor]


@dataclass(frozen=True)
class Mode:
    """A way of running: the device the model and its data go to, and what ends a step.

    >>> from ember.demo.modes import MODES
    >>> m = ember.nn.Linear(2, 1); MODES["eager"](m)(ember.ones(1, 2)).shape
    ember.Size([1, 1])
    """

    name: str
    device: str

    def __call__(self, model: nn.Module) -> Runner:
        """Move ``model`` to the mode's device (in place: optimizers stay valid) and return
        the callable that runs it on a batch from the cpu."""
        model.to(self.device)
        return lambda x: model(self.move(x))

    def move(self, t: Tensor) -> Tensor:
        return t.to(self.device)

    def end_step(self) -> None:
        """After an optimizer step: lazy mode computes the step's graph here."""
        if self.device == "lazy":
            ember.lazy.mark_step()


@dataclass(frozen=True)
class CompiledMode(Mode):
    """The model compiled by ``ember.compile`` (its parameters stay the model's own).

    >>> from ember.demo.modes import MODES
    >>> m = ember.nn.Linear(2, 1); MODES["compiled"](m)(ember.ones(1, 2)).shape
    ember.Size([1, 1])
    """

    def __call__(self, model: nn.Module) -> Runner:
        model.to(self.device)
        compiled = ember.compile(model)
        return lambda x: compiled(self.move(x))


MODES: dict[str, Mode] = {
    "eager": Mode("eager", "cpu"),
    "lazy": Mode("lazy", "lazy"),
    "compiled": CompiledMode("compiled", "cpu"),
}
PLANNED: tuple[str, ...] = ()  # modes not built yet (the demo would say so)
