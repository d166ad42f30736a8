"""``ember.compile`` (group ``compiled``): training steps with the model compiled ahead of
time (the ``"ember"`` backend: forward and backward graphs through ember's compiler), the
fused chain through ``ember.compile``, and the overhead of a compiled call of one op;
``report`` adds the compile time of the small MLP's step, cold and from the disk cache.

- "mlp 64 b8 compiled": the 784-64-64-10 MLP, batch 8, SGD step (zero_grad, compiled
  forward, cross-entropy, backward, step) against PyTorch's eager step (goal <= 1.0x);
- "mlp b8 loss compiled": the same step with the model and its cross-entropy compiled
  as one module (one forward and one backward graph), against the same PyTorch step;
- "mlp 512 b64 compiled": the 784-512-512-10 MLP, batch 64, against ember's eager step
  (goal <= 0.8x);
- "chain 1e7 compiled": ``((x * w + 1).relu() * 0.5 + x).sum()`` against a hand-written
  numba loop (goal <= 1.2x);
- "1 op compiled" / "1 op compiled rg": ``x + 1`` on 4 floats, without and with
  requires_grad: guards plus the runtime wrapper (goal <= 10 us); PyTorch's column is
  ``torch.compile`` of the same function (full run only: inductor compiles it for ~30 s).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from typing import Any

import numpy as np

import ember
from benchmarks.run import Case, Thunk, _chain, _numba_chain, mlp, mlp_weights, torch


def _with_loss(lib: Any, model: Any, loss_fn: Any) -> Any:
    """The model and its loss as one module, for ``compile`` to trace as one graph."""

    class WithLoss(lib.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.model, self.loss_fn = model, loss_fn

        def forward(self, x: Any, y: Any) -> Any:
            return self.loss_fn(self.model(x), y)

    return WithLoss()


def mlp_step(
    lib: Any, sizes: tuple[int, ...], batch: int, compiled: bool, with_loss: bool = False
) -> Thunk:
    """One SGD step of the MLP in ``lib`` (ember: optionally with the model compiled, or the
    model and its loss compiled as one graph: ``with_loss``)."""
    rng = np.random.default_rng(1)
    model = mlp(lib, mlp_weights(sizes, np.random.default_rng(0)))
    run = lib.compile(model) if compiled else model
    loss_fn = lib.nn.CrossEntropyLoss()
    xs = lib.from_numpy(rng.standard_normal((batch, sizes[0]), dtype=np.float32))
    ys = lib.from_numpy(rng.integers(0, sizes[-1], batch))
    opt = lib.optim.SGD(model.parameters(), lr=0.01)

    if with_loss:
        both = lib.compile(_with_loss(lib, model, loss_fn))

        def step() -> None:
            opt.zero_grad()
            both(xs, ys).backward()
            opt.step()

        return step

    def step() -> None:
        opt.zero_grad()
        loss_fn(run(xs), ys).backward()
        opt.step()

    return step


def cases(quick: bool) -> list[Case]:
    out: list[Case] = []
    small, big = (784, 64, 64, 10), (784, 512, 512, 10)
    t_small = mlp_step(torch, small, 8, False) if torch is not None else None
    out.append(Case("compiled", "mlp 64 b8 compiled", mlp_step(ember, small, 8, True), None,
                    t_small, ("torch", 1.0)))  # fmt: skip
    out.append(Case("compiled", "mlp b8 loss compiled", mlp_step(ember, small, 8, True, True),
                    None, t_small, ("torch", 1.0)))  # fmt: skip
    out.append(Case("compiled", "mlp 512 b64 compiled", mlp_step(ember, big, 64, True), None,
                    mlp_step(torch, big, 64, False) if torch is not None else None,
                    ("eager", 0.8), mlp_step(ember, big, 64, False)))  # fmt: skip
    rng = np.random.default_rng(0)
    n = 10**6 if quick else 10**7
    tag = f"1e{len(str(n)) - 1}"
    x, w = (rng.standard_normal(n, dtype=np.float32) for _ in range(2))
    ex, ew = ember.from_numpy(x), ember.from_numpy(w)
    chain = ember.compile(_chain(ember))
    hand = _numba_chain()
    tx, tw = (torch.from_numpy(x), torch.from_numpy(w)) if torch is not None else (None, None)
    t_chain = (lambda: _chain(torch)(tx, tw)) if torch else None
    ref = (lambda: hand(x, w)) if hand is not None else None
    out.append(Case("compiled", f"chain {tag} compiled", lambda: chain(ex, ew),
                    lambda: _chain(np)(x, w), t_chain, ("numba", 1.2), ref))  # fmt: skip
    one = ember.compile(lambda a: a + 1)
    a = ember.tensor([1.0, 2.0, 3.0, 4.0])
    one_rg = ember.compile(lambda a: a + 1)
    b = ember.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    # PyTorch's column: torch.compile of the same function (inductor; its first call
    # compiles for tens of seconds, so the quick run leaves it out)
    t_one = t_one_rg = None
    if torch is not None and not quick:
        ta, tb = torch.tensor([1.0, 2.0, 3.0, 4.0]), torch.tensor([1.0, 2.0, 3.0, 4.0],
                                                                  requires_grad=True)  # fmt: skip
        t_fn, t_fn_rg = torch.compile(lambda a: a + 1), torch.compile(lambda a: a + 1)
        t_one, t_one_rg = (lambda: t_fn(ta)), (lambda: t_fn_rg(tb))
    out.append(Case("compiled", "1 op compiled", lambda: one(a), None, t_one, ("us", 10.0)))
    out.append(Case("compiled", "1 op compiled rg", lambda: one_rg(b), None, t_one_rg,
                    ("us", 10.0)))  # fmt: skip
    return out


_COMPILE_SCRIPT = """
import time, sys
t0 = time.perf_counter()
sys.path.insert(0, {root!r})
from benchmarks.compiled import mlp_step
import ember
t1 = time.perf_counter()
eager = mlp_step(ember, (784, 64, 64, 10), 8, False)
eager(); eager()
t = time.perf_counter(); eager(); plain = time.perf_counter() - t
step = mlp_step(ember, (784, 64, 64, 10), 8, True)
t = time.perf_counter(); step(); first = time.perf_counter() - t
t = time.perf_counter(); step(); second = time.perf_counter() - t
print(first - plain, second, t1 - t0)
"""


def report(quick: bool) -> list[str]:
    """Compile time of the b8 step: cold (a new process, an empty kernel cache) and warm
    (another new process reading the disk cache)."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    script = _COMPILE_SCRIPT.format(root=root)
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "EMBER_CACHE_DIR": cache}
        runs = [
            [float(v) for v in subprocess.run([sys.executable, "-c", script], env=env,
                                              capture_output=True, text=True,
                                              check=True).stdout.split()]
            for _ in range(2)
        ]  # fmt: skip
    cold, warm = runs
    return [
        f"mlp 64 b8 compiled, cold: first step {cold[0]:.3f} s more than an eager step "
        f"(goal <= 1 s); second step {cold[1] * 1e3:.1f} ms",
        f"mlp 64 b8 compiled, disk cache in a new process: {warm[0]:.3f} s (goal <= 0.2 s); "
        f"second step {warm[1] * 1e3:.1f} ms",
    ]
