"""Batching rules of view and shape ops, copies and ``*_like`` factories.

A size argument gets the batch size in front (``view``, ``expand``, ``new_zeros``...); an
op on ``self`` alone that keeps its dimensions (``detach``, ``clone``, ``_to_copy``,
``zeros_like``) runs on the physical tensor unchanged. A ``*_like`` factory's result is
batched like its argument. ``copy_``/``fill_`` write into ``self``'s physical tensor, which
must be batched if the value written is.
"""

from __future__ import annotations

from typing import Any

from ember._batched.args import align, bind, call
from ember._batched.kernel import batch_rule, inplace_error, register_rule, slow_fallback, unwrap
from ember._batched.tensor import _ITEM_ERROR, Level, wrap
from ember._tensor import Tensor
from ember.ops.native.inplace_views import VIEW_OF, view_args
from ember.ops.registry import OpOverload, ops

aten = ops.aten


def same_shape_rule(op: OpOverload, level: Level, args: tuple[Any, ...], kw: dict[str, Any]) -> Any:
    v, _ = unwrap(args[0], level)
    return wrap(op(v, *args[1:], **kw), level.level)


for _op in (
    aten.detach.default, aten.alias.default, aten.lift_fresh.default, aten.clone.default,
    aten._to_copy.default, aten.zeros_like.default, aten.ones_like.default,
    aten.empty_like.default, aten.full_like.default, aten.view.dtype, aten.view_as_real.default,
):  # fmt: skip
    register_rule(_op, same_shape_rule)
if hasattr(aten, "view_as_complex"):  # (defined by a later family of the catalogue)
    register_rule(aten.view_as_complex.default, same_shape_rule)


@batch_rule(aten.view.default, aten._unsafe_view.default, aten.reshape.default)
def view_rule(op: OpOverload, level: Level, args: tuple[Any, ...], kw: dict[str, Any]) -> Any:
    values = bind(op, args, kw)
    v, _ = unwrap(values["self"], level)
    size = [level.size, *values.pop("size" if "size" in values else "shape")]
    name = "size" if "size" in [a.name for a in op._schema.arguments] else "shape"
    values[name] = size
    values["self"] = v
    if op is aten.view.default:
        try:
            return wrap(call(op, values), level.level)
        except RuntimeError:
            if v.is_contiguous():
                raise
            # the batch dimension's stride makes the physical view impossible where the
            # logical one is possible: a copy holds the same values
            values["self"] = v.contiguous()
    return wrap(call(op, values), level.level)


@batch_rule(aten.expand.default)
def expand_rule(op: OpOverload, level: Level, args: tuple[Any, ...], kw: dict[str, Any]) -> Any:
    values = bind(op, args, kw)
    size = list(values["size"])
    v = align(values["self"], level, len(size))
    values["self"] = v
    values["size"] = [level.size, *size]
    return wrap(call(op, values), level.level)


@batch_rule(aten.t.default)
def t_rule(op: OpOverload, level: Level, args: tuple[Any, ...], kw: dict[str, Any]) -> Any:
    v, _ = unwrap(args[0], level)
    return wrap(v.transpose(1, 2) if args[0].dim() == 2 else aten.alias.default(v), level.level)


@batch_rule(aten.squeeze.default)
def squeeze_rule(op: OpOverload, level: Level, args: tuple[Any, ...], kw: dict[str, Any]) -> Any:
    x = args[0]
    v, _ = unwrap(x, level)
    dims = [i + 1 for i, s in enumerate(x.shape) if s == 1]
    return wrap(aten.squeeze.dims(v, dims), level.level)


@batch_rule(
    aten.new_empty.default, aten.new_zeros.default, aten.new_ones.default, aten.new_full.default
)
def new_rule(op: OpOverload, level: Level, args: tuple[Any, ...], kw: dict[str, Any]) -> Any:
    """A factory method: the result is not batched (PyTorch's), made from the physical
    tensor's dtype and device."""
    v, _ = unwrap(args[0], level)
    return op(v.select(0, 0), *args[1:], **kw)


@batch_rule(aten.select_backward.default, aten.slice_backward.default)
def sizes_rule(op: OpOverload, level: Level, args: tuple[Any, ...], kw: dict[str, Any]) -> Any:
    values = bind(op, args, kw)
    values["grad_output"] = align(values["grad_output"], level, values["grad_output"].dim())
    n = len(values["input_sizes"])
    values["input_sizes"] = [level.size, *values["input_sizes"]]
    d = values["dim"]
    values["dim"] = (d + n if d < 0 else d) + 1
    return wrap(call(op, values), level.level)


