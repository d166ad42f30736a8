"""Batching rules of ops that act on their trailing dimensions (``tril``, ``pixel_shuffle``,
``constant_pad_nd``...), of indexing (``index``, ``embedding``),
and of in-place ops whose functional op has a rule.

An op that acts on the trailing dimensions of its input, whatever leads them, runs on the
physical tensor as it is: the batch dimension is one more leading dimension. An in-place
op whose functional op has a rule runs that and copies the result into ``self``, which must
be batched when anything else is (PyTorch's in-place error), and may not change dtype
category (PyTorch's cast error).
"""

from __future__ import annotations

from typing import Any

from ember._batched.args import align, bind, call
from ember._batched.kernel import RULES, inplace_error, register_rule, slow_fallback, unwrap
from ember._batched.tensor import Level, wrap
from ember._tensor import Tensor
from ember.dispatch.keys import DispatchKey
from ember.dtypes import bool_, can_cast, uint8
from ember.ops.native._define import FUNCTIONAL_OF
from ember.ops.registry import OpOverload, all_overloads, ops

aten = ops.aten


def trailing_rule(op: OpOverload, level: Level, args: tuple[Any, ...], kw: dict[str, Any]) -> Any:
    values = bind(op, args, kw)
    first = op._schema.arguments[0].name
    if any(isinstance(x, Tensor) and unwrap(x, level)[1] for n, x in values.items() if n != first):
        return slow_fallback(op, 0, args, kw)
    values[first] = unwrap(values[first], level)[0]
    out = call(op, values)
    if isinstance(out, tuple):  # (a named tuple stays one: linalg_qr's Q and R)
        made = [wrap(o, level.level) for o in out]
        return type(out)(*made) if type(out) is not tuple else tuple(made)
    return wrap(out, level.level)


for _op in (
    aten.tril.default, aten.triu.default, aten.log_sigmoid.default,
    aten.log_sigmoid_forward.default, aten.pixel_shuffle.default, aten.pixel_unshuffle.default,
    aten.lift_fresh_copy.default, aten.zero.default, aten.fill.Scalar,
    aten.constant_pad_nd.default,
    # matrix functions take any leading batch dimensions
    aten._linalg_det.default, aten._linalg_eigh.default, aten._linalg_slogdet.default,
    aten._linalg_svd.default, aten.linalg_cholesky_ex.default, aten.linalg_inv.default,
    aten.linalg_inv_ex.default, aten.linalg_matrix_exp.default, aten.linalg_pinv.default,
    aten.linalg_pinv.atol_rtol_float, aten.linalg_qr.default, aten.linalg_lu.default,
    aten.linalg_lu_factor.default, aten.linalg_lu_factor_ex.default,
    aten.linalg_ldl_factor_ex.default, aten.linalg_ldl_factor.default,
):  # fmt: skip
    register_rule(_op, trailing_rule)


def channel_shuffle_rule(
    op: OpOverload, level: Level, args: tuple[Any, ...], kw: dict[str, Any]
) -> Any:
    """The batch folded into dim 0: channels shuffle per example either way."""
    values = bind(op, args, kw)
    x = values["self"]
    if x.dim() <= 2:  # PyTorch's error, from the op itself
        return slow_fallback(op, 0, args, kw)
    v = align(x, level, x.dim())  # the batch dim first
    flat = aten.channel_shuffle.default(v.flatten(0, 1), values["groups"])
    return wrap(flat.unflatten(0, tuple(v.shape[:2])), level.level)


register_rule(aten.channel_shuffle.default, channel_shuffle_rule)


def trace_rule(op: OpOverload, level: Level, args: tuple[Any, ...], kw: dict[str, Any]) -> Any:
    v, _ = unwrap(args[0], level)
    if args[0].dim() != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {args[0].dim()}")
    return wrap(aten.diagonal.default(v, 0, 1, 2).sum(-1), level.level)


def repeat_rule(op: OpOverload, level: Level, args: tuple[Any, ...], kw: dict[str, Any]) -> Any:
    values = bind(op, args, kw)
    repeats = list(values["repeats"])
    x = values["self"]
    if len(repeats) < x.dim():
        return slow_fallback(op, 0, args, kw)  # PyTorch's error, from the op itself
    return wrap(aten.repeat.default(align(x, level, len(repeats)), [1, *repeats]), level.level)


def roll_rule(op: OpOverload, level: Level, args: tuple[Any, ...], kw: dict[str, Any]) -> Any:
    values = bind(op, args, kw)
    x = values["self"]
    v, _ = unwrap(x, level)
    dims = values.get("dims", [])
    dims = [dims] if isinstance(dims, int) else list(dims)
    shifts = values["shifts"]
    if not dims:  # the flattened tensor rolls
        flat = v.reshape(level.size, -1)
        return wrap(aten.roll.default(flat, shifts, [1]).view(v.shape), level.level)
    n = max(x.dim(), 1)
    return wrap(aten.roll.default(v, shifts, [(d % n) + 1 for d in dims]), level.level)


