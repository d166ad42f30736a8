"""Batching rules of ops that take dimension arguments: reductions, scans, sorts, softmax,
gather/scatter, and the view ops that select, move or split dimensions.

One rule serves them all (``dim_rule``): logical dimension ``d`` is physical ``d + 1``. A
table gives, per op, the names of its dimension parameters, which Tensor parameters have the
shape of ``self`` (they are expanded over the batch when not batched; any other Tensor
parameter must be unbatched, or the call takes the slow fallback), and whether dimensions
count the result's extra one (``unsqueeze``, ``diag_embed``). A reduction over every
dimension (``dim=None`` or ``[]``) becomes one over the physical dimensions ``1..n``; a
flattening one (``argmax(dim=None)``) runs on ``[batch, -1]``. A 0-dim logical tensor gets a
size-1 dimension for the op, taken away from its results after.
"""

from __future__ import annotations

from typing import Any

from ember._batched.args import align, bind, call, wrap_dim
from ember._batched.kernel import register_rule, slow_fallback, unwrap
from ember._batched.tensor import Level, wrap
from ember._tensor import Tensor
from ember.ops.registry import OpOverload, ops

aten = ops.aten

#: op -> (dimension parameters, Tensor parameters shaped like self, extra result dims)
_SPEC: dict[OpOverload, tuple[tuple[str, ...], tuple[str, ...], int]] = {}


def _spec(names: str, dims: tuple[str, ...], aligned: tuple[str, ...] = (), extra: int = 0):
    for name in names.split():
        packet, _, overload = name.partition(".")
        op = getattr(getattr(aten, packet), overload or "default")
        names_of = {a.name for a in op._schema.arguments}
        _SPEC[op] = (dims, tuple(n for n in ("self", *aligned) if n in names_of), extra)


D = ("dim",)
_spec(
    "sum.dim_IntList mean.dim prod.dim_int max.dim min.dim amax amin argmax argmin "
    "var.correction var_mean.correction std.correction std_mean.correction logsumexp "
    "_softmax _safe_softmax _log_softmax all.dim all.dims any.dim any.dims linalg_vector_norm "
    "cumsum cumprod sort sort.stable topk nansum count_nonzero.dim_IntList count_nonzero aminmax "
    "cummax cummin logcumsumexp median.dim nanmedian.dim mode kthvalue glu",
    D,
)
_spec("_softmax_backward_data _log_softmax_backward_data", D, ("grad_output", "output"))
_spec("glu_backward", D, ("grad_output",))
_spec("gather scatter.value scatter.value_reduce", D, ("index",))
_spec("scatter.src scatter.reduce scatter_add scatter_reduce.two", D, ("index", "src"))
_spec("index_select", D)
_spec("flip rot90", ("dims",))
_spec("transpose.int", ("dim0", "dim1"))
_spec("diagonal", ("dim1", "dim2"))
_spec("diag_embed", ("dim1", "dim2"), extra=1)
_spec("permute", ("dims",))
_spec("select.int slice.Tensor squeeze.dim squeeze.dims unbind.int split.Tensor", D)
_spec("split_with_sizes linalg_cross", D)
_spec("unfold", ("dimension",))
_spec("unsqueeze", D, extra=1)
for _fft in ("_fft_c2c", "_fft_r2c", "_fft_c2r"):
    _SPEC[getattr(aten, _fft).default] = (D, ("self",), 0)
_SPEC[aten.linalg_cross.default] = (D, ("self", "other"), 0)

#: int? dims whose None means "the flattened tensor"
_FLATTENING = {
    aten.argmax.default,
    aten.argmin.default,
    aten.count_nonzero.default,
    aten.aminmax.default,
}


