"""The ForwardAD key's kernel: one boxed fallback that computes the tangents of an op's outputs.

# NOTE [forward AD as a dispatch key]
A tensor carries the ForwardAD key while it has a tangent (NOTE [tangents on tensors] in
``_levels.py``), so ops on tensors without tangents never reach this kernel and the hot
path pays nothing. Here the op runs (redispatched, so the Autograd key below records it for
backward as usual) and its outputs get tangents from the op's forward rule (NOTE [forward
rules] in ``_rules.py``). Rules are ember ops called through the dispatcher: tangents may
be batched, lazy or traced tensors, and when a primal or a tangent requires grad the
rule's ops are recorded for backward too (reverse over forward, forward over reverse).

# NOTE [nested dual levels]
Tangents are kept per dual level. The kernel handles the highest level ``L`` at which an
input has a tangent, below the thread's ceiling (``state.local.fw_ceiling``): with the
ceiling lowered to ``L`` it runs the op again through this same key (so lower levels are
handled the same way, one level at a time), then the rule, whose ops therefore carry the
lower levels' tangents as well; then it gives the outputs their level-``L`` tangents.
Levels never see each other's tangents as values, which is what keeps ``jvp(jvp(f))``
free of perturbation confusion.

# NOTE [forward AD of in-place ops and views]
A view's tangent is the same view of its input's tangent (the linear rule applies the view
op to the tangent). An in-place op computes the new tangent with the rule of its
functional form, from a copy of ``self`` taken before the write, and writes it into
``self``'s tangent (so views of that tangent see it); a ``self`` without a tangent gets one,
and a view without one gets the region of its base's tangent (the base gets a zero tangent
first if it has none), as PyTorch does.

# NOTE [views of a base with a tangent]
A view taken before its base got a tangent (``v = b[:2]; b.copy_(dual)``) sees it, as in
PyTorch: its tangent is the same region of the base's tangent, made when the view is next
used (``adopt_base_tangents``, also run by ``unpack_dual``), and a view of it, so later
in-place changes of the base's tangent show through. Such a view carries no ForwardAD key
of its own, so once an in-place op gives a tensor its first tangent (the only way a base
gets one after its views were taken: ``make_dual`` returns a new alias) the key joins the
thread's include set until the outermost dual level exits (``watch_views``), and every op
reaches this kernel (an op on tensors without tangents goes straight below). A ``jvp`` of
a function without such writes pays nothing for it.
"""

from __future__ import annotations

from typing import Any

from ember._tensor import Tensor
from ember.autograd import copy_slices
from ember.autograd.forward_ad import _rules
from ember.autograd.forward_ad._levels import set_tangent, tangent, top_level, watch_views
from ember.autograd.function_table import NONDIFFERENTIABLE
from ember.dispatch import state
from ember.dispatch.dispatcher import set_fallback
from ember.dispatch.keys import DispatchKey, below
from ember.ops.native._define import FUNCTIONAL_OF
from ember.ops.native.inplace_views import VIEW_OF
from ember.ops.registry import OpOverload, ops

BELOW = below(DispatchKey.ForwardAD)
_CLONE = ops.aten.clone.default
_EMPTY_STRIDED = ops.aten.empty_strided.default


class _Info:
    __slots__ = ("params", "inplace", "is_out", "functional")

    def __init__(self, op: OpOverload) -> None:
        self.params = _rules.tensor_params(op)
        self.inplace = op._schema.is_inplace
        self.is_out = op._schema.is_out
        self.functional = FUNCTIONAL_OF.get(op, op)


_INFO: dict[OpOverload, _Info] = {}


