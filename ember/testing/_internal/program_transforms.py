"""Random programs through ``func`` transforms inside ordinary autograd, against PyTorch.

A program (``programs.py``) becomes a scalar function ``L(a)`` of its first input that
requires grad (``a``); its other inputs that require grad are captured by ``L``, as a
model's parameters are. Two compositions of a transform with the enclosing ``backward``
(which ``torch.func`` treats as the lowest transform level) are run, and the gradients
every input receives are compared with PyTorch's:

- ``grad``, MAML's second-order step: ``g = grad(L)(a)``, then
  ``L(a - 0.1 g) + (g * w).sum()`` backpropagated: the captured inputs' gradients flow
  through the inner gradient's own graph;
- ``vjp``: ``o, fn = vjp(L, a)``, ``(g,) = fn(c)`` for a cotangent ``c`` that requires grad,
  then ``o + (g * w).sum() + c`` backpropagated.

So every op of the program is checked in double backward, reached through a transform.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import import_module
from types import ModuleType
from typing import Any

from ember.testing._internal.programs import (
    GRAD_FLOOR,
    Program,
    _compare_tensor,
    _weights,
)

#: the compositions checked, by name
COMPOSITIONS = ("grad", "vjp")


def _function(program: Program, lib: ModuleType, values: dict[str, Any], a: str) -> Any:
    """The program's loss as a function of input ``a`` (the other inputs captured)."""

    def loss(x: Any) -> Any:
        env = dict(values)
        env[a] = x
        for step in program.steps:
            env.update(zip(step.outputs, step.execute(lib, env), strict=True))
        return sum((env[n] * _weights(lib, env[n])).sum() for n in program.loss)

    return loss


def _total(kind: str, lib: ModuleType, loss: Callable[[Any], Any], x: Any) -> Any:
    func = import_module(f"{lib.__name__}.func")
    if kind == "grad":
        g = func.grad(loss)(x)
        return loss(x - 0.1 * g) + (g * _weights(lib, g)).sum()
    c = lib.tensor(0.75, dtype=x.dtype, requires_grad=True)
    o, fn = func.vjp(loss, x)
    (g,) = fn(c)
    return o + (g * _weights(lib, g)).sum() + c


def composed_grads(program: Program, lib: ModuleType, kind: str) -> tuple[dict[str, Any], str]:
    """The gradients of the inputs that require grad after composition ``kind``, or the
    error that stopped the run (``""`` when none did)."""
    values = {inp.name: inp.make(lib) for inp in program.inputs}
    a = next(inp.name for inp in program.inputs if inp.requires_grad)
    try:
        total = _total(kind, lib, _function(program, lib, values, a), values[a])
        total.backward()
    except Exception as exc:  # noqa: BLE001 - the error is the finding
        return {}, f"{type(exc).__name__}: {exc}"
    return {i.name: values[i.name].grad for i in program.inputs if i.requires_grad}, ""


def check_composition(program: Program, lib: ModuleType, oracle: ModuleType) -> list[str]:
    """The differences of ``lib`` from ``oracle`` on ``program`` under each composition
    (empty when they agree, or when the program has no float loss or the oracle cannot run
    the composition: double backward of ops PyTorch does not differentiate twice)."""
    if not program.loss or not any(inp.requires_grad for inp in program.inputs):
        return []
    if program.run(oracle).error is not None:
        return []
    problems = []
    for kind in COMPOSITIONS:
        expected, refused = composed_grads(program, oracle, kind)
        if refused:
            continue
        actual, error = composed_grads(program, lib, kind)
        if error:
            problems.append(f"{kind}: raised {error}")
            continue
        for name, exp in expected.items():
            found = _compare_tensor(
                f"{kind}: {name}.grad",
                actual.get(name),
                exp,
                program.tolerances["grad"],
                GRAD_FLOOR,
            )
            if found:
                problems.append(found)
    return problems