@batch_rule(aten.diagonal_backward.default)
def diagonal_backward_rule(
    op: OpOverload, level: Level, args: tuple[Any, ...], kw: dict[str, Any]
) -> Any:
    values = bind(op, args, kw)
    values["grad_output"] = align(values["grad_output"], level, values["grad_output"].dim())
    n = len(values["input_sizes"])
    values["input_sizes"] = [level.size, *values["input_sizes"]]
    for name in ("dim1", "dim2"):
        d = values[name]
        values[name] = (d + n if d < 0 else d) + 1
    return wrap(call(op, values), level.level)


@batch_rule(aten.cat.default)
def cat_rule(op: OpOverload, level: Level, args: tuple[Any, ...], kw: dict[str, Any]) -> Any:
    values = bind(op, args, kw)
    tensors = list(values["tensors"])
    # legacy empty 1-D tensors are skipped by cat; they set no rank
    ranks = [t.dim() for t in tensors if not (t.dim() == 1 and t.shape[0] == 0)]
    n = max(ranks) if ranks else 1
    d = values.get("dim", 0)
    d = d + n if d < 0 else d
    values["tensors"] = [
        align(t, level, t.dim()) for t in tensors if not (t.dim() == 1 and t.shape[0] == 0)
    ] or [align(tensors[0], level, 1)]
    values["dim"] = d + 1
    return wrap(call(op, values), level.level)


@batch_rule(aten.stack.default)
def stack_rule(op: OpOverload, level: Level, args: tuple[Any, ...], kw: dict[str, Any]) -> Any:
    """The examples' tensors stacked after the batch dimension (shapes are checked by the
    physical stack: equal logical shapes give equal physical ones)."""
    values = bind(op, args, kw)
    tensors = list(values["tensors"])
    if not tensors:
        return call(op, values)  # PyTorch's error for an empty list
    n = tensors[0].dim() + 1
    d = values.get("dim", 0)
    if not -n <= d < n:
        raise IndexError(
            f"stack: Dimension out of range (expected to be in range of [{-n}, {n - 1}], but "
            f"got {d})"
        )
    values["tensors"] = [align(t, level, t.dim()) for t in tensors]
    values["dim"] = (d + n if d < 0 else d) + 1
    return wrap(call(op, values), level.level)


@batch_rule(aten.copy_.default, aten.fill_.Tensor)
def write_rule(op: OpOverload, level: Level, args: tuple[Any, ...], kw: dict[str, Any]) -> Any:
    values = bind(op, args, kw)
    self_x = values["self"]
    v, batched = unwrap(self_x, level)
    src_name = "src" if "src" in values else "value"
    src = values[src_name]
    if not batched:
        raise inplace_error(op)
    s, sb = unwrap(src, level)
    if sb:
        for _ in range(self_x.dim() - src.dim()):
            s = s.unsqueeze(1)
        if op is aten.fill_.Tensor:
            # a 0-dim value per example: fill is a copy of the broadcast value
            aten.copy_.default(v, s.to(v.dtype).expand(v.shape))
            return self_x
    values["self"], values[src_name] = v, s
    call(op, values)
    return self_x


@batch_rule(aten.copy.default, aten.fill.Tensor)
def functional_write_rule(
    op: OpOverload, level: Level, args: tuple[Any, ...], kw: dict[str, Any]
) -> Any:
    """``copy``/``fill.Tensor``: a new tensor like ``self`` holding ``src`` (broadcast) or the
    0-dim ``value``; with those batched, a ``copy`` of them into ``self``'s physical tensor
    (a new one for every example if ``self`` is not batched)."""
    values = bind(op, args, kw)
    self_x = values["self"]
    src_name = "src" if "src" in values else "value"
    src = values[src_name]
    if op is aten.fill.Tensor and src.dim() != 0:
        return slow_fallback(op, 0, args, kw)  # PyTorch's error, from the op per example
    v, vb = unwrap(self_x, level)
    if not vb:  # (only its shape and dtype matter: every element is written)
        v = aten.new_empty.default(v, [level.size, *v.shape])
    s, sb = unwrap(src, level)
    if not sb:
        values["self"] = v
        return wrap(call(op, values), level.level)
    for _ in range(self_x.dim() - src.dim()):
        s = s.unsqueeze(1)
    return wrap(aten.copy.default(v, s), level.level)


@batch_rule(aten.fill_.Scalar, aten.zero_.default)
def fill_rule(op: OpOverload, level: Level, args: tuple[Any, ...], kw: dict[str, Any]) -> Any:
    v, _ = unwrap(args[0], level)
    op(v, *args[1:], **kw)
    return args[0]


@batch_rule(aten._local_scalar_dense.default)
def item_rule(op: OpOverload, level: Level, args: tuple[Any, ...], kw: dict[str, Any]) -> Any:
    raise RuntimeError(_ITEM_ERROR)