def masked_fill_scalar_rule(
    op: OpOverload, level: Level, args: tuple[Any, ...], kw: dict[str, Any]
) -> Any:
    values = bind(op, args, kw)
    self_x, mask = values["self"], values["mask"]
    rank = max(self_x.dim(), mask.dim())
    values["self"] = align(self_x, level, rank)
    values["mask"] = align(mask, level, rank) if unwrap(mask, level)[1] else mask
    return wrap(call(op, values), level.level)


register_rule(aten.trace.default, trace_rule)
register_rule(aten.repeat.default, repeat_rule)
register_rule(aten.roll.default, roll_rule)
register_rule(aten.masked_fill.Scalar, masked_fill_scalar_rule)


def _batched(x: Any, level: Level) -> bool:
    return isinstance(x, Tensor) and unwrap(x, level)[1]


# ------------------------------------------------------------------ indexing


def index_rule(op: OpOverload, level: Level, args: tuple[Any, ...], kw: dict[str, Any]) -> Any:
    """``self[indices]`` for integer index tensors: unbatched indices index the physical
    tensor after its batch dimension; batched ones (leading, adjacent) pair with an
    ``arange`` over the batch."""
    values = bind(op, args, kw)
    x, indices = values["self"], list(values["indices"])
    given = [i for i, t in enumerate(indices) if t is not None]
    if not given or any(t.dtype in (bool_, uint8) for t in _present(indices)):
        return slow_fallback(op, 0, args, kw)
    adjacent = given == list(range(given[0], given[-1] + 1)) if given else True
    batched_idx = [_batched(t, level) for t in _present(indices)]
    xp = align(x, level, x.dim())
    if not any(batched_idx):
        out = aten.index.Tensor(xp, [None, *indices])
        if not adjacent:  # the indexed dimensions come first, the batch's after them
            rank = max(t.dim() for t in _present(indices))
            out = out.movedim(rank, 0)
        return wrap(out, level.level)
    if not (adjacent and given and given[0] == 0):
        return slow_fallback(op, 0, args, kw)
    rank = max(t.dim() for t in _present(indices))
    phys = [align(t, level, rank) if t is not None else None for t in indices]
    batch = aten.arange.default(level.size, device=xp.device).view(level.size, *([1] * rank))
    return wrap(aten.index.Tensor(xp, [batch, *phys]), level.level)


def _present(indices: list[Any]) -> list[Tensor]:
    return [t for t in indices if t is not None]


def embedding_rule(op: OpOverload, level: Level, args: tuple[Any, ...], kw: dict[str, Any]) -> Any:
    """Unbatched weights: the op on the physical indices. Batched ones (ensembles): each
    example's rows gathered from its own table (``gather`` refuses an index out of range,
    as the op does)."""
    values = bind(op, args, kw)
    w, indices = values["weight"], values["indices"]
    if not _batched(w, level):
        values["indices"] = unwrap(indices, level)[0]
        return wrap(call(op, values), level.level)
    if w.dim() != 2:
        return slow_fallback(op, 0, args, kw)  # PyTorch's error, from the op
    wp = unwrap(w, level)[0]  # [B, V, D]
    ip = align(indices, level, indices.dim())  # [B, ...]
    size, dim = level.size, wp.shape[2]
    flat = ip.reshape(size, -1)
    rows = aten.gather.default(wp, 1, flat.unsqueeze(-1).expand(size, flat.shape[1], dim))
    return wrap(rows.view(size, *indices.shape, dim), level.level)


def embedding_backward_rule(
    op: OpOverload, level: Level, args: tuple[Any, ...], kw: dict[str, Any]
) -> Any:
    """Each example's weight gradient: its rows of ``grad_output`` summed into a table of its
    own (``index_put`` with ``accumulate`` and an ``arange`` over the batch), the padding
    row's left at zero."""
    values = bind(op, args, kw)
    g, indices = values["grad_output"], values["indices"]
    if values.get("scale_grad_by_freq", False):
        return slow_fallback(op, 0, args, kw)
    size, n = level.size, values["num_weights"]
    gp = align(g, level, g.dim())  # [B, ..., D]
    ip = align(indices, level, indices.dim()).reshape(size, -1)  # [B, k]
    rows = gp.reshape(size, ip.shape[1], gp.shape[-1])  # [B, k, D]
    pad = values.get("padding_idx", -1)
    if pad is not None and pad >= 0:
        rows = rows * aten.ne.Scalar(ip, pad).unsqueeze(-1).to(rows.dtype)
    out = rows.new_zeros((size, n, rows.shape[-1]))
    batch = aten.arange.default(size, device=rows.device).view(size, 1)
    return wrap(aten.index_put.default(out, [batch, ip], rows, True), level.level)


