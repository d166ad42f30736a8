"""Random programs under forward-mode AD: the loss's tangent against the backward gradient.

A program (``programs.py``) runs once with its float inputs that require grad made duals
(``make_dual`` with a fixed tangent ``t`` per input); the tangent of its scalar loss is the
directional derivative ``dL . t``. Backward mode computes the same number as
``sum_i Re <grad_i, t_i>`` from the inputs' gradients, so the two must agree: every op of the
program is checked in forward mode against its backward formula's Jacobian, on the
tester's shapes, dtypes, views and in-place steps.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

import numpy as np

from ember.testing._internal.programs import Program, _weights


def _tangent(lib: ModuleType, v: Any) -> Any:
    """The fixed tangent of an input: not the loss's weights, not constant."""
    n = v.numel()
    return lib.arange(n, dtype=v.dtype, device=v.device).mul(0.37).add(0.2).sin().reshape(v.shape)


def _np(t: Any) -> np.ndarray:
    return np.asarray(t.detach().cpu().numpy())


def forward_derivative(program: Program, lib: ModuleType) -> tuple[Any, str | None]:
    """(the loss's tangent as a NumPy scalar, or None; the error that stopped the run)."""
    fwAD = lib.autograd.forward_ad
    values: dict[str, Any] = {}
    with fwAD.dual_level():
        for inp in program.inputs:
            x = inp.make(lib)
            if inp.requires_grad:
                x = fwAD.make_dual(x, _tangent(lib, x.detach()))
            values[inp.name] = x
        for i, step in enumerate(program.steps):
            try:
                outs = step.execute(lib, values)
            except Exception as exc:  # noqa: BLE001 - the error is the finding
                return None, f"step {i} `{step.code}` raised {type(exc).__name__}: {exc}"
            values.update(zip(step.outputs, outs, strict=True))
        try:
            loss = sum((values[n] * _weights(lib, values[n])).sum() for n in program.loss)
            tangent = fwAD.unpack_dual(loss).tangent
        except Exception as exc:  # noqa: BLE001
            return None, f"the loss raised {type(exc).__name__}: {exc}"
    return (None if tangent is None else _np(tangent)), None


def check_jvp(program: Program, lib: ModuleType, oracle: ModuleType | None = None) -> list[str]:
    """The disagreements of ``lib``'s forward mode with its own backward mode on
    ``program`` (empty when they agree, or when backward mode itself cannot run it). A
    program that forward mode refuses is a disagreement unless ``oracle`` (PyTorch) refuses
    it too (``unique_consecutive`` of a dual: neither has a forward derivative)."""
    if not program.loss or not any(inp.requires_grad for inp in program.inputs):
        return []
    run = program.run(lib)
    if run.error is not None:
        return []  # the program fails without forward mode: check_program's business
    expected = scale = 0.0
    for inp in program.inputs:
        g = run.grads.get(inp.name)
        if inp.requires_grad and g is not None:
            x = inp.make(lib).detach()
            terms = np.real(np.conj(_np(g)) * _np(_tangent(lib, x))).astype(np.float64)
            expected += float(np.sum(terms))
            scale += float(np.sum(np.abs(terms)))
    got, error = forward_derivative(program, lib)
    if error is not None:
        if oracle is not None and forward_derivative(program, oracle)[1] is not None:
            return []  # the oracle refuses it as well
        return [f"under jvp: {error}"]
    actual = 0.0 if got is None else float(np.real(got))
    # the scale of the sum, not of its value: terms may cancel
    tol = program.tolerances["grad"] * max(scale, 1.0)
    if np.isnan(actual) and np.isnan(expected):
        return []
    if not abs(actual - expected) <= tol:
        return [
            f"under jvp: the loss's tangent is {actual}, the backward gradient gives {expected}"
        ]
    return []