@batch_rule(aten.where.self)
def where_rule(op: OpOverload, level: Level, args: tuple[Any, ...], kw: dict[str, Any]) -> Any:
    """``where`` broadcasts its three tensors as pointwise ops do, without the pointwise
    rule's cast of a 0-dim argument (the condition is a mask)."""
    values = bind(op, args, kw)
    tensors = [(k, x) for k, x in values.items() if isinstance(x, Tensor)]
    rank = max(x.dim() for _, x in tensors)
    for k, x in tensors:
        if unwrap(x, level)[1]:
            values[k] = align(x, level, rank)
    return wrap(call(op, values), level.level)


@batch_rule(aten.masked_fill.Tensor, logical=True)
def masked_fill_rule(
    op: OpOverload, level: Level, args: tuple[Any, ...], kw: dict[str, Any]
) -> Any:
    """``masked_fill`` with a (0-dim) value tensor: a ``where`` at the logical level."""
    values = bind(op, args, kw)
    self_x, mask, value = values["self"], values["mask"], values["value"]
    if value.dim() != 0:
        raise RuntimeError(
            "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
            f"{value.dim()} dimension(s)."
        )
    out = aten.where.self(mask, aten._to_copy.default(value, dtype=self_x.dtype), self_x)
    return out if tuple(out.shape) == tuple(self_x.shape) else out.expand(self_x.shape)


_INPLACE_VIEWS = VIEW_OF  # unsqueeze_, squeeze_, t_, transpose_, swapaxes_, swapdims_


@batch_rule(*_INPLACE_VIEWS, logical=True)
def inplace_view_rule(
    op: OpOverload, level: Level, args: tuple[Any, ...], kw: dict[str, Any]
) -> Any:
    """An in-place view op: the functional view, then the BatchedTensor takes its physical
    tensor and logical shape."""
    x = args[0]
    out = _INPLACE_VIEWS[op](x, *view_args(args[1:]), **kw)
    x._value, x._edata = out._value, out._edata
    return x


@batch_rule(aten.detach_.default)
def detach__rule(op: OpOverload, level: Level, args: tuple[Any, ...], kw: dict[str, Any]) -> Any:
    x = args[0]
    x._value = x._value.detach()
    return x


@batch_rule(aten.fill_diagonal_.default)
def fill_diagonal_rule(
    op: OpOverload, level: Level, args: tuple[Any, ...], kw: dict[str, Any]
) -> Any:
    """The main diagonal of each example's matrix, filled; the general case (``wrap``, more
    dimensions) loops over the batch."""
    values = bind(op, args, kw)
    x = values["self"]
    v, batched = unwrap(x, level)
    if not batched:
        raise inplace_error(op)
    if x.dim() != 2 or values.get("wrap", False):
        return slow_fallback(op, 0, args, kw)
    aten.diagonal.default(v, 0, 1, 2).fill_(values["fill_value"])
    return x


# ------------------------------------------------------------------ as_strided

_AS_STRIDED_LAYOUT = (
    "vmap: Calling Tensor.as_strided is not supported unless the batch dims being vmapped "
    "over are at the front of the tensor (in memory layout). When they are not at the front "
    "of the tensor this operation can be error prone so we actively discourage it; please "
    "file us a bug report and/or try to express the as_strided operation in terms of "
    "PyTorch view operations"
)


def _last_location(sizes: Any, strides: Any, offset: int) -> int | None:
    """The storage position one past the last element a view reaches (None: empty)."""
    if any(s == 0 for s in sizes):
        return None
    return offset + 1 + sum((n - 1) * s for n, s in zip(sizes, strides, strict=True))


def as_strided_rule(op: OpOverload, level: Level, args: tuple[Any, ...], kw: dict[str, Any]) -> Any:
    """Example ``i``'s view is example 0's moved by ``i`` batch strides (a BatchedTensor's
    ``storage_offset`` is example 0's); PyTorch's checks: the batch dimension outermost in
    memory, and example 0's view inside example 0's slice."""
    v = bind(op, args, kw)
    x, size, stride = v["self"], list(v["size"]), list(v["stride"])
    offset = v.get("storage_offset")
    p, _ = unwrap(x, level)
    bstride = p.stride(0)
    if any(s > bstride for s in p.stride()[1:]):
        raise RuntimeError(_AS_STRIDED_LAYOUT)
    base = p.storage_offset()
    start = base if offset is None else offset
    reach = _last_location(size, stride, start)
    slice_reach = _last_location(p.shape[1:], p.stride()[1:], base)
    if reach is not None and (slice_reach is None or reach > slice_reach or start < base):
        raise RuntimeError(
            f"result = tensor.as_strided({size}, {stride}, {start}) can access memory outside "
            f"of `tensor`: under vmap each example's view must lie inside that example's "
            f"slice (sizes {list(x.shape)}, strides {list(x.stride())}, storage offset "
            f"{base}). Express the view with view ops (view, narrow, unfold...) instead"
        )
    out = op(p, [level.size, *size], [bstride, *stride], start)
    return wrap(out, level.level)


register_rule(aten.as_strided.default, as_strided_rule)
