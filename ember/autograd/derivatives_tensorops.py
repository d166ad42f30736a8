"""Derivatives of the everyday tensor ops of issue 11 (joins, diagonals, rotations, indexing,
order statistics, distances, random fills), one line each, in the format of
``derivatives.py`` (``ember/autograd/function_table.py``).

Ops PyTorch composes of others (``diag``, ``quantile``, ``cdist``'s dispatch, ``diff``) need
no line: their parts are differentiated.
"""

from __future__ import annotations

import math
from typing import Any

import ember
from ember.backends.shapes import broadcast_shapes
from ember.autograd.function_table import defvjp, nondifferentiable
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


# ----------------------------------------------------------------------- indexing
def _masked_scatter_source_grad(g: Any, mask: Any, source: Any) -> Any:
    """The gradient elements the mask selected, in order, padded with zeros to the source's
    size (the source elements past the mask's count were never read)."""
    picked = g.masked_select(mask)
    n = math.prod(source.shape)
    if picked.numel() < n:
        picked = E.cat([picked, picked.new_zeros(n - picked.numel())])
    return picked.reshape(source.shape)


def _index_fill_value_grad(g: Any, self: Any, dim: int, index: Any) -> Any:
    """The sum of the gradient at each filled position, counted once however often its index
    repeats (negative indices counted from the end), as PyTorch's formula."""
    size = self.shape[dim] if self.ndim else 1
    positions = index.reshape(-1).remainder(size) if size else index.reshape(-1)
    unique = aten._unique2.default(positions)[0]
    return (g.index_select(dim, unique) if g.ndim else g).sum()


def _alpha(x: Any, alpha: Any) -> Any:
    return x if alpha == 1 else x * alpha


defvjp(aten.take.default, lambda g, self, index: (
    g.new_zeros(self.shape).reshape(-1).index_put([index.reshape(-1)], g.reshape(-1), True)
    .reshape(self.shape), None))  # fmt: skip
defvjp(aten.masked_select.default, lambda g, self, mask: (
    g.new_zeros(broadcast_shapes(self.shape, mask.shape)).masked_scatter(mask, g), None))  # fmt: skip
defvjp(aten.index_add.default, lambda g, self, dim, index, source, *, alpha=1: (
    g, None, _alpha(g.index_select(dim, index), alpha).reshape(source.shape)))  # fmt: skip
defvjp(aten.index_copy.default, lambda g, self, dim, index, source: (
    g.index_fill(dim, index, 0), None, g.index_select(dim, index).reshape(source.shape)))  # fmt: skip
defvjp(aten.index_fill.int_Scalar, lambda g, self, dim, index, value: (
    g.index_fill(dim, index, 0), None))  # fmt: skip
defvjp(aten.index_fill.int_Tensor, lambda g, self, dim, index, value: (
    g.index_fill(dim, index, 0), None, _index_fill_value_grad(g, self, dim, index)))  # fmt: skip
defvjp(aten.masked_scatter.default, lambda g, self, mask, source: (
    g.masked_fill(mask, 0), None, _masked_scatter_source_grad(g, mask, source)))  # fmt: skip


# ----------------------------------------------------------------------- order statistics
def _evenly(g: Any, self: Any, result: Any) -> Any:
    """A whole-tensor selection's gradient, shared evenly by the elements equal to the result
    (NaN counting as equal to a NaN result), as PyTorch's ``evenly_distribute_backward``."""
    mask = (self == result) | (self.isnan() & result.isnan())
    return mask * (g / mask.sum())


def _at_indices(g: Any, self: Any, dim: int, indices: Any, keepdim: bool) -> Any:
    """A selection along ``dim``'s gradient: each output's gradient at the index it came from."""
    gv = g[0] if isinstance(g, tuple) else g
    if not self.ndim:
        return gv
    if not keepdim:
        gv, indices = gv.unsqueeze(dim), indices.unsqueeze(dim)
    return gv.new_zeros(self.shape).scatter(dim, indices, gv)


def _not_implemented(op: str) -> Any:
    """The backward of an op PyTorch does not differentiate but whose float outputs still
    require grad (``unique``, ``bincount`` with weights): raising, as PyTorch does, at
    backward rather than at the call."""

    def formula(g: Any, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(
            f"the derivative for '{op}' is not implemented (as in PyTorch); detach() the input "
            "before the call if no gradient should flow through it"
        )

    return formula


for _name in ("median", "nanmedian"):
    _packet = getattr(aten, _name)
    defvjp(_packet.default, lambda g, self, *, result: (_evenly(g, self, result),))
    defvjp(_packet.dim, lambda g, self, dim, keepdim=False, *, result: (
        _at_indices(g, self, dim, result[1], keepdim),))  # fmt: skip
defvjp(aten.mode.default, lambda g, self, dim=-1, keepdim=False, *, result: (
    _at_indices(g, self, dim, result[1], keepdim),))  # fmt: skip
defvjp(aten.kthvalue.default, lambda g, self, k, dim=-1, keepdim=False, *, result: (
    _at_indices(g, self, dim, result[1], keepdim),))  # fmt: skip

# ----------------------------------------------------------------------- not differentiated
defvjp(aten._unique2.default, _not_implemented("_unique2"))
defvjp(aten.unique_dim.default, _not_implemented("unique_dim"))
defvjp(aten.unique_consecutive.default, _not_implemented("unique_consecutive"))
defvjp(aten.bincount.default, _not_implemented("bincount"))
nondifferentiable(aten.histc.default)
