"""CPU kernels of the pairwise distances (``_cdist_forward``, ``_cdist_backward``): NumPy
over blocks of rows, so a block's ``(rows, r2, columns)`` differences stay a few megabytes
whatever the inputs' sizes (NOTE [cdist paths] in ``ember/ops/native/products.py``)."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import numpy as np

from ember.backends.cpu._util import Tensor, quiet_block, wrap
from ember.dispatch.keys import DispatchKey
from ember.library import impl
from ember.ops.native.products import cdist_plan, euclidean_shape, pdist_half_check
from ember.ops.registry import ops
from ember.ops.shapes import broadcast_shapes

aten = ops.aten
CPU = DispatchKey.CPU
_BLOCK = 1 << 21  # elements of one block's differences


def _batched(x: np.ndarray, batch: tuple[int, ...]) -> np.ndarray:
    """``x`` (..., r, c) broadcast over ``batch`` and flattened to (n, r, c)."""
    return np.broadcast_to(x, (*batch, *x.shape[-2:])).reshape(-1, *x.shape[-2:])


def _blocks(n: int, r1: int, r2: int, c: int) -> Iterator[slice]:
    step = max(1, _BLOCK // max(n * r2 * c, 1))
    for i in range(0, r1, step):
        yield slice(i, min(i + step, r1))


def euclidean(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``_euclidean_dist``'s arithmetic: one product of ``[-2a, |a|², 1]`` and ``[b, 1, |b|²]``."""
    n1 = (a * a).sum(-1, keepdims=True)
    n2 = (b * b).sum(-1, keepdims=True)
    left = np.concatenate([-2 * a, n1, np.ones_like(n1)], -1)
    right = np.concatenate([np.swapaxes(b, -1, -2), np.swapaxes(np.ones_like(n2), -1, -2),
                            np.swapaxes(n2, -1, -2)], -2)  # (.., c + 2, r2), row-major  # fmt: skip
    r = np.matmul(left, right)
    return np.sqrt(np.maximum(r, 0, out=r), out=r)


def _norm(diff: np.ndarray, p: float) -> np.ndarray:
    """The p-norm over the last dim of ``|a - b|`` (``diff``), as PyTorch's kernel sums it."""
    if p == 0:
        return np.minimum(np.ceil(diff), 1).sum(-1)
    if p == 1:
        return diff.sum(-1)
    if p == 2:
        return np.sqrt((diff * diff).sum(-1))
    if math.isinf(p):  # PyTorch's running max starts at 0 and skips NaN
        return np.fmax.reduce(diff, axis=-1, initial=0)
    return (diff**p).sum(-1) ** (1.0 / p)


@impl(aten._cdist_forward.default, CPU)
def cdist_forward(x1: Tensor, x2: Tensor, p: float, compute_mode: int | None) -> Tensor:
    shape, mm = cdist_plan(x1, x2, p, compute_mode)
    a, b = x1._edata, x2._edata
    batch, (r1, r2), c = shape[:-2], shape[-2:], a.shape[-1]
    if 0 in shape:
        return wrap(np.empty(shape, a.dtype))
    if c == 0:
        return wrap(np.zeros(shape, a.dtype))
    a, b = _batched(a, batch), _batched(b, batch)
    with quiet_block():
        if mm:
            return wrap(np.ascontiguousarray(euclidean(a, b).reshape(shape)))
        out = np.empty((a.shape[0], r1, r2), a.dtype)
        for rows in _blocks(a.shape[0], r1, r2, c):
            diff = np.abs(a[:, rows, None, :] - b[:, None, :, :])
            out[:, rows] = _norm(diff, p)
    return wrap(out.reshape(shape))


def _grad_terms(diff: np.ndarray, g: np.ndarray, dist: np.ndarray, p: float) -> np.ndarray:
    """Each pair's gradient with respect to its first row (PyTorch's formulas by p)."""
    if p == 1:
        return g * np.sign(diff)
    if p == 2:
        return np.where(dist == 0, 0, g * diff / np.where(dist == 0, 1, dist))
    if math.isinf(p):
        return g * np.sign(diff) * (1 - np.minimum(1, np.ceil(np.abs(np.abs(diff) - dist))))
    ad = np.abs(diff)
    safe = np.where(dist == 0, 1, dist)
    if p < 2:
        out = np.where(dist == 0, 0, np.sign(diff) * ad ** (p - 1) * g / safe ** (p - 1))
        if p < 1:
            out = np.where(diff == 0, 0, out)
        return out
    return np.where(dist == 0, 0, diff * ad ** (p - 2) * g / safe ** (p - 1))


