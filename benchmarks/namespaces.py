"""Benchmarks of the Python-level namespaces: distributions, ``testing.assert_close`` and
``autograd.functional``. Each is ember's composition of ops against PyTorch's, and against
the NumPy expression it computes where there is one.

Normal.log_prob misses its goal at 1M elements for a reason outside it: ember's results are
fresh arrays each op (NumPy elides its own temporaries), and glibc's malloc returns freed
4 MB blocks to the system and faults them back in. The same call takes about 8.6 ms instead
of 38 ms with ``MALLOC_TRIM_THRESHOLD_=1000000000 MALLOC_MMAP_THRESHOLD_=100000000``.
"""

from __future__ import annotations

import numpy as np

import ember
from benchmarks.run import Case, torch


def cases(quick: bool) -> list[Case]:
    n = 100_000 if quick else 1_000_000
    rng = np.random.default_rng(0)
    x, loc = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    scale = rng.uniform(0.5, 2, n).astype(np.float32)
    probs = rng.uniform(0.1, 1, (1000, 10)).astype(np.float32)
    const = np.float32(np.log(np.sqrt(2 * np.pi)))

    en = ember.distributions.Normal(ember.from_numpy(loc), ember.from_numpy(scale))
    ex = ember.from_numpy(x)
    ec = ember.distributions.Categorical(probs=ember.from_numpy(probs))
    ea, eb = ember.from_numpy(x), ember.from_numpy(x.copy())
    ej = ember.from_numpy(rng.standard_normal(16))

    def np_log_prob() -> np.ndarray:
        return -((x - loc) ** 2) / (2 * scale**2) - np.log(scale) - const

    def np_cat_sample() -> np.ndarray:
        cdf = np.cumsum(probs / probs.sum(-1, keepdims=True), -1)
        u = np.random.default_rng(1).random((100, 1000, 1), dtype=np.float32)
        return (cdf <= u).sum(-1)

    t = torch
    tt: dict[str, object] = {}
    if t is not None:
        tn = t.distributions.Normal(t.from_numpy(loc), t.from_numpy(scale))
        tc = t.distributions.Categorical(probs=t.from_numpy(probs))
        tx, ta, tb = t.from_numpy(x), t.from_numpy(x), t.from_numpy(x.copy())
        tj = t.from_numpy(rng.standard_normal(16))
        tt = {
            "log_prob": lambda: tn.log_prob(tx),
            "cat": lambda: tc.sample((100,)),
            "close": lambda: t.testing.assert_close(ta, tb),
            "jac": lambda: t.autograd.functional.jacobian(t.sin, tj),
        }

    return [
        Case("namespaces", "Normal.log_prob", lambda: en.log_prob(ex), np_log_prob,
             tt.get("log_prob"), ("numpy", 1.5)),  # type: ignore[arg-type]
        Case("namespaces", "Categorical x100", lambda: ec.sample((100,)), np_cat_sample,
             tt.get("cat"), ("numpy", 1.5)),  # type: ignore[arg-type]
        Case("namespaces", "assert_close", lambda: ember.testing.assert_close(ea, eb),
             lambda: np.testing.assert_allclose(x, x.copy(), rtol=1.3e-6, atol=1e-5),
             tt.get("close"), ("numpy", 2.0)),  # type: ignore[arg-type]
        Case("namespaces", "jacobian 16", lambda: ember.autograd.functional.jacobian(
             ember.sin, ej), None, tt.get("jac"), ("torch", 10.0)),  # type: ignore[arg-type]
    ]  # fmt: skip