def index_put_rule(op: OpOverload, level: Level, args: tuple[Any, ...], kw: dict[str, Any]) -> Any:
    """``self[indices] = values`` for integer index tensors: an ``arange`` over the batch
    indexes the batch dimension, so the examples' writes (and sums, with ``accumulate``)
    stay apart whichever of ``self``, the indices and the values are batched."""
    values = bind(op, args, kw)
    x, indices, vals = values["self"], list(values["indices"]), values["values"]
    given = [i for i, t in enumerate(indices) if t is not None]
    present = _present(indices)
    inplace = op is aten.index_put_.default
    if inplace and not _batched(x, level):
        raise inplace_error(op)
    if (
        not given
        or len(given) > x.dim()
        or any(t.dtype in (bool_, uint8) for t in present)
        or (given[0] > 0 and given == list(range(given[0], given[-1] + 1)))
    ):
        # a mask (data-dependent shape), or indices that advanced indexing would move
        return slow_fallback(op, 0, args, kw)
    rank = max(t.dim() for t in present)
    xp = align(x, level, x.dim())
    phys = [align(t, level, rank) if t is not None else None for t in indices]
    batch = aten.arange.default(level.size, device=xp.device).view(level.size, *([1] * rank))
    # the indexed result: the index shape, then the dimensions not indexed
    rest = x.dim() - len(indices) + indices.count(None)
    vp = align(vals, level, rank + rest) if _batched(vals, level) else vals
    out = op(xp, [batch, *phys], vp, values.get("accumulate", False))
    return x if inplace else wrap(out, level.level)


def index_select_rule(
    op: OpOverload, level: Level, args: tuple[Any, ...], kw: dict[str, Any]
) -> Any:
    """An unbatched index selects after the batch dimension; a batched one is a ``gather``
    along the selected dimension, moved next to the batch one."""
    values = bind(op, args, kw)
    x, index = values["self"], values["index"]
    if x.dim() == 0 or index.dim() > 1:
        return slow_fallback(op, 0, args, kw)  # PyTorch's errors, from the op per example
    n = x.dim()
    d = values["dim"]
    if not -n <= d < n:
        raise IndexError(
            f"index_select: Dimension out of range (expected to be in range of [{-n}, "
            f"{n - 1}], but got {d})"
        )
    d = (d + n if d < 0 else d) + 1
    xp = align(x, level, n)
    if not _batched(index, level):
        return wrap(op(xp, d, index), level.level)
    ip = unwrap(index, level)[0].reshape(level.size, -1)  # a 0-dim index selects one
    moved = xp.movedim(d, 1)  # [B, size, ...]
    rest = tuple(moved.shape[2:])
    k = ip.shape[1]
    # gather refuses an index out of range (negative ones too), as index_select does
    full = ip.reshape(level.size, k, *([1] * len(rest))).expand(level.size, k, *rest)
    out = aten.gather.default(moved, 1, full)  # [B, k, ...]
    return wrap(out.movedim(1, d), level.level)


register_rule(aten.index_select.default, index_select_rule)
register_rule(aten.index_put.default, index_put_rule)
register_rule(aten.index_put_.default, index_put_rule)
register_rule(aten.index.Tensor, index_rule)
register_rule(aten.embedding.default, embedding_rule)
register_rule(aten.embedding_dense_backward.default, embedding_backward_rule)


# ------------------------------------------------------------------ in-place via functional


def inplace_rule(op: OpOverload, level: Level, args: tuple[Any, ...], kw: dict[str, Any]) -> Any:
    values = bind(op, args, kw)
    self_x = values["self"]
    if not _batched(self_x, level):
        raise inplace_error(op)
    out = call(FUNCTIONAL_OF[op], values)
    if not can_cast(out.dtype, self_x.dtype):
        raise RuntimeError(
            f"result type {out.dtype.name.capitalize()} can't be cast to the desired output "
            f"type {self_x.dtype.name.capitalize()}"
        )
    aten.copy_.default(self_x, out)
    return self_x


def _decomposes(functional: OpOverload, op: OpOverload) -> bool:
    """Whether ``functional`` decomposes under vmap (CompositeImplicitAutograd: its parts
    have rules) while the in-place ``op`` has a kernel of its own (``ldexp_``, ``renorm_``,
    ``conj_physical_``), which would take the fallback."""
    cia = DispatchKey.CompositeImplicitAutograd
    return functional.has_kernel_for_dispatch_key(cia) and not op.has_kernel_for_dispatch_key(cia)


def register_inplace() -> None:
    """An in-place rule for every in-place op whose functional op has a rule (or decomposes
    into ops that do) and that has none of its own (run once every other family is
    registered)."""
    for op in all_overloads():
        functional = FUNCTIONAL_OF.get(op)
        if (
            functional is None
            or op in RULES
            or not (functional in RULES or _decomposes(functional, op))
            or not op._schema.is_inplace
            or op.namespace != "aten"
        ):
            continue
        register_rule(op, inplace_rule, logical=True)
