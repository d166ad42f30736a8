"""Derivatives of the everyday tensor ops of issue 11 (joins, diagonals, rotations, indexing,
order statistics, distances, random fills), one line each, in the format of
``derivatives.py`` (``ember/autograd/function_table.py``).

Ops PyTorch composes of others (``diag``, ``quantile``, ``cdist``'s dispatch, ``diff``) need
no line: their parts are differentiated.
"""

from __future__ import annotations

from typing import Any

import ember
from ember.autograd.function_table import defvjp
from ember.ops.registry import ops

aten = ops.aten
E = ember


def _block_diag_grad(g: Any, tensors: Any) -> list[Any]:
    """Each input's block of the gradient, in the input's own shape."""
    out, r, c = [], 0, 0
    for t in tensors:
        h, w = (1, 1) if t.ndim == 0 else (1, t.shape[0]) if t.ndim == 1 else tuple(t.shape)
        out.append(g[r : r + h, c : c + w].reshape(t.shape))
        r, c = r + h, c + w
    return out


# ----------------------------------------------------------------------- copies
defvjp(aten.diag_embed.default, lambda g, self, offset=0, dim1=-2, dim2=-1: (
    g.diagonal(offset, dim1, dim2),))  # fmt: skip
defvjp(aten.block_diag.default, lambda g, tensors: (_block_diag_grad(g, tensors),))
defvjp(aten.rot90.default, lambda g, self, k=1, dims=(0, 1): (g.rot90(-k, dims),))
