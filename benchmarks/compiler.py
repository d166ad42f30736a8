"""The lazy device's compiler, tier by tier (group ``lazy-tiers``).

- the fused chain ``((x * w + 1).relu() * 0.5 + x).sum()`` on each tier against the same
  NumPy expression: the NumPy-source tier computes the same ufuncs in one reused buffer, the
  interpreter tier one op at a time, the numba tier in one parallel loop;
- a cache hit of the MLP 784-64-64-10 batch-8 SGD step, in two parts: keying the recorded
  graph (``prepare``: walk, number, key) and the compiled function (the kernels, parameters
  written in place) against PyTorch's whole eager step;

The whole lazy step (recording included) is ``lazy_cases``' "mlp 64 b8 lazy".
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import numpy as np

import ember
from benchmarks.run import Case, Thunk, _chain, _mlp_step_pair, torch


def _in_tier(tier: str, fn: Callable[[], Any]) -> Thunk:
    def run() -> Any:
        saved = os.environ.get("EMBER_LAZY_TIER")
        os.environ["EMBER_LAZY_TIER"] = tier
        try:
            return fn()
        finally:
            if saved is None:
                del os.environ["EMBER_LAZY_TIER"]
            else:
                os.environ["EMBER_LAZY_TIER"] = saved

    return run


def _mlp_graph() -> tuple[Thunk, Thunk]:
    """(key the recorded MLP step's graph, run its compiled function) on a cache hit."""
    from ember.lazy import executor

    rng = np.random.default_rng(0)
    nn = ember.nn
    model = nn.Sequential(
        nn.Linear(784, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 10)
    )
    model.to("lazy")
    opt = ember.optim.SGD(model.parameters(), lr=0.01)
    xs = ember.from_numpy(rng.standard_normal((8, 784), dtype=np.float32)).to("lazy")
    ys = ember.from_numpy(rng.integers(0, 10, 8)).to("lazy")

    def record() -> None:
        opt.zero_grad()
        nn.functional.cross_entropy(model(xs), ys).backward()
        opt.step()

    for _ in range(3):
        record()
        ember.lazy.mark_step()
    record()
    bases = sorted(
        (a for a in executor.LIVE.alive() if a.node is not None and a.value is None),
        key=lambda a: a.seq,
    )
    roots = [a.node for a in bases]
    needed = {id(a.node[0]) for a in executor.LIVE.alive() if a.node is not None}
    cut = executor.prepare(roots, needed)  # type: ignore[arg-type]
    assert cut is not None
    fn, _ = executor.compiled(cut).function(cut)
    args = [a.copy() if isinstance(a, np.ndarray) else a for a in (*cut.inputs, *cut.params)]
    return (lambda: executor.prepare(roots, needed)), (lambda: fn(*args))


def cases(quick: bool) -> list[Case]:
    rng = np.random.default_rng(0)
    n = 10**6 if quick else 10**7
    tag = f"1e{len(str(n)) - 1}"
    x, w = (rng.standard_normal(n, dtype=np.float32) for _ in range(2))
    lx, lw = ember.from_numpy(x).to("lazy"), ember.from_numpy(w).to("lazy")
    ember.lazy.mark_step()
    chain, numpy_chain = _chain(ember), _chain(np)
    out: list[Case] = []
    for tier, limit in (("interpreter", 1.5), ("numpy", 1.1), ("numba", 0.5)):
        thunk = _in_tier(tier, lambda: chain(lx, lw).item())
        out.append(
            Case(
                "lazy-tiers",
                f"chain {tag} {tier[:6]}",
                thunk,
                lambda: numpy_chain(x, w),
                None,
                ("numpy", limit),
            )
        )
    key, graph = _mlp_graph()
    torch_step = _mlp_step_pair((784, 64, 64, 10), 8)[1]
    out.append(Case("lazy-tiers", "mlp 64 b8 key", key, None, None, ("us", 100.0)))
    out.append(Case("lazy-tiers", "mlp 64 b8 graph", graph, None, torch_step, ("torch", 0.5)))
    if torch is None:
        out = [c for c in out if c.goal[0] != "torch"]
    return out
