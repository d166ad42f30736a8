"""``ember.func`` (group ``func``): per-example gradients of the demo's MLP
(64-128-64-10 on 8 x 8 images), batch 64, with ``vmap(grad(loss))`` over
``functional_call``:

- "mlp per-sample grads b64 vmap vs loop": against a Python loop of 64 single-example
  backward passes in ember (goal <= 0.1x);
- "mlp per-sample grads b64 vmap": against PyTorch's ``torch.func`` on the same model
  (goal <= 1.5x).
"""

from __future__ import annotations

from typing import Any

import numpy as np

import ember
from benchmarks.run import Case, Thunk, torch


def _model(lib: Any) -> Any:
    rng = np.random.default_rng(0)
    model = lib.nn.Sequential(
        lib.nn.Flatten(), lib.nn.Linear(64, 128), lib.nn.ReLU(), lib.nn.Linear(128, 64),
        lib.nn.ReLU(), lib.nn.Linear(64, 10),
    )  # fmt: skip
    with lib.no_grad():
        for p in model.parameters():
            p.copy_(lib.from_numpy(rng.uniform(-0.1, 0.1, tuple(p.shape)).astype(np.float32)))
    return model


def _data(lib: Any, batch: int) -> tuple[Any, Any]:
    rng = np.random.default_rng(1)
    x = lib.from_numpy(rng.standard_normal((batch, 1, 8, 8), dtype=np.float32))
    return x, lib.from_numpy(rng.integers(0, 10, batch))


def per_sample_vmap(lib: Any, batch: int = 64) -> Thunk:
    """Per-example gradients with ``vmap(grad(...))`` in ``lib`` (ember or torch)."""
    model = _model(lib)
    params = {k: v.detach() for k, v in model.named_parameters()}
    x, y = _data(lib, batch)
    func = lib.func

    def loss(p: Any, xi: Any, yi: Any) -> Any:
        out = func.functional_call(model, p, (xi.unsqueeze(0),))
        return lib.nn.functional.cross_entropy(out, yi.unsqueeze(0))

    run = func.vmap(func.grad(loss), in_dims=(None, 0, 0))
    return lambda: run(params, x, y)


def per_sample_loop(lib: Any, batch: int = 64) -> Thunk:
    """Per-example gradients as a loop of single-example backward passes."""
    model = _model(lib)
    x, y = _data(lib, batch)
    params = list(model.parameters())
    loss_fn = lib.nn.functional.cross_entropy

    def run() -> list[list[Any]]:
        out = []
        for i in range(batch):
            for p in params:
                p.grad = None
            loss_fn(model(x[i : i + 1]), y[i : i + 1]).backward()
            out.append([p.grad for p in params])
        return out

    return run


def cases(quick: bool) -> list[Case]:
    vm = per_sample_vmap(ember)
    t_vm = per_sample_vmap(torch) if torch is not None else None
    return [
        Case("func", "mlp per-sample grads b64 vmap vs loop", vm, None, None, ("loop", 0.1),
             per_sample_loop(ember)),
        Case("func", "mlp per-sample grads b64 vmap", vm, None, t_vm, ("torch", 1.5)),
    ]  # fmt: skip
