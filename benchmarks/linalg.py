"""Large cases of ``ember.linalg``, ``ember.fft`` and ``ember.special`` against the NumPy or
SciPy call each kernel wraps (goal: at most 1.1x), PyTorch beside them. Registered in
``benchmarks/run.py``; run alone with ``python -m benchmarks --filter linalg``."""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.linalg as sla
import scipy.special as sp

import ember

try:
    import torch
except ImportError:  # the bench extra installs it; without it only NumPy is compared
    torch = None


def cases(quick: bool) -> list[Any]:
    from benchmarks.run import Case

    rng = np.random.default_rng(0)
    goal = ("numpy", 1.1)
    m = 256 if quick else 512
    k = 128 if quick else 256
    n_fft = 2**17 if quick else 2**20
    n_special = 10**5 if quick else 10**6

    a = rng.standard_normal((m, m)) / np.sqrt(m) + np.eye(m)  # (a determinant in range)
    b = rng.standard_normal((m, 4))
    s = rng.standard_normal((k, k))
    spd = s @ s.T + k * np.eye(k)
    x = rng.standard_normal(n_fft).astype(np.float32)
    u = rng.uniform(-0.99, 0.99, n_special).astype(np.float32)
    ea, eb, es, espd = (ember.from_numpy(v) for v in (a, b, s, spd))
    ex, eu = ember.from_numpy(x), ember.from_numpy(u)
    t = torch
    if t is not None:
        ta, tb, ts, tspd = (t.from_numpy(v) for v in (a, b, s, spd))
        tx, tu = t.from_numpy(x), t.from_numpy(u)

    def case(name: str, e: Any, n: Any, tt: Any) -> Case:
        return Case("linalg", name, e, n, tt() if t is not None else None, goal)

    return [
        case(f"inv {m}", lambda: ember.linalg.inv(ea), lambda: np.linalg.inv(a),
             lambda: lambda: t.linalg.inv(ta)),
        case(f"solve {m}", lambda: ember.linalg.solve(ea, eb),
             lambda: sla.lu_solve(sla.lu_factor(a, check_finite=False), b, check_finite=False),
             lambda: lambda: t.linalg.solve(ta, tb)),
        case(f"det {m}", lambda: ember.linalg.det(ea), lambda: np.linalg.det(a),
             lambda: lambda: t.linalg.det(ta)),
        case(f"cholesky {k}", lambda: ember.linalg.cholesky(espd),
             lambda: np.linalg.cholesky(spd), lambda: lambda: t.linalg.cholesky(tspd)),
        case(f"svd {k}", lambda: ember.linalg.svd(es), lambda: np.linalg.svd(s),
             lambda: lambda: t.linalg.svd(ts)),
        case(f"eigh {k}", lambda: ember.linalg.eigh(espd), lambda: np.linalg.eigh(spd),
             lambda: lambda: t.linalg.eigh(tspd)),
        case(f"qr {k}", lambda: ember.linalg.qr(es), lambda: np.linalg.qr(s),
             lambda: lambda: t.linalg.qr(ts)),
        case(f"fft 2^{n_fft.bit_length() - 1}", lambda: ember.fft.fft(ex),
             lambda: np.fft.fft(x), lambda: lambda: t.fft.fft(tx)),
        case(f"rfft 2^{n_fft.bit_length() - 1}", lambda: ember.fft.rfft(ex),
             lambda: np.fft.rfft(x), lambda: lambda: t.fft.rfft(tx)),
        case(f"erfinv 1e{len(str(n_special)) - 1}", lambda: ember.erfinv(eu),
             lambda: sp.erfinv(u), lambda: lambda: t.erfinv(tu)),
    ]  # fmt: skip
