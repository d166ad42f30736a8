"""The spatial nn ops on realistic sizes: ember against PyTorch and against the NumPy work its
kernel does (the same NumPy calls on plain arrays, without dispatch, checks or autograd).

Forward cases time ``F.<op>(...)``; ``fwd+bwd`` cases time the forward and
``backward(gradient)`` of the output into the input and the weight. The goal is the issue's
for new ops on large arrays: at most 1.1x the NumPy work; the ratio to PyTorch is reported.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import ember
from ember.backends.cpu import nn as cpu_nn
from ember.backends.cpu import spatial as cpu_spatial

from .run import Case, Thunk, torch

_GOAL = ("numpy", 1.1)


def _conv_pair(
    lib: Any, x: np.ndarray, w: np.ndarray, b: np.ndarray, call: str, kwargs: dict[str, Any]
) -> tuple[Thunk, Thunk]:
    """(forward, forward+backward) thunks of ``F.<call>`` in ``lib``."""
    fn = getattr(lib.nn.functional, call)
    xs, ws, bs = (lib.from_numpy(a.copy()) for a in (x, w, b))
    xg, wg, bg = (lib.from_numpy(a.copy()).requires_grad_() for a in (x, w, b))
    grad: list[Any] = []

    def forward() -> Any:
        return fn(xs, ws, bs, **kwargs)

    def both() -> None:
        out = fn(xg, wg, bg, **kwargs)
        if not grad:
            grad.append(lib.ones_like(out))
        out.backward(grad[0])
        xg.grad = wg.grad = bg.grad = None

    return forward, both


def _np_conv(
    x: np.ndarray, w: np.ndarray, b: np.ndarray, s: list[int], p: list[int], transposed: bool
) -> tuple[Thunk, Thunk]:
    """The NumPy work of ember's convolution kernels: im2col/col2im and matmuls."""
    n = w.ndim - 2
    k, d = tuple(w.shape[2:]), [1] * n

    def forward() -> np.ndarray:
        if transposed:
            cols = cpu_nn._transposed(x, w, 1)
            out_sp = [(x.shape[2 + i] - 1) * s[i] - 2 * p[i] + k[i] for i in range(n)]
            out = cpu_nn._col2im(cols, (x.shape[0], w.shape[1], *out_sp), k, s, p, d, x.shape[2:])
            out = np.ascontiguousarray(out)
        else:
            cols = cpu_nn._columns(x, k, s, p, d, 1)
            out = np.matmul(w.reshape(1, w.shape[0], -1), cols)
            out_sp = [(x.shape[2 + i] + 2 * p[i] - k[i]) // s[i] + 1 for i in range(n)]
            out = out.reshape(x.shape[0], w.shape[0], *out_sp)
        out += b.reshape((-1,) + (1,) * n)
        return out

    def both() -> None:
        go = np.ones_like(forward())
        nb = go.shape[0]
        if transposed:
            gcols = cpu_nn._columns(go, k, s, p, d, 1, x.shape[2:])
            np.matmul(w.reshape(1, w.shape[0], -1), gcols)
            cpu_nn._weight_grad(x.reshape(nb, 1, x.shape[1], -1), gcols, 1)
        else:
            g3 = go.reshape(nb, 1, go.shape[1], -1)
            dcols = np.matmul(w.reshape(1, w.shape[0], -1).transpose(0, 2, 1), g3)
            dcols = dcols.reshape(nb, x.shape[1], *k, *go.shape[2:])
            np.ascontiguousarray(cpu_nn._col2im(dcols, x.shape, k, s, p, d, go.shape[2:]))
            cpu_nn._weight_grad(g3, cpu_nn._columns(x, k, s, p, d, 1), 1)
        go.sum(axis=(0, *range(2, go.ndim)))

    return forward, both


def _conv_cases(quick: bool) -> list[Case]:
    rng = np.random.default_rng(0)
    out = []
    specs = [  # name, x shape, w shape, stride, padding, transposed, F call, kwargs
        ("conv1d", (8, 32, 256) if quick else (16, 64, 1024),
         (64, 32, 5) if quick else (128, 64, 5), [1], [2], False, "conv1d", {"padding": 2}),
        ("conv3d", (2, 8, 8, 16, 16) if quick else (4, 16, 16, 32, 32),
         (16, 8, 3, 3, 3) if quick else (32, 16, 3, 3, 3), [1, 1, 1], [1, 1, 1], False, "conv3d",
         {"padding": 1}),
        ("convT2d", (8, 32, 16, 16) if quick else (16, 64, 32, 32),
         (32, 16, 4, 4) if quick else (64, 32, 4, 4), [2, 2], [1, 1], True, "conv_transpose2d",
         {"stride": 2, "padding": 1}),
    ]  # fmt: skip
    for name, xs, ws, s, p, transposed, call, kwargs in specs:
        x = rng.standard_normal(xs, dtype=np.float32)
        w = rng.standard_normal(ws, dtype=np.float32) * 0.1
        b = rng.standard_normal(ws[1] if transposed else ws[0], dtype=np.float32)
        e_fwd, e_both = _conv_pair(ember, x, w, b, call, kwargs)
        t_fwd, t_both = _conv_pair(torch, x, w, b, call, kwargs) if torch else (None, None)
        n_fwd, n_both = _np_conv(x, w, b, s, p, transposed)
        out += [
            Case("spatial", f"{name} fwd", e_fwd, n_fwd, t_fwd, _GOAL),
            Case("spatial", f"{name} fwd+bwd", e_both, n_both, t_both, _GOAL),
        ]
    return out


def cases(quick: bool) -> list[Case]:
    """The spatial group: convolutions forward and backward, adaptive pooling, bilinear
    interpolation, grid sampling."""
    rng = np.random.default_rng(1)
    out = _conv_cases(quick)
    shape = (8, 64, 28, 28) if quick else (32, 256, 28, 28)
    x = rng.standard_normal(shape, dtype=np.float32)
    ex, tx = ember.from_numpy(x), torch.from_numpy(x) if torch else None
    out.append(Case(
        "spatial", "adapt_avg 28->6", lambda: ember.nn.functional.adaptive_avg_pool2d(ex, 6),
        lambda: cpu_spatial._adaptive_avg(x, [6, 6]),
        (lambda: torch.nn.functional.adaptive_avg_pool2d(tx, 6)) if torch else None, _GOAL,
    ))  # fmt: skip
    shape = (4, 16, 32, 32) if quick else (16, 32, 64, 64)
    x = rng.standard_normal(shape, dtype=np.float32)
    ex, tx = ember.from_numpy(x), torch.from_numpy(x) if torch else None
    size = [2 * shape[2], 2 * shape[3]]
    out.append(Case(
        "spatial", "bilinear x2",
        lambda: ember.nn.functional.interpolate(ex, scale_factor=2, mode="bilinear"),
        lambda: cpu_spatial._upsample(x, size, "linear", False, (2.0, 2.0)),
        (lambda: torch.nn.functional.interpolate(tx, scale_factor=2, mode="bilinear"))
        if torch else None, _GOAL,
    ))  # fmt: skip
    grid = rng.uniform(-1.1, 1.1, (shape[0], shape[2], shape[3], 2)).astype(np.float32)
    eg, tg = ember.from_numpy(grid), torch.from_numpy(grid) if torch else None

    def np_grid_sample() -> np.ndarray:
        corners, _, _, _ = cpu_spatial._grid_corners(ex, eg, 0, 0, False)
        return cpu_spatial._gather_rows(x, corners)

    out.append(Case(
        "spatial", "grid_sample",
        lambda: ember.nn.functional.grid_sample(ex, eg, align_corners=False),
        np_grid_sample,
        (lambda: torch.nn.functional.grid_sample(tx, tg, align_corners=False)) if torch else None,
        _GOAL,
    ))  # fmt: skip
    return out
