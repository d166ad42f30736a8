"""How a model runs: each mode turns a module into the callable that training and tracing use.

Only eager mode exists so far; lazy and compiled modes will be added here, and every table
the demo prints already has a mode column for them.
"""

from __future__ import annotations

from collections.abc import Callable

from ember import nn
from ember._tensor import Tensor

Runner = Callable[[Tensor], Tensor]


def eager(model: nn.Module) -> Runner:
    """Eager mode: every op runs as soon as it is called (the module itself).

    >>> m = ember.nn.Linear(2, 1); eager(m) is m
    True
    """
    return model


MODES: dict[str, Callable[[nn.Module], Runner]] = {"eager": eager}
PLANNED = ("lazy", "compiled")  # not built yet: the demo says so instead of faking them