@impl(aten._cdist_backward.default, CPU)
def cdist_backward(grad: Tensor, x1: Tensor, x2: Tensor, p: float, cdist: Tensor) -> Tensor:
    """The gradient of ``_cdist_forward`` with respect to ``x1``, in ``x1``'s shape broadcast
    over the batch (the engine sums it back)."""
    a, b = x1._edata, x2._edata
    batch = broadcast_shapes(a.shape[:-2], b.shape[:-2], op="_cdist_backward")
    r1, c, r2 = a.shape[-2], a.shape[-1], b.shape[-2]
    if 0 in (r1, r2, c, math.prod(batch)) or p == 0:
        return wrap(np.zeros((*batch, r1, c), a.dtype))
    a, b = _batched(a, batch), _batched(b, batch)
    g = _batched(grad._edata, batch)
    dist = _batched(cdist._edata, batch)
    out = np.empty(a.shape, a.dtype)
    with quiet_block():
        for rows in _blocks(a.shape[0], r1, r2, c):
            diff = a[:, rows, None, :] - b[:, None, :, :]
            terms = _grad_terms(diff, g[:, rows, :, None], dist[:, rows, :, None], p)
            out[:, rows] = terms.sum(2)
    return wrap(out.reshape(*batch, r1, c))


@impl(aten._euclidean_dist.default, CPU)
def euclidean_dist(x1: Tensor, x2: Tensor) -> Tensor:
    """Every pair of rows' distance by one matrix product (``euclidean``), in place."""
    shape, d = euclidean_shape(x1, x2)
    a, b = x1._edata.astype(d.np, copy=False), x2._edata.astype(d.np, copy=False)
    with quiet_block():
        out = euclidean(a, b) if a.size and b.size else np.zeros(shape, d.np)
    if out.shape == tuple(shape):  # fresh: broadcast_to would make it a read-only view
        return wrap(np.ascontiguousarray(out))
    return wrap(np.array(np.broadcast_to(out, shape), order="C"))


# --------------------------------------------------------------------------- pdist


_LOOPS: list[Any] = []  # pdist_kernel, imported on first use (NOTE [numba on first use])


def _loops(x: np.ndarray) -> Any:
    """The compiled pdist loops (NOTE [pdist loops]) when ``x``'s dtype has them, else None."""
    if x.dtype not in (np.float32, np.float64):
        return None
    if not _LOOPS:
        from ember.backends.cpu import pdist_kernel  # NOTE [numba on first use]

        _LOOPS.append(pdist_kernel)
    return _LOOPS[0]


def _kind(k: Any, p: float) -> int:
    """Which of the compiled loops computes the ``p``-norm."""
    kinds = {0.0: k.ZERO, 1.0: k.ONE, 2.0: k.TWO, math.inf: k.INF}
    return int(kinds.get(float(p), k.OTHER))


@impl(aten._pdist_forward.default, CPU)
def pdist_forward(self: Tensor, p: float = 2) -> Tensor:
    """The p-norm distance of each pair of rows ``i < j`` (NOTE [pdist]), by compiled loops
    for float32/float64 (NOTE [pdist loops])."""
    pdist_half_check(self)
    x = self._edata
    n = x.shape[0]
    k = _loops(x)
    if k is not None and n > 1:
        t = x.dtype.type
        with quiet_block():
            out = k.forward(np.ascontiguousarray(x), _kind(k, p), t(p), t(0), t(1))
        return wrap(out)
    i, j = np.triu_indices(n, 1)
    with quiet_block():
        diff = np.abs(x[i] - x[j])
        if math.isinf(p):  # unlike cdist's, pdist's running max propagates NaN
            return wrap(np.asarray(np.max(diff, -1, initial=0), x.dtype))
        return wrap(np.asarray(_norm(diff, p), x.dtype))


@impl(aten._pdist_backward.default, CPU)
def pdist_backward(grad: Tensor, self: Tensor, p: float, pdist: Tensor) -> Tensor:
    """The gradient of ``_pdist_forward``: each pair's term (PyTorch's formulas by ``p``)
    added to its first row and subtracted from its second (NOTE [pdist loops])."""
    pdist_half_check(self)
    x = self._edata
    n = x.shape[0]
    out = np.zeros(x.shape, x.dtype)
    if n < 2 or x.shape[1] == 0 or p == 0:
        return wrap(out)
    g, dist = grad._edata, pdist._edata
    k = _loops(x)
    if k is not None and g.dtype == x.dtype and dist.dtype == x.dtype:
        t = x.dtype.type
        c = np.ascontiguousarray
        with quiet_block():
            out = k.backward(c(g), c(x), _kind(k, p), t(p), c(dist), t(0), t(1))
        return wrap(out)
    i, j = np.triu_indices(n, 1)
    with quiet_block():
        terms = _grad_terms(x[i] - x[j], g[:, None], dist[:, None], p)
        np.add.at(out, i, terms)
        np.subtract.at(out, j, terms)
    return wrap(out)
