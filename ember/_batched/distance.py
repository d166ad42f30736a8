"""Batching rules of the distance kernels: ``_cdist_forward``/``_cdist_backward`` and
``_euclidean_dist`` take leading batch dimensions (broadcast), so the vmap batch is one
more of them; ``_pdist_forward``/``_pdist_backward`` take one matrix, so their rules
compute the pairs ``i < j`` themselves (NOTE [pdist] in ``ember/ops/native/distance.py``).

- ``_pdist_forward``: the rows' differences for every pair, then ``linalg_vector_norm``
  over the last dimension (its inf is a max that keeps NaN, as pdist's); ``p = 0`` sums
  ``min(ceil(|d|), 1)`` as the kernel does, so a NaN difference stays NaN.
- ``_pdist_backward``: each pair's term is ``_cdist_backward`` of the pair as a 1x1 problem
  (the same per-``p`` formulas), added to its first row and subtracted from its second
  (``index_add``).
"""

from __future__ import annotations

from typing import Any

from ember._batched.args import align, bind, call
from ember._batched.kernel import register_rule, slow_fallback
from ember._batched.tensor import Level, wrap
from ember._tensor import Tensor
from ember.ops.registry import OpOverload, ops

aten = ops.aten


def batch_dims_rule(op: OpOverload, level: Level, args: tuple[Any, ...], kw: dict[str, Any]) -> Any:
    """Every tensor at the largest logical rank, the batch in front (expanded where not
    batched, so the result has it too)."""
    values = bind(op, args, kw)
    tensors = [(n, x) for n, x in values.items() if isinstance(x, Tensor)]
    if any(x.dim() < 2 for _, x in tensors):
        return slow_fallback(op, 0, args, kw)  # PyTorch's errors, from the op per example
    rank = max(x.dim() for _, x in tensors)
    for name, x in tensors:
        values[name] = align(x, level, rank)
    return wrap(call(op, values), level.level)


for _op in (
    aten._cdist_forward.default,
    aten._cdist_backward.default,
    aten._euclidean_dist.default,
):
    register_rule(_op, batch_dims_rule)


def _pairs(n: int, like: Tensor) -> tuple[Tensor, Tensor]:
    """The rows ``i`` and ``j`` of every pair ``i < j``, in pdist's (row-major) order."""
    both = aten.triu_indices.default(n, n, 1, device=like.device)
    return both[0], both[1]


def pdist_forward_rule(
    op: OpOverload, level: Level, args: tuple[Any, ...], kw: dict[str, Any]
) -> Any:
    values = bind(op, args, kw)
    x, p = values["self"], values.get("p", 2.0)
    if x.dim() != 2 or x.shape[0] < 2 or x.dtype.is_complex or not x.dtype.is_floating_point:
        return slow_fallback(op, 0, args, kw)  # PyTorch's errors (or no pairs), per example
    xp = align(x, level, 2)  # [B, N, M]
    i, j = _pairs(x.shape[0], xp)
    diff = aten.sub.Tensor(aten.index_select.default(xp, 1, i), aten.index_select.default(xp, 1, j))
    if p == 0:  # the count of differing entries, as the kernel sums it (NaN stays NaN)
        ones = aten.clamp_max.default(aten.ceil.default(aten.abs.default(diff)), 1)
        return wrap(aten.sum.dim_IntList(ones, [-1]), level.level)
    return wrap(aten.linalg_vector_norm.default(diff, p, [-1]), level.level)


def pdist_backward_rule(
    op: OpOverload, level: Level, args: tuple[Any, ...], kw: dict[str, Any]
) -> Any:
    values = bind(op, args, kw)
    g, x, p, dist = values["grad"], values["self"], values["p"], values["pdist"]
    if x.dim() != 2 or x.shape[0] < 2 or not x.dtype.is_floating_point or g.dim() != 1:
        return slow_fallback(op, 0, args, kw)  # PyTorch's errors (or no pairs), per example
    size = level.size
    xp = align(x, level, 2)  # [B, N, M]
    i, j = _pairs(x.shape[0], xp)
    k = i.shape[0]
    first = aten.index_select.default(xp, 1, i).unsqueeze(2)  # [B, K, 1, M]
    second = aten.index_select.default(xp, 1, j).unsqueeze(2)
    gp = align(g, level, 1).reshape(size, k, 1, 1)
    dp = align(dist, level, 1).reshape(size, k, 1, 1)
    terms = aten._cdist_backward.default(gp, first, second, p, dp).squeeze(2)  # [B, K, M]
    out = aten.zeros_like.default(xp)
    out = aten.index_add.default(out, 1, i, terms)
    return wrap(aten.index_add.default(out, 1, j, terms, alpha=-1), level.level)


register_rule(aten._pdist_forward.default, pdist_forward_rule)
register_rule(aten._pdist_backward.default, pdist_backward_rule)
