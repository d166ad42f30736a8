"""Batching rules of the ops that read or write a tensor at index positions: ``index_add``,
``index_copy``, ``index_fill``, ``index_reduce``, ``take``, ``put``, ``embedding_renorm`` and
``masked_scatter`` (their in-place variants take ``more.inplace_rule``: the functional rule,
then a copy).

# NOTE [folded indices]
With the index batched, each example indexes its own slice. The rules fold the batch into
the indexed dimension (``[B, S]`` becomes ``B * S``; for ``take`` and ``put``, the whole
flattened tensor) and shift example ``b``'s indices by ``b * S``, so one call of the op
itself does every example's work with its own semantics (``alpha``, ``include_self``, the
dtype checks). An index out of its example's range must not land in a neighbour's slice:
such indices are first replaced by one past the folded size, so the op raises, and on any
error the call runs again through the slow fallback, which raises the example's own error
with PyTorch's message. Negative indices, where the op accepts them, are made positive
before the shift.

``masked_scatter`` with a per-example mask takes source element ``k`` of its example for the
``k``-th selected position: a ``cumsum`` of the mask gives each position its ``k``, one
``gather`` the elements (a ``k`` past the source's end makes it raise, as the op does).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ember._batched.args import align, bind, call, wrap_dim
from ember._batched.kernel import materialize, register_rule, slow_fallback, unwrap
from ember._batched.tensor import Level, wrap
from ember._tensor import Tensor
from ember.dtypes import FLOATING, bool_
from ember.ops.registry import OpOverload, ops

aten = ops.aten

#: op -> (its tensor parameter shaped like self along the other dims, negative indices ok)
_ALONG: dict[OpOverload, tuple[str | None, bool]] = {
    aten.index_add.default: ("source", False),
    aten.index_copy.default: ("source", False),
    aten.index_fill.int_Scalar: (None, True),
    aten.index_fill.int_Tensor: (None, True),
    aten.index_reduce.default: ("source", True),
}


def _batched(x: Any, level: Level) -> bool:
    return isinstance(x, Tensor) and unwrap(x, level)[1]


def _integral(t: Tensor) -> bool:
    return t.dtype is not bool_ and t.dtype.category < FLOATING


def _shifted(ip: Tensor, size: int, negatives: bool, level: Level) -> Tensor:
    """Physical indices ``[B, ...]`` into slices of ``size``, shifted into the folded
    ``B * size`` (NOTE [folded indices]); an index out of its example's range becomes
    ``B * size``, which the op refuses."""
    lo = -size if negatives else 0
    valid = aten.logical_and.default(aten.ge.Scalar(ip, lo), aten.lt.Scalar(ip, size))
    if negatives:
        ip = aten.where.self(aten.lt.Scalar(ip, 0), aten.add.Scalar(ip, size), ip)
    shape = (level.size,) + (1,) * (ip.dim() - 1)
    offset = aten.arange.default(level.size, dtype=ip.dtype, device=ip.device).view(shape)
    shifted = aten.add.Tensor(ip, aten.mul.Scalar(offset, size))
    out_of_range = aten.full_like.default(shifted, level.size * size)
    return aten.where.self(valid, shifted, out_of_range)


def _run(
    op: OpOverload,
    level: Level,
    args: tuple[Any, ...],
    kw: dict[str, Any],
    fn: Callable[[], Tensor],
) -> Any:
    """``fn()``'s physical result wrapped at ``level``; if it raises, the slow fallback's
    call, which raises the example's own error (NOTE [folded indices])."""
    try:
        out = fn()
    except (IndexError, RuntimeError, ValueError):
        return slow_fallback(op, 0, args, kw)
    return wrap(out, level.level)


# ------------------------------------------------------------------ along a dimension


