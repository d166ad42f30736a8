"""CPU kernels of the view-undoing backward ops (``ember/ops/native/backward.py``)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ember.backends.cpu._util import Tensor, data, wrap
from ember.dispatch.keys import DispatchKey
from ember.library import impl
from ember.ops.registry import ops
from ember.ops.shapes import wrap_dim

aten = ops.aten
CPU = DispatchKey.CPU


def _zeros(grad: Tensor, sizes: Sequence[int]) -> np.ndarray:
    return np.zeros(tuple(int(s) for s in sizes), data(grad).dtype)


@impl(aten.select_backward.default, CPU)
def select_backward(
    grad_output: Tensor, input_sizes: Sequence[int], dim: int, index: int
) -> Tensor:
    out = _zeros(grad_output, input_sizes)
    d = wrap_dim(dim, out.ndim, "select_backward")
    out[(slice(None),) * d + (index,)] = data(grad_output)
    return wrap(out)


@impl(aten.slice_backward.default, CPU)
def slice_backward(
    grad_output: Tensor, input_sizes: Sequence[int], dim: int, start: int, end: int, step: int
) -> Tensor:
    out = _zeros(grad_output, input_sizes)
    d = wrap_dim(dim, out.ndim, "slice_backward")
    out[(slice(None),) * d + (slice(start, end, step),)] = data(grad_output)
    return wrap(out)


@impl(aten.diagonal_backward.default, CPU)
def diagonal_backward(
    grad_output: Tensor, input_sizes: Sequence[int], offset: int, dim1: int, dim2: int
) -> Tensor:
    out = _zeros(grad_output, input_sizes)
    d1 = wrap_dim(dim1, out.ndim, "diagonal_backward")
    d2 = wrap_dim(dim2, out.ndim, "diagonal_backward")
    view = np.moveaxis(out, (d1, d2), (-2, -1))
    g = data(grad_output)
    n = g.shape[-1]
    rows = np.arange(n) + max(-offset, 0)
    cols = np.arange(n) + max(offset, 0)
    view[..., rows, cols] = g
    return wrap(out)