def dim_rule(op: OpOverload, level: Level, args: tuple[Any, ...], kw: dict[str, Any]) -> Any:
    dims, aligned, extra = _SPEC[op]
    values = bind(op, args, kw)
    n = values[aligned[0]].dim()
    for a in op._schema.arguments:
        if (
            a.type.base == "Tensor"
            and a.name not in aligned
            and unwrap(values.get(a.name), level)[1]
        ):
            return slow_fallback(op, 0, args, kw)
    rank = n + extra
    flatten = False
    for name in dims:
        d = values.get(name, _default(op, name))
        if d is None or (isinstance(d, (list, tuple)) and len(d) == 0):
            if d is None and op in _FLATTENING:
                flatten = True
                continue
            if isinstance(d, (list, tuple)) or d is None:
                if name == "dims" and op not in (aten.squeeze.dims,):
                    values[name] = d
                    continue
                values[name] = list(range(1, max(n, 1) + 1))
            continue
        if isinstance(d, (list, tuple)):
            values[name] = [wrap_dim(i, rank, op) + 1 for i in d]
        else:
            values[name] = wrap_dim(d, rank, op) + 1
    if n == 0 and op is aten.unfold.default:
        return slow_fallback(op, 0, args, kw)  # (a view: the fallback's error for views)
    if op is aten.permute.default:
        values["dims"] = [0, *values["dims"]]
    zero = n == 0 and not extra and not flatten and op is not aten.permute.default
    ranks = [t.dim() for t in (values.get(name) for name in aligned) if isinstance(t, Tensor)]
    for name in aligned:
        x = values.get(name)
        if isinstance(x, Tensor):
            v = align(x, level, max(ranks))
            if zero and x.dim() == 0:
                v = v.unsqueeze(1)
            values[name] = v
    if flatten:
        values[aligned[0]] = values[aligned[0]].reshape(level.size, -1)
        values[dims[0]] = 1
        out = call(op, values)
        if values.get("keepdim"):
            keep = (level.size,) + (1,) * n
            out = (
                tuple(o.reshape(keep) for o in out) if isinstance(out, tuple) else out.reshape(keep)
            )
        return _wrap_out(out, level, False)
    out = call(op, values)
    return _wrap_out(out, level, zero)


def _default(op: OpOverload, name: str) -> Any:
    for a in op._schema.arguments:
        if a.name == name:
            return a.default_value if a.has_default_value() else None
    return None


def _wrap_out(out: Any, level: Level, zero: bool) -> Any:
    if isinstance(out, Tensor):
        if zero and out.dim() == 2:
            out = out.squeeze(1)
        return wrap(out, level.level)
    if isinstance(out, (tuple, list)):
        made = [_wrap_out(o, level, zero) for o in out]
        return type(out)(made) if type(out) in (tuple, list) else type(out)(*made)
    return out


for _op in _SPEC:
    register_rule(_op, dim_rule)


# ------------------------------------------------------------------ full reductions


def _flat(x: Any, level: Level) -> Tensor:
    return unwrap(x, level)[0].reshape(level.size, -1)


def _full(target: Any) -> Any:
    def rule(op: OpOverload, level: Level, args: tuple[Any, ...], kw: dict[str, Any]) -> Any:
        return wrap(target(_flat(args[0], level), **kw), level.level)

    return rule


_FULL = {
    aten.sum.default: lambda v, **k: aten.sum.dim_IntList(v, [1], False, **k),
    aten.mean.default: lambda v, **k: aten.mean.dim(v, [1], False, **k),
    aten.prod.default: lambda v, **k: aten.prod.dim_int(v, 1, False, **k),
    aten.max.default: lambda v: aten.amax.default(v, [1]),
    aten.min.default: lambda v: aten.amin.default(v, [1]),
    aten.all.default: lambda v: aten.all.dim(v, 1),
    aten.any.default: lambda v: aten.any.dim(v, 1),
    aten.median.default: lambda v: aten.median.dim(v, 1)[0],
    aten.nanmedian.default: lambda v: aten.nanmedian.dim(v, 1)[0],
}
for _op, _target in _FULL.items():
    register_rule(_op, _full(_target))
