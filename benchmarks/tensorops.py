"""Large-array cases of issue 11's everyday ops, each against the NumPy call its kernel wraps
(goal: at most 1.1x NumPy): ``unique`` (``np.unique``), ``searchsorted``
(``np.searchsorted``), ``median`` (``np.median``), ``bincount`` (``np.bincount``) and
``cdist`` (for p = 2 the matrix-product formula PyTorch uses, in NumPy; for p = 1 NumPy's
broadcast difference). Run with ``python -m benchmarks --filter tensorops``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import ember
from benchmarks.run import Case, Thunk

try:
    import torch
except ImportError:  # the bench/test extras install it; without it only NumPy is compared
    torch = None


def _euclidean(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``sqrt(max(|a|² - 2 a·b + |b|², 0))`` with one product, as ``_euclidean_dist``."""
    n1 = (a * a).sum(-1, keepdims=True)
    n2 = (b * b).sum(-1, keepdims=True)
    left = np.concatenate([-2 * a, n1, np.ones_like(n1)], -1)
    right = np.concatenate([b, np.ones_like(n2), n2], -1)
    r = left @ right.T
    return np.sqrt(np.maximum(r, 0, out=r), out=r)


def _torch(fn: Any) -> Any:
    return fn if torch is not None else None


def cases(quick: bool) -> list[Case]:
    """The tensorops group of ``python -m benchmarks``."""
    rng = np.random.default_rng(0)
    n = 10**5 if quick else 10**6
    tag = f"1e{len(str(n)) - 1}"
    goal = ("numpy", 1.1)
    out: list[Case] = []

    def add(name: str, ours: Thunk, numpy: Thunk, theirs: Thunk) -> None:
        """One case against NumPy, with PyTorch's column when it is installed."""
        out.append(Case("tensorops", name, ours, numpy, _torch(theirs), goal))

    ints = rng.integers(0, n // 10, n)
    ei = ember.from_numpy(ints)
    ti = torch.from_numpy(ints) if torch is not None else None
    add(
        f"unique {tag}", lambda: ember.unique(ei), lambda: np.unique(ints), lambda: torch.unique(ti)
    )
    add(
        f"unique inv,cnt {tag}",
        lambda: ember.unique(ei, return_inverse=True, return_counts=True),
        lambda: np.unique(ints, return_inverse=True, return_counts=True),
        lambda: torch.unique(ti, return_inverse=True, return_counts=True),
    )

    seq = np.sort(rng.standard_normal(n))
    probes = rng.standard_normal(n)
    es, ep = ember.from_numpy(seq), ember.from_numpy(probes)
    ts, tp = (torch.from_numpy(seq), torch.from_numpy(probes)) if torch is not None else (0, 0)
    add(
        f"searchsorted {tag}",
        lambda: ember.searchsorted(es, ep),
        lambda: np.searchsorted(seq, probes),
        lambda: torch.searchsorted(ts, tp),
    )

    x = rng.standard_normal(n, dtype=np.float32)
    ex = ember.from_numpy(x)
    tx = torch.from_numpy(x) if torch is not None else None
    add(f"median {tag}", lambda: ex.median(), lambda: np.median(x), lambda: tx.median())
    side = 300 if quick else 1000
    m = rng.standard_normal((side, side + 1), dtype=np.float32)
    em = ember.from_numpy(m)
    tm = torch.from_numpy(m) if torch is not None else None
    add(
        f"median(1) {side}x{side + 1}",
        lambda: em.median(1),
        lambda: np.median(m, axis=1),
        lambda: tm.median(1),
    )

    w = rng.random(n)
    ew = ember.from_numpy(w)
    tw = torch.from_numpy(w) if torch is not None else None
    add(
        f"bincount {tag}",
        lambda: ember.bincount(ei),
        lambda: np.bincount(ints),
        lambda: torch.bincount(ti),
    )
    add(
        f"bincount w {tag}",
        lambda: ember.bincount(ei, ew),
        lambda: np.bincount(ints, w),
        lambda: torch.bincount(ti, tw),
    )

    rows = 500 if quick else 2000
    a = rng.standard_normal((rows, 64), dtype=np.float32)
    b = rng.standard_normal((rows, 64), dtype=np.float32)
    ea, eb = ember.from_numpy(a), ember.from_numpy(b)
    ta, tb = (torch.from_numpy(a), torch.from_numpy(b)) if torch is not None else (0, 0)
    add(
        f"cdist p=2 {rows}x{rows}",
        lambda: ember.cdist(ea, eb),
        lambda: _euclidean(a, b),
        lambda: torch.cdist(ta, tb),
    )
    small = 200 if quick else 400
    a1, b1 = a[:small, :32].copy(), b[:small, :32].copy()
    ea1, eb1 = ember.from_numpy(a1), ember.from_numpy(b1)
    ta1, tb1 = (torch.from_numpy(a1), torch.from_numpy(b1)) if torch is not None else (0, 0)
    add(
        f"cdist p=1 {small}x{small}",
        lambda: ember.cdist(ea1, eb1, 1),
        lambda: np.abs(a1[:, None] - b1[None]).sum(-1),
        lambda: torch.cdist(ta1, tb1, 1),
    )
    # issue 18: pdist, histogram, stft (NumPy: the same arithmetic written directly)
    iu = np.triu_indices(small, 1)
    add(
        f"pdist p=2 {small}x32",
        lambda: ember.pdist(ea1),
        lambda: np.sqrt(((a1[iu[0]] - a1[iu[1]]) ** 2).sum(-1)),
        lambda: torch.pdist(ta1),
    )
    h = rng.standard_normal(n).astype(np.float32)
    eh = ember.from_numpy(h)
    th = torch.from_numpy(h) if torch is not None else None
    add(
        f"histogram 100 bins {tag}",
        lambda: ember.histogram(eh, 100),
        lambda: np.histogram(h, 100),
        lambda: torch.histogram(th, 100),
    )
    sig = rng.standard_normal(n // 10)
    esig, win = ember.from_numpy(sig), np.hanning(512)
    ewin = ember.from_numpy(win)
    tsig, twin = (torch.from_numpy(sig), torch.from_numpy(win)) if torch is not None else (0, 0)
    frames = np.lib.stride_tricks.sliding_window_view(np.pad(sig, 256, "reflect"), 512)[::128]
    add(
        f"stft n_fft=512 {n // 10}",
        lambda: ember.stft(esig, 512, 128, window=ewin, return_complex=True),
        lambda: np.fft.rfft(frames * win).T,
        lambda: torch.stft(tsig, 512, 128, window=twin, return_complex=True),
    )
    return out
