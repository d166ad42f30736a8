"""Derivatives of the everyday tensor ops of issue 11 (joins, diagonals, rotations, indexing,
order statistics, distances, random fills), one line each, in the format of
``derivatives.py`` (``ember/autograd/function_table.py``).

Ops PyTorch composes of others (``diag``, ``quantile``, ``cdist``'s dispatch, ``diff``) need
no line: their parts are differentiated.
"""

from __future__ import annotations

import math
from typing import Any

from ember import functional as E  # NOTE [formulas on the public functions]
from ember._type_info import finfo
from ember.autograd.derivatives import _evenly as _evenly_along
from ember.autograd.derivatives import _pad_to, conj, unreduce
from ember.autograd.function_table import defvjp, nondifferentiable
from ember.dtypes import bool_
from ember.ops.registry import ops
from ember.ops.shapes import broadcast_shapes

aten = ops.aten


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
    size (the source elements past the mask's count were never read). Each position adds
    into its rank among the selected ones (the others into a slot past the end), a
    ``scatter_add`` rather than ``masked_select``, so no shape depends on the mask's values:
    under ``vmap(grad(...))`` each example's mask selects its own count."""
    n = math.prod(source.shape)
    selected = mask.expand(g.shape).reshape(-1)
    rank = selected.cumsum(0) - 1
    slot = E.where(selected, rank, E.full_like(rank, n))
    out = g.new_zeros(n + 1).scatter_add(0, slot, g.reshape(-1))
    return out[:n].reshape(source.shape)


def _index_fill_value_grad(g: Any, self: Any, dim: int, index: Any) -> Any:
    """The sum of the gradient at each filled position, counted once however often its index
    repeats (negative indices counted from the end), as PyTorch's formula: the positions as
    a mask (a bool ``index_fill``), so no shape depends on the index's values (``vmap``)."""
    if not g.ndim:
        return g.sum()
    size = self.shape[dim]
    hit = g.new_zeros(size, dtype=bool_).index_fill(0, index.reshape(-1), True)
    shape = [1] * g.ndim
    shape[dim] = size
    return E.where(hit.reshape(shape), g, E.zeros_like(g)).sum()


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


#: ops whose backward raises, as PyTorch's does (their outputs still require grad)
RAISES_AT_BACKWARD: set[Any] = set()
_UNNAMED = "torch::autograd::NotImplemented"  # PyTorch's node for these when it has no name


def not_differentiated(op: Any, name: str | None = None) -> None:
    """Register ``op``'s backward as raising, as PyTorch's does: its float outputs require
    grad (``unique`` of a tensor that does), and backward, not the call, raises."""

    def formula(g: Any, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(
            f"the derivative for '{op.name()}' is not implemented (as in PyTorch); detach() "
            "the input before the call if no gradient should flow through it"
        )

    RAISES_AT_BACKWARD.add(op)
    defvjp(op, formula, name=name)


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
not_differentiated(aten._unique2.default)
not_differentiated(aten.unique_dim.default)
not_differentiated(aten.unique_consecutive.default)
not_differentiated(aten.bincount.default, _UNNAMED)
for _op in (aten.logspace.Tensor_Tensor, aten.logspace.Tensor_Scalar, aten.logspace.Scalar_Tensor):
    not_differentiated(_op, _UNNAMED)
nondifferentiable(aten.histc.default)
not_differentiated(aten.histogram.bins_tensor, _UNNAMED)
not_differentiated(aten.histogram.bin_ct, _UNNAMED)
not_differentiated(aten._histogramdd_bin_edges.default, _UNNAMED)
not_differentiated(aten._histogramdd_from_bin_cts.default, _UNNAMED)
not_differentiated(aten._histogramdd_from_bin_tensors.default, _UNNAMED)


# ----------------------------------------------------------------------- products, distances
def _cdist_grads(g: Any, x1: Any, x2: Any, p: float, result: Any) -> tuple[Any, Any]:
    """``_cdist_forward``'s gradients: PyTorch's ``_cdist_backward`` for each side (the
    second with the pairs transposed)."""
    back = aten._cdist_backward.default
    gt, rt = g.mT.contiguous(), result.mT.contiguous()
    return back(g.contiguous(), x1, x2, p, result), back(gt, x2, x1, p, rt)


def _euclidean_grads(g: Any, x1: Any, x2: Any, result: Any) -> tuple[Any, Any]:
    """``_euclidean_dist``'s gradients (PyTorch's ``_euclidean_dist_backward``): each pair's
    gradient over its distance (0 where the distance is 0), pulled back through the rows."""
    ratio = (g / result).masked_fill(result == 0, 0)
    return (
        x1 * ratio.sum(-1, keepdim=True) - ratio.matmul(x2),
        x2 * ratio.sum(-2).unsqueeze(-1) - ratio.mT.matmul(x1),
    )


defvjp(aten.trace.default, lambda g, self: (
    E.eye(self.shape[0], self.shape[1], dtype=g.dtype, device=g.device) * g,))  # fmt: skip
defvjp(aten._cdist_forward.default, lambda g, x1, x2, p, compute_mode, *, result: (
    _cdist_grads(g, x1, x2, p, result)), name="CdistBackward0")  # fmt: skip
not_differentiated(aten._cdist_backward.default)
defvjp(aten._pdist_forward.default, lambda g, self, p=2, *, result: (
    aten._pdist_backward.default(g, self, p, result),), name="PdistBackward0")  # fmt: skip
not_differentiated(aten._pdist_backward.default)
# F.embedding(max_norm=) runs it under no_grad; PyTorch's node is EmbeddingRenormBackward0
not_differentiated(aten.embedding_renorm.default)
defvjp(aten._euclidean_dist.default, lambda g, x1, x2, *, result: (
    _euclidean_grads(g, x1, x2, result)))  # fmt: skip


# ----------------------------------------------------------------------- random draws
# NOTE [random gradients] in ember/ops/native/random.py: zeros, as PyTorch's formulas give


def _zero(g: Any, t: Any) -> Any:
    return g.new_zeros(t.shape)


# (the in-place forms with a functional one find its entry: uniform_ -> uniform)
for _op in (
    aten.uniform.default, aten.bernoulli.default,
    aten.random.default, aten.random.to, getattr(aten.random, "from"),
    aten.exponential.default, aten.geometric.default, aten.log_normal.default,
    aten.cauchy.default,
):  # fmt: skip
    defvjp(_op, lambda g, self, *args, **kwargs: (_zero(g, self),))
defvjp(aten.normal_.default, lambda g, self, mean=0.0, std=1.0, *, generator=None: (
    _zero(g, self),))  # fmt: skip
defvjp(aten.bernoulli_.float, lambda g, self, p=0.5, *, generator=None: (_zero(g, self),),
       name="BernoulliBackward2")  # fmt: skip
defvjp(aten.normal.Tensor_float, lambda g, mean, std=1.0, *, generator=None: (_zero(g, mean),),
       name="NormalBackward1")  # fmt: skip
defvjp(aten.normal.float_Tensor, lambda g, mean, std, *, generator=None: (_zero(g, std),),
       name="NormalBackward2")  # fmt: skip
defvjp(aten.normal.Tensor_Tensor, lambda g, mean, std, *, generator=None: (
    _zero(g, mean), _zero(g, std)), name="NormalBackward3")  # fmt: skip
defvjp(aten.bernoulli.Tensor, lambda g, self, p, *, generator=None: (
    _zero(g, self), _zero(g, p)), name="BernoulliBackward1")  # fmt: skip
not_differentiated(aten.bernoulli.p, _UNNAMED)
defvjp(aten.poisson.default, lambda g, self, generator=None: (_zero(g, self),))


# ----------------------------------------------------------------------- reductions and scans
def _nansum_grad(g: Any, self: Any, dim: Any = None, keepdim: bool = False) -> Any:
    """The sum's gradient at each element that is not NaN, 0 at the NaNs."""
    return unreduce(g, self.shape, dim, keepdim) * self.isnan().logical_not()


def _aminmax_grad(g: Any, self: Any, dim: Any, keepdim: bool, result: Any) -> Any:
    """Each result's gradient shared equally among the elements equal to it (amin's and
    amax's)."""
    out = None
    for gi, r in zip(g, result, strict=True):
        if gi is not None:
            part = _evenly_along(gi, self, r, dim, keepdim, False)[0]
            out = part if out is None else out + part
    return out


def _cum_extreme_grad(g: Any, self: Any, dim: int, indices: Any) -> Any:
    """Each gradient element added at the index its running extreme came from."""
    if self.ndim == 0:
        return g
    return E.zeros_like(self).scatter_add(dim, indices, g)


def _logcumsumexp_grad(g: Any, self: Any, dim: int, result: Any) -> Any:
    """``grad[j] = sum over i >= j of g[i] exp(x[j] - out[i])``, as reversed log-cum-sum-exps
    of the positive and the negative parts of ``g`` (no overflow for large ``x``)."""
    if self.ndim == 0:
        return g
    if self.is_complex():
        rev = (g * (-result).exp().conj()).flip(dim).cumsum(dim).flip(dim)
        return rev * self.exp().conj()

    def reverse_lcse(v: Any) -> Any:
        return v.flip(dim).logcumsumexp(dim).flip(dim)

    # log|g| where g has the sign, else the dtype's lowest finite number, not -inf: a run of
    # -inf would make the reversed logcumsumexp -inf and its own gradient exp(-inf + inf),
    # NaN in double backward (a random program through ``func.grad`` found it)
    lowest = finfo(g.dtype).min

    def log_part(mask: Any) -> Any:
        safe = E.where(mask, g.abs(), 1.0)
        return E.where(mask, safe.log(), lowest)

    pos = reverse_lcse(log_part(g > 0) - result)
    neg = reverse_lcse(log_part(g < 0) - result)
    return (self + pos).exp() - (self + neg).exp()


defvjp(aten.nansum.default, lambda g, self, dim=None, keepdim=False, *, dtype=None: (
    _nansum_grad(g, self, dim, keepdim),))  # fmt: skip
defvjp(aten.aminmax.default, lambda g, self, *, dim=None, keepdim=False, result: (
    _aminmax_grad(g, self, dim, keepdim, result),))  # fmt: skip
defvjp(aten.cummax.default, lambda g, self, dim, *, result: (
    _cum_extreme_grad(g[0], self, dim, result[1]),))  # fmt: skip
defvjp(aten.cummin.default, lambda g, self, dim, *, result: (
    _cum_extreme_grad(g[0], self, dim, result[1]),))  # fmt: skip
defvjp(aten.logcumsumexp.default, lambda g, self, dim, *, result: (
    _logcumsumexp_grad(g, self, dim, result),))  # fmt: skip
nondifferentiable(aten.count_nonzero.dim_IntList, aten.count_nonzero.default)


# ----------------------------------------------------------------------- add* products
def _scaled(x: Any, s: Any) -> Any:
    """``x * conj(s)``, skipping the product for 1 (NOTE [complex gradients])."""
    return x if s == 1 else x * conj(s)


def _mH(x: Any) -> Any:
    return x.transpose(-2, -1).conj() if x.is_complex() else x.transpose(-2, -1)


def _conj_as(v: Any, g: Any) -> Any:
    """``conj(v)`` in ``g``'s dtype (``addr`` promotes its operands)."""
    if v.dtype != g.dtype:
        v = v.to(g.dtype)
    return v.conj() if v.is_complex() else v


def _self_grad(g: Any, beta: Any) -> Any:
    return g * 0 if beta == 0 else _scaled(g, beta)


defvjp(aten.baddbmm.default, lambda g, self, batch1, batch2, *, beta=1, alpha=1, needs: (
    _self_grad(g, beta) if needs[0] else None,
    _scaled(g.bmm(_mH(batch2)), alpha) if needs[1] else None,
    _scaled(_mH(batch1).bmm(g), alpha) if needs[2] else None))  # fmt: skip
defvjp(aten.addbmm.default, lambda g, self, batch1, batch2, *, beta=1, alpha=1, needs: (
    _self_grad(g, beta) if needs[0] else None,
    _scaled(g.expand(batch1.shape[0], *g.shape).bmm(_mH(batch2)), alpha) if needs[1] else None,
    _scaled(_mH(batch1).bmm(g.expand(batch1.shape[0], *g.shape)), alpha) if needs[2] else None))  # fmt: skip
defvjp(aten.addmv.default, lambda g, self, mat, vec, *, beta=1, alpha=1, needs: (
    _self_grad(g, beta) if needs[0] else None,
    _scaled(g.outer(vec.conj() if vec.is_complex() else vec), alpha) if needs[1] else None,
    _scaled(_mH(mat).mv(g), alpha) if needs[2] else None))  # fmt: skip
defvjp(aten.addr.default, lambda g, self, vec1, vec2, *, beta=1, alpha=1, needs: (
    _self_grad(g, beta) if needs[0] else None,
    _scaled(g.mv(_conj_as(vec2, g)), alpha) if needs[1] else None,
    _scaled(g.t().mv(_conj_as(vec1, g)), alpha) if needs[2] else None))  # fmt: skip


# ----------------------------------------------------------------------- views
def _unfold_grad(g: Any, self: Any, dimension: int, size: int, step: int) -> Any:
    """Each window element's gradient added at the input element it views (windows overlap
    when ``step < size``)."""
    if self.ndim == 0:
        return g.sum().reshape(())
    d = dimension % self.ndim
    windows = g.shape[d]
    at = {"device": g.device}
    index = (
        E.arange(windows, **at).unsqueeze(1) * step + E.arange(size, **at).unsqueeze(0)
    ).reshape(-1)
    flat = g.movedim(-1, d + 1).reshape(*self.shape[:d], windows * size, *self.shape[d + 1 :])
    return E.zeros_like(self).index_add(d, index, flat)


defvjp(aten.unfold.default, lambda g, self, dimension, size, step: (
    _unfold_grad(g, self, dimension, size, step),))  # fmt: skip


# --------------------------------------------------------------------------- scatter reductions
# PyTorch's scatter_reduce_backward and index_reduce_backward (NOTE [scatter reductions] in
# ember/ops/native/scatter_reduce.py): ``put`` is index_put on the flattened tensor.


def _reduce_grads(
    g: Any,
    self: Any,
    src: Any,
    reduce: str,
    include_self: bool,
    result: Any,
    select: Any,
    scatter_add: Any,
    rerun: Any,
) -> tuple[Any, Any]:
    """(self's, src's) gradients of a scatter reduction; ``select(t)`` reads ``t`` at the
    positions each src value goes to, ``scatter_add(t, v)`` adds ``v`` there, ``rerun(a, b)``
    reduces ``b`` into ``a`` again."""
    if reduce == "sum":
        gs, gsrc = g, select(g)
    elif reduce == "prod":
        masked_self = self.masked_fill(self == 0, 1)
        gs = g * rerun(masked_self, src) / masked_self
        src_zero = src == 0
        zeros = scatter_add(E.zeros_like(self), src_zero.to(self.dtype))
        single = src_zero & (select(zeros) == 1)
        masked_src_result = rerun(self, src.masked_fill(single, 1))
        gsrc = E.where(
            single, select(g * masked_src_result), select(g * result) / src.masked_fill(src_zero, 1)
        )
    elif reduce == "mean":
        n = E.ones_like(g) if include_self else E.zeros_like(g)
        n = scatter_add(n, E.ones_like(src))
        n = n.masked_fill(n == 0, 1)
        gs, gsrc = g / n, select(g) / select(n)
    else:  # amax, amin: shared evenly among the values equal to the result
        value = select(result)
        self_is = (self == result).to(g.dtype)
        src_is = (src == value).to(g.dtype)
        share = g / scatter_add(self_is, src_is)
        gs, gsrc = self_is * share, src_is * select(share)
    return gs, gsrc


def _scatter_reduce_grad(
    g: Any,
    self: Any,
    dim: int,
    index: Any,
    src: Any,
    reduce: str,
    *,
    include_self: bool = True,
    result: Any,
) -> tuple[Any, None, Any]:
    reduce = {"max": "amax", "min": "amin"}.get(reduce, reduce)
    s = src[tuple(slice(0, n) for n in index.shape)] if src.shape != index.shape else src
    gs, gsrc = _reduce_grads(
        g, self, s, reduce, include_self, result,
        lambda t: t.gather(dim, index),
        lambda t, v: t.scatter_add(dim, index, v),
        lambda a, b: a.scatter_reduce(dim, index, b, reduce, include_self=include_self),
    )  # fmt: skip
    if not include_self:
        gs = gs.scatter(dim, index, 0)
    gsrc = _pad_to(gsrc, src.shape)
    return gs, None, gsrc


defvjp(aten.scatter_reduce.two, _scatter_reduce_grad)


def _index_reduce_grad(
    g: Any,
    self: Any,
    dim: int,
    index: Any,
    source: Any,
    reduce: str,
    *,
    include_self: bool = True,
    result: Any,
) -> tuple[Any, None, Any]:
    d = dim % max(self.ndim, 1)
    if self.ndim == 0:
        g1, self1, source1, result1 = (t.reshape(1) for t in (g, self, source, result))
    else:
        g1, self1, source1, result1 = g, self, source, result
    size = self1.shape[d]
    idx = index.reshape(-1).long()
    idx = E.where(idx < 0, idx + size, idx)
    gs, gsrc = _reduce_grads(
        g1, self1, source1, reduce, include_self, result1,
        lambda t: t.index_select(d, idx),
        lambda t, v: t.index_add(d, idx, v),
        lambda a, b: a.index_reduce(d, idx, b, reduce, include_self=include_self),
    )  # fmt: skip
    if not include_self:
        gs = gs.index_fill(d, idx, 0)
    return gs.reshape(self.shape), None, gsrc.reshape(source.shape)


defvjp(aten.index_reduce.default, _index_reduce_grad)
defvjp(aten.put.default, lambda g, self, index, source, accumulate=False: (
    g if accumulate else g.put(index, E.zeros_like(source), False), None,
    g.take(index).reshape(source.shape)))  # fmt: skip

# NOTE [scatter into a view] in ember/ops/native/copies_composite.py: src's gradient is the
# view of g, self's is g with zeros where src went
defvjp(aten.slice_scatter.default, lambda g, self, src, dim=0, start=None, end=None, step=1: (
    aten.slice_scatter.default(g, E.zeros_like(aten.slice.Tensor(g, dim, start, end, step)),
                               dim, start, end, step),
    aten.slice.Tensor(g, dim, start, end, step),
))  # fmt: skip
defvjp(aten.select_scatter.default, lambda g, self, src, dim, index: (
    aten.select_scatter.default(g, E.zeros_like(aten.select.int(g, dim, index)), dim, index),
    aten.select.int(g, dim, index),
))  # fmt: skip
defvjp(aten.diagonal_scatter.default, lambda g, self, src, offset=0, dim1=0, dim2=1: (
    aten.diagonal_scatter.default(
        g, E.zeros_like(aten.diagonal.default(g, offset, dim1, dim2)), offset, dim1, dim2),
    aten.diagonal.default(g, offset, dim1, dim2),
))  # fmt: skip


def _as_strided_scatter_grads(
    g: Any, self: Any, src: Any, size: Any, stride: Any, storage_offset: Any = None
) -> tuple[Any, Any]:
    """The sizes and strides address the storage of ``self``'s layout (NOTE [scatter into a
    view]), so the gradient is read in that layout too."""
    laid = aten.empty_strided.default(list(g.shape), list(self.stride()), dtype=g.dtype)
    aten.copy_.default(laid, g)
    zeros = laid.new_zeros(list(size))
    return (
        aten.as_strided_scatter.default(laid, zeros, size, stride, storage_offset),
        aten.as_strided.default(laid, size, stride, storage_offset).clone(),
    )


defvjp(aten.as_strided_scatter.default, _as_strided_scatter_grads)