def forward_ad_fallback(
    op: OpOverload, ks: int, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> Any:
    info = _INFO.get(op)
    if info is None:
        info = _INFO[op] = _Info(op)
    ceiling = state.local.fw_ceiling
    level = -1
    for p in info.params:
        x = _rules.get_param(args, kwargs, p)
        adopt_base_tangents(x, ceiling)
        level = top_level(x, ceiling, level)
    if level < 0 or op in NONDIFFERENTIABLE:
        return op.redispatch(ks & BELOW, *args, **kwargs)
    tangents = tuple(_tangents_of(_rules.get_param(args, kwargs, p), level) for p in info.params)
    if info.is_out:
        raise RuntimeError(
            f"{op.overloadpacket.__name__}(): functions with out=... arguments don't support "
            "forward-mode automatic differentiation, but one of the arguments has a tangent. "
            "Call it without out=."
        )
    with state.DualCeiling(level):
        if op in VIEW_OF:  # unsqueeze_, t_, ...: the tangent changes shape the same way
            out = op.redispatch(ks, *args, **kwargs)
            if tangents[0] is not None:
                op(tangents[0], *args[1:], **kwargs)
            return out
        if info.inplace:
            return _inplace(op, info, ks, args, kwargs, tangents, level)
        out = op.redispatch(ks, *args, **kwargs)
        touts = _rules.apply(info.functional, args, kwargs, tangents, out)
    _attach(op, out, touts, level)
    return out


def adopt_base_tangents(x: Any, ceiling: int) -> None:
    """Give a view without tangents its base's, below ``ceiling`` (NOTE [views of a base
    with a tangent])."""
    if isinstance(x, Tensor):
        base = x._base
        if base is None or x.__dict__.get("_fw_grads") is not None:
            return
        grads = base.__dict__.get("_fw_grads")
        if not grads:
            return
        if x.dtype != base.dtype and not (base.dtype.is_complex and not x.dtype.is_complex):
            return  # a reinterpreting view (view(dtype)): no tangent, as in PyTorch
        region = copy_slices._region(base, x)
        for lv, tb in list(grads.items()):
            if lv < ceiling:
                with state.DualCeiling(lv):
                    set_tangent(x, lv, copy_slices._in(tb, region))
    elif isinstance(x, (list, tuple)):
        for e in x:
            adopt_base_tangents(e, ceiling)


def _tangents_of(x: Any, level: int) -> Any:
    if isinstance(x, Tensor):
        return tangent(x, level)
    if isinstance(x, (list, tuple)):
        ts = [tangent(e, level) for e in x]
        return ts if any(t is not None for t in ts) else None
    return None


def _fit(op: OpOverload, o: Tensor, t: Tensor) -> Tensor:
    """``t`` as a tangent of ``o``: its shape and dtype."""
    if tuple(t.shape) != tuple(o.shape):
        try:
            t = t.expand(o.shape)
        except RuntimeError as e:
            raise RuntimeError(
                f"{op}: forward AD computed a tangent of shape {tuple(t.shape)} for an output "
                f"of shape {tuple(o.shape)}; its forward rule is wrong (a bug in ember)"
            ) from e
    if t.dtype != o.dtype:
        if o.dtype.category < 3 and t.dtype.category == 3:
            t = ops.aten.real.default(t)
        t = t.to(o.dtype)
    return t


def _attach(op: OpOverload, out: Any, touts: Any, level: int) -> None:
    many = isinstance(out, (tuple, list))
    outs = list(out) if many else [out]
    ts = list(touts) if many and isinstance(touts, (tuple, list)) else [touts]
    for o, t in zip(outs, ts, strict=False):
        if t is None or not isinstance(o, Tensor) or o.dtype.category < 2:
            continue
        if tangent(o, level) is not None:
            continue  # an input returned as is keeps its tangent
        with state.DualCeiling(level):
            t = _fit(op, o, t)
        set_tangent(o, level, t)
        _saved_copy(o, level, t)


def _saved_copy(o: Tensor, level: int, t: Tensor) -> None:
    """The copy of ``o`` its backward node saved (NOTE [saved outputs] in
    ``ember/autograd/kernel.py``) gets the tangent too: it was made before the tangent was
    known, and backward formulas reading it run on duals (forward over reverse)."""
    node = o.grad_fn
    if node is None:
        return
    kept = node.result
    if isinstance(kept, (tuple, list)):
        kept = kept[o._output_nr] if o._output_nr < len(kept) else None
    if isinstance(kept, Tensor) and kept is not o and tangent(kept, level) is None:
        set_tangent(kept, level, t)


def _inplace(
    op: OpOverload,
    info: _Info,
    ks: int,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    tangents: tuple[Any, ...],
    level: int,
) -> Any:
    """NOTE [forward AD of in-place ops and views] (run with the ceiling at ``level``)."""
    self = args[0]
    fop = info.functional
    linear = _rules.rule_name(fop) == "linear"
    before = self if linear or not isinstance(self, Tensor) else _CLONE(self)
    out = op.redispatch(ks, *args, **kwargs)
    if not isinstance(self, Tensor) or self.dtype.category < 2:
        return out
    new = _rules.apply(fop, (before, *args[1:]), kwargs, tangents, out)
    if isinstance(new, (tuple, list)):
        new = new[0]
    old = tangent(self, level)
    if new is None:
        if old is not None:
            old.zero_()
        return out
    new = _fit(op, self, new)
    if old is not None:
        old.copy_(new)
        return out
    watch_views()  # self (or its base) gets its first tangent: older views must see it
    base = self._base
    if base is not None and base.dtype.category >= 2:
        tb = tangent(base, level)
        if tb is None:
            tb = _EMPTY_STRIDED(
                tuple(base.shape), tuple(base.stride()), dtype=base.dtype, device=base.device
            ).zero_()
            set_tangent(base, level, tb)
        tv = copy_slices._in(tb, copy_slices._region(base, self))
        tv.copy_(new)
        set_tangent(self, level, tv)
        return out
    own = _EMPTY_STRIDED(
        tuple(self.shape), tuple(self.stride()), dtype=self.dtype, device=self.device
    )
    own.copy_(new)
    set_tangent(self, level, own)
    return out


def install() -> None:
    set_fallback(DispatchKey.ForwardAD, forward_ad_fallback)
