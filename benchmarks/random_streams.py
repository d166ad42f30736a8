"""Random draws on PyTorch's CPU streams: ember (the same values as PyTorch, bit for bit)
against PyTorch and NumPy's default ``Generator`` (PCG64, its own values), one thread each;
goal: at most 2x PyTorch. Sizes 1e3 (per-call overhead), 1e6 and 1e7 (the kernels).
"""

from __future__ import annotations

from typing import Any

import numpy as np

import ember
from benchmarks.run import Case, Thunk

try:
    import torch
except ImportError:
    torch = None

_G = np.random.default_rng(0)


def _t(make: Any) -> Thunk | None:
    return make() if torch is not None else None


def _sizes(quick: bool) -> list[tuple[str, int]]:
    return [("1e3", 10**3), ("1e6", 10**6)] + ([] if quick else [("1e7", 10**7)])


def cases(quick: bool) -> list[Case]:
    """rand/randn (float32 and float64), randint, bernoulli_, dropout, randperm, poisson."""
    goal = ("torch", 2.0)
    out: list[Case] = []
    e32, e64 = ember.float32, ember.float64
    for tag, n in _sizes(quick):
        out += [
            Case("random", f"rand {tag}", lambda n=n: ember.rand(n),
                 lambda n=n: _G.random(n, np.float32), _t(lambda n=n: lambda: torch.rand(n)),
                 goal),
            Case("random", f"randn {tag}", lambda n=n: ember.randn(n),
                 lambda n=n: _G.standard_normal(n, np.float32),
                 _t(lambda n=n: lambda: torch.randn(n)), goal),
            Case("random", f"rand f64 {tag}", lambda n=n: ember.rand(n, dtype=e64),
                 lambda n=n: _G.random(n),
                 _t(lambda n=n: lambda: torch.rand(n, dtype=torch.float64)), goal),
            Case("random", f"randn f64 {tag}", lambda n=n: ember.randn(n, dtype=e64),
                 lambda n=n: _G.standard_normal(n),
                 _t(lambda n=n: lambda: torch.randn(n, dtype=torch.float64)), goal),
        ]  # fmt: skip
    n = 10**6
    ex = ember.ones(n, dtype=e32)
    tx = torch.ones(n) if torch is not None else None
    nx = np.ones(n, np.float32)
    out += [
        Case("random", "randint 1e6", lambda: ember.randint(0, 1000, (n,)),
             lambda: _G.integers(0, 1000, n), _t(lambda: lambda: torch.randint(0, 1000, (n,))),
             goal),
        Case("random", "bernoulli_ 1e6", lambda: ember.empty(n).bernoulli_(0.3),
             lambda: (_G.random(n) < 0.3).astype(np.float32),
             _t(lambda: lambda: torch.empty(n).bernoulli_(0.3)), goal),
        Case("random", "dropout 1e6", lambda: ember.nn.functional.dropout(ex, 0.3),
             lambda: nx * ((_G.random(n) >= 0.3) / np.float32(0.7)).astype(np.float32),
             _t(lambda: lambda: torch.nn.functional.dropout(tx, 0.3)), goal),
        Case("random", "randperm 1e6", lambda: ember.randperm(n),
             lambda: _G.permutation(n), _t(lambda: lambda: torch.randperm(n)), goal),
    ]  # fmt: skip
    m = 10**5  # poisson: rates 0..30 (both of PyTorch's algorithms)
    er = ember.linspace(0, 30, m, dtype=e64)
    tr = torch.linspace(0, 30, m, dtype=torch.float64) if torch is not None else None
    nr = np.linspace(0, 30, m)
    out.append(Case("random", "poisson 1e5", lambda: ember.poisson(er), lambda: _G.poisson(nr),
                    _t(lambda: lambda: torch.poisson(tr)), goal))  # fmt: skip
    return out