def index_along_rule(
    op: OpOverload, level: Level, args: tuple[Any, ...], kw: dict[str, Any]
) -> Any:
    """``index_add``/``index_copy``/``index_fill``/``index_reduce``: an unbatched index runs
    the op after the batch dimension; a batched one folds the batch into ``dim`` (NOTE
    [folded indices]); a batched fill value is a ``where`` over a per-example mask."""
    src_name, negatives = _ALONG[op]
    values = bind(op, args, kw)
    x, index = values["self"], values["index"]
    src = values.get(src_name) if src_name else None
    value = values.get("value")
    if (
        index.dim() > 1
        or not _integral(index)
        or (src is not None and src.dim() != x.dim())
        or (isinstance(value, Tensor) and value.dim() != 0)
    ):
        return slow_fallback(op, 0, args, kw)  # PyTorch's errors, from the op per example
    zero = x.dim() == 0  # a 0-dim self is one slice of size 1 along dim 0
    n = max(x.dim(), 1)
    d = wrap_dim(values["dim"], n, op)
    size = level.size

    def physical(t: Any) -> Tensor:
        p = align(t, level, t.dim())
        return p.unsqueeze(1) if zero else p

    xp = physical(x)
    if _batched(value, level):
        return _fill_where(op, level, values, xp, d, zero, args, kw)

    def unzero(out: Tensor) -> Tensor:
        return out.squeeze(1) if zero else out

    if not _batched(index, level):
        values["self"], values["dim"] = xp, d + 1
        if src is not None and src_name:
            values[src_name] = physical(src)
        return _run(op, level, args, kw, lambda: unzero(call(op, values)))
    slice_size = xp.shape[d + 1]
    ip = unwrap(index, level)[0].reshape(size, -1)  # [B, K] (a 0-dim index is one)
    values["index"] = _shifted(ip, slice_size, negatives, level).reshape(-1)
    values["self"], values["dim"] = _fold(xp, d), d
    if src is not None and src_name:
        values[src_name] = _fold(physical(src), d)

    def run() -> Tensor:
        out = call(op, values)
        out = out.reshape(*out.shape[:d], size, slice_size, *out.shape[d + 1 :]).movedim(d, 0)
        return unzero(out)

    return _run(op, level, args, kw, run)


def _fold(p: Tensor, d: int) -> Tensor:
    """Physical ``[B, *shape]`` with the batch merged into logical dimension ``d``
    (``[*shape[:d], B * shape[d], *shape[d + 1:]]``)."""
    moved = p.movedim(0, d)
    return moved.reshape(
        *moved.shape[:d], moved.shape[d] * moved.shape[d + 1], *moved.shape[d + 2 :]
    )


def _fill_where(
    op: OpOverload,
    level: Level,
    values: dict[str, Any],
    xp: Tensor,
    d: int,
    zero: bool,
    args: tuple[Any, ...],
    kw: dict[str, Any],
) -> Any:
    """``index_fill`` with a per-example value: the positions the index selects (a bool
    ``index_fill`` of each example's slice), then a ``where`` of the value and ``self``."""
    x, index, value = values["self"], values["index"], values["value"]
    if value.dtype.category > x.dtype.category:
        return slow_fallback(op, 0, args, kw)  # (PyTorch's error for a value that needs a cast)
    size, slice_size = level.size, xp.shape[d + 1]
    if _batched(index, level):
        flat = aten.zeros.default([size * slice_size], dtype=bool_, device=xp.device)
        ip = unwrap(index, level)[0].reshape(size, -1)
        pos = _shifted(ip, slice_size, True, level).reshape(-1)
        where = lambda: aten.index_fill.int_Scalar(flat, 0, pos, True).view(size, slice_size)  # noqa: E731
    else:
        flat = aten.zeros.default([slice_size], dtype=bool_, device=xp.device)
        where = lambda: aten.index_fill.int_Scalar(flat, 0, index, True).unsqueeze(0)  # noqa: E731
    rank = xp.dim() - 1
    vp = unwrap(value, level)[0].to(xp.dtype).view(size, *([1] * rank))

    def run() -> Tensor:
        hit = where()
        mask = hit.view(hit.shape[0], *([1] * d), slice_size, *([1] * (rank - d - 1)))
        out = aten.where.self(mask, vp, xp)
        return out.squeeze(1) if zero else out

    return _run(op, level, args, kw, run)


for _op in _ALONG:
    register_rule(_op, index_along_rule)


# ------------------------------------------------------------------ flat positions


def take_rule(op: OpOverload, level: Level, args: tuple[Any, ...], kw: dict[str, Any]) -> Any:
    """An unbatched ``self``: the op on the physical index; a batched one folds the batch
    into the flattened tensor (NOTE [folded indices])."""
    x, index = args[0], args[1]
    if not _batched(x, level):
        return wrap(op(x, unwrap(index, level)[0]), level.level)
    if not _integral(index):
        return slow_fallback(op, 0, args, kw)
    xp = unwrap(x, level)[0].reshape(level.size, -1)
    ip = align(index, level, index.dim())
    pos = _shifted(ip, xp.shape[1], True, level)
    return _run(op, level, args, kw, lambda: op(xp.reshape(-1), pos))


