"""Optimizer steps: one ``step()`` of each optimizer over the parameters of a small MLP
(784-256-10: four tensors, 203,530 floats), ember against PyTorch, both in their foreach
form and from the same state. The work is a dozen elementwise passes over every parameter,
so the goal is relative to PyTorch's step (whose foreach ops make one fused pass each, where
ember's NumPy kernels make two to four); LBFGS is left out (its step is the closure's)."""

from __future__ import annotations

from typing import Any

import numpy as np

import ember
from benchmarks.run import Case, Thunk

try:
    import torch
except ImportError:
    torch = None

_SHAPES = [(256, 784), (256,), (10, 256), (10,)]

_OPTIMIZERS: dict[str, dict[str, Any]] = {
    "SGD": {"lr": 0.01, "momentum": 0.9},
    "Adam": {"lr": 1e-3},
    "AdamW": {"lr": 1e-3, "amsgrad": True},
    "RMSprop": {"lr": 1e-3, "momentum": 0.9, "centered": True},
    "Adagrad": {"lr": 0.01, "lr_decay": 1e-3},
    "Adadelta": {},
    "Adamax": {},
    "NAdam": {},
    "RAdam": {},
}


def _step(lib: Any, name: str, shapes: list[tuple[int, ...]]) -> Thunk:
    """A thunk taking one step of ``name`` (state already made by a first step)."""
    rng = np.random.default_rng(0)
    params = []
    for shape in shapes:
        p = lib.nn.Parameter(lib.tensor(rng.standard_normal(shape).astype(np.float32)))
        p.grad = lib.tensor(rng.standard_normal(shape).astype(np.float32) * 1e-3)
        params.append(p)
    opt = getattr(lib.optim, name)(params, foreach=True, **_OPTIMIZERS[name])
    opt.step()
    return opt.step


def cases(quick: bool) -> list[Case]:
    """One case per optimizer: a step over an MLP's parameters (a tenth of it if quick)."""
    shapes = [(s[0] // 10, *s[1:]) for s in _SHAPES] if quick else _SHAPES
    return [
        Case(
            "optim",
            f"{name} step",
            _step(ember, name, shapes),
            None,
            _step(torch, name, shapes) if torch is not None else None,
            ("torch", 2.5),
        )
        for name in _OPTIMIZERS
    ]