def put_rule(op: OpOverload, level: Level, args: tuple[Any, ...], kw: dict[str, Any]) -> Any:
    """The batch folded into the flattened ``self`` (NOTE [folded indices]): one ``put`` of
    every example's values at its shifted positions."""
    values = bind(op, args, kw)
    x, index, source = values["self"], values["index"], values["source"]
    if not _integral(index) or source.numel() != index.numel():
        return slow_fallback(op, 0, args, kw)  # PyTorch's errors, from the op per example
    size = level.size
    xp = align(x, level, x.dim()).reshape(size, -1)
    ip = align(index, level, index.dim()).reshape(size, -1)
    values["index"] = _shifted(ip, xp.shape[1], True, level).reshape(-1)
    values["self"] = xp.reshape(-1)
    values["source"] = align(source, level, source.dim()).reshape(-1)
    return _run(op, level, args, kw, lambda: call(op, values).view(size, *x.shape))


register_rule(aten.take.default, take_rule)
register_rule(aten.put.default, put_rule)


def embedding_renorm_rule(
    op: OpOverload, level: Level, args: tuple[Any, ...], kw: dict[str, Any]
) -> Any:
    """The examples' weights ``[B, V, D]`` as one ``[B * V, D]`` weight, example ``b``'s
    indices shifted by ``b * V`` (NOTE [folded indices]): each example renormalises its own
    rows, each once however often its indices name it."""
    v = bind(op, args, kw)
    w, idx = v["self"], v["indices"]
    if w.dim() != 2 or not _integral(idx):
        return slow_fallback(op, 0, args, kw)  # PyTorch's errors, from the op per example
    size, (n, d) = level.size, tuple(w.shape)

    def fn() -> Tensor:
        wp = materialize(w, level).reshape(size * n, d)
        ip = _shifted(materialize(idx, level).reshape(size, -1), n, True, level)
        out = call(op, {**v, "self": wp, "indices": ip.reshape(-1)})
        return out.reshape(size, n, d)

    return _run(op, level, args, kw, fn)


register_rule(aten.embedding_renorm.default, embedding_renorm_rule)


# ------------------------------------------------------------------ masks


def masked_scatter_rule(
    op: OpOverload, level: Level, args: tuple[Any, ...], kw: dict[str, Any]
) -> Any:
    """Each selected position's rank among its example's selected positions (a ``cumsum``
    of the mask) picks its source element (NOTE [folded indices])."""
    values = bind(op, args, kw)
    x, mask, source = values["self"], values["mask"], values["source"]
    if mask.dtype is not bool_ or source.dtype is not x.dtype or source.numel() == 0:
        return slow_fallback(op, 0, args, kw)  # PyTorch's errors (or nothing to gather)
    shape = _broadcast(tuple(x.shape), tuple(mask.shape))
    if shape is None:
        return slow_fallback(op, 0, args, kw)
    size, rank = level.size, len(shape)
    xp = align(x, level, rank).expand(size, *shape)
    mp = align(mask, level, rank).expand(size, *shape).reshape(size, -1)
    sp = align(source, level, source.dim()).reshape(size, -1)
    k = aten.sub.Scalar(aten.cumsum.default(mp, 1), 1)  # int64: the position's rank
    k = aten.where.self(mp, k, aten.zeros_like.default(k))

    def run() -> Tensor:
        picked = aten.gather.default(sp, 1, k).view(size, *shape)
        return aten.where.self(mp.view(size, *shape), picked, xp)

    return _run(op, level, args, kw, run)


def _broadcast(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...] | None:
    """The broadcast shape of ``a`` and ``b``, or None if they do not broadcast."""
    n = max(len(a), len(b))
    a, b = (1,) * (n - len(a)) + a, (1,) * (n - len(b)) + b
    out = []
    for i, j in zip(a, b, strict=True):
        if i != j and 1 not in (i, j):
            return None
        out.append(j if i == 1 else i)
    return tuple(out)


register_rule(aten.masked_scatter.default, masked_scatter_rule)
