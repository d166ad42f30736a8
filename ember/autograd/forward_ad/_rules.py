"""Forward derivative rules: how each op's output tangent is computed from its inputs'.

# NOTE [forward rules]
Every op with a backward formula gets a forward rule, chosen once per op, in this order:

1. **written** (``_formulas.py``): a formula of its own (matrix products, softmax,
   convolution, dropout, ops that are affine rather than linear); **random**: a random
   draw's tangent is zero, as its gradient is (the op is not run again).
2. **linear** (PyTorch's ``auto_linear``): the op is linear in its floating tensor inputs
   together (views, ``add``, ``cat``, ``sum``, indexing, padding, pooling by averages, FFTs,
   ...), so the output tangent is the op applied to the tangents, with zeros for inputs that
   have none. A view's tangent is then the same view of the input's tangent.
3. **element-wise** (PyTorch's ``auto_element_wise``): a pointwise op on real tensors has a
   diagonal Jacobian, so the backward formula applied to a tangent (broadcast to the
   output's shape) gives that input's share of the output tangent; the shares add up.
4. **double-vjp**, the generic rule for everything else (reductions like ``max``, norms,
   losses, linear algebra, pointwise ops on complex tensors): with ``u`` a zero cotangent
   that requires grad, ``vjp(u)`` is linear in ``u``, and the gradient of
   ``Re <vjp(u), t>`` with respect to ``u`` is ``J t``. It costs a forward, a backward
   with ``create_graph`` and a second backward, and needs the backward formula to be
   differentiable, which ember's are (they are ember ops).

Every rule runs ember ops through the dispatcher, so tangents may be any tensors: batched,
lazy, traced, or duals of a lower level. ``rule_name(op)`` says which rule an op uses
(docs/autograd.md lists them).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ember._tensor import Tensor
from ember.autograd.derivatives_tensorops import RAISES_AT_BACKWARD
from ember.autograd.function_table import DERIVATIVES, VJP
from ember.autograd.grad_mode import enable_grad
from ember.ops.binding import tensor_params
from ember.ops.native._define import FUNCTIONAL_OF
from ember.ops.registry import OpOverload, ops

aten = ops.aten

#: rule(op, args, kwargs, tangents, out) -> the output tangent (a tuple for several
#: outputs, None where an output gets none); ``tangents`` holds one entry per Tensor
#: parameter of the schema (a list for a Tensor[] one), None where there is no tangent
Rule = Callable[[OpOverload, tuple[Any, ...], dict[str, Any], tuple[Any, ...], Any], Any]

#: written rules (``_formulas.py`` fills it): op -> rule
WRITTEN: dict[OpOverload, Rule] = {}

# (ops linear in their floating tensor inputs, taken together: the output tangent is the op
# of the tangents; by "name.overload")
LINEAR_NAMES = frozenset("""
    alias.default as_strided.default cat.default clone.default conj_physical.default
    _conj_physical.default copy.default cumsum.default diag_embed.default diagonal.default
    diagonal_backward.default expand.default _fft_c2c.default _fft_c2r.default
    _fft_r2c.default flip.default gather.default im2col.default col2im.default
    slice_scatter.default select_scatter.default diagonal_scatter.default
    as_strided_scatter.default index.Tensor index_add.default index_copy.default
    index_fill.int_Tensor
    index_put.default index_select.default lift_fresh.default lift_fresh_copy.default
    masked_fill.Tensor masked_scatter.default masked_select.default mean.default mean.dim
    permute.default channel_shuffle.default pixel_shuffle.default pixel_unshuffle.default
    positive.default put.default reflection_pad1d.default reflection_pad2d.default
    reflection_pad3d.default
    replication_pad1d.default replication_pad2d.default replication_pad3d.default
    repeat.default roll.default rot90.default scatter.src scatter_add.default
    select.int select_backward.default slice.Tensor slice_backward.default split.Tensor
    split_with_sizes.default squeeze.default squeeze.dim squeeze.dims sum.default
    sum.dim_IntList t.default take.default trace.default transpose.int tril.default
    triu.default unbind.int unfold.default unsqueeze.default view.default
    view_as_real.default view_as_complex.default complex.default _unsafe_view.default
    _to_copy.default zero.default fill.Tensor
    block_diag.default embedding.default neg.default add.Tensor sub.Tensor rsub.Tensor
    mul.Scalar div.Scalar deg2rad.default rad2deg.default where.self
    _adaptive_avg_pool2d.default _adaptive_avg_pool3d.default avg_pool2d.default
    avg_pool3d.default upsample_nearest1d.default upsample_nearest2d.default
    upsample_nearest3d.default _upsample_nearest_exact1d.default
    _upsample_nearest_exact2d.default _upsample_nearest_exact3d.default
    upsample_linear1d.default upsample_bilinear2d.default upsample_bicubic2d.default
    upsample_trilinear3d.default _upsample_bilinear2d_aa.default
    _upsample_bicubic2d_aa.default affine_grid_generator.default
    avg_pool2d_backward.default avg_pool3d_backward.default
    _adaptive_avg_pool2d_backward.default _adaptive_avg_pool3d_backward.default
""".split())  # fmt: skip


def _differentiable(t: Any) -> bool:
    return isinstance(t, Tensor) and t.dtype.category >= 2


def get_param(args: tuple[Any, ...], kwargs: dict[str, Any], p: tuple[int, str, bool]) -> Any:
    pos, name, _ = p
    return args[pos] if 0 <= pos < len(args) else kwargs.get(name)


def replaced(
    op: OpOverload, args: tuple[Any, ...], kwargs: dict[str, Any], new: dict[int, Any]
) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """``args``/``kwargs`` with Tensor parameter ``i`` set to ``new[i]``."""
    a = list(args)
    k = dict(kwargs)
    for i, p in enumerate(tensor_params(op)):
        if i not in new:
            continue
        pos, name, _ = p
        if 0 <= pos < len(a):
            a[pos] = new[i]
        else:
            k[name] = new[i]
    return tuple(a), k


def _zeros(x: Any) -> Any:
    return aten.zeros_like.default(x)


# --------------------------------------------------------------------------- linear


def linear(op: OpOverload, args: tuple[Any, ...], kwargs: dict[str, Any],
           tangents: tuple[Any, ...], out: Any) -> Any:  # fmt: skip
    """The op applied to the tangents (zeros where an input has none)."""
    new: dict[int, Any] = {}
    for i, p in enumerate(tensor_params(op)):
        x = get_param(args, kwargs, p)
        t = tangents[i]
        if p[2]:
            if x is None:
                continue
            tl = t if t is not None else [None] * len(x)
            new[i] = [
                (tt if tt is not None else _zeros(e)) if _differentiable(e) else e
                for e, tt in zip(x, tl, strict=True)
            ]
        elif _differentiable(x):
            new[i] = t if t is not None else _zeros(x)
        elif isinstance(x, Tensor) and p[1] in _OPERANDS:
            new[i] = _zeros(x)  # an integer operand (``x + n``) shifts, it has no tangent
        elif isinstance(x, (bool, int, float, complex)) and p[1] in _OPERANDS:
            new[i] = 0  # so does a Python number passed for a Tensor
    a, k = replaced(op, args, kwargs, new)
    return op(*a, **k)


#: Tensor parameters that are values added in, not indices or masks: zeroed when integer
_OPERANDS = frozenset({"self", "other"})


# --------------------------------------------------------------------------- element-wise


class NotElementWise(Exception):
    """The formula's gradient is not shaped like the output: use the generic rule."""


def _call_formula(vjp: VJP, g: Any, args: tuple[Any, ...], kwargs: dict[str, Any],
                  out: Any, needs: tuple[bool, ...]) -> tuple[Any, ...]:  # fmt: skip
    extra: dict[str, Any] = {}
    if vjp.wants_needs:
        extra["needs"] = needs
    if vjp.wants_result:
        extra["result"] = out
    r = vjp.formula(g, *args, **extra, **kwargs)
    if not isinstance(r, tuple) or len(needs) == 1 and len(r) != 1:
        r = (r,)
    return r


def element_wise(op: OpOverload, args: tuple[Any, ...], kwargs: dict[str, Any],
                 tangents: tuple[Any, ...], out: Any) -> Any:  # fmt: skip
    """Each input's share: the backward formula applied to its tangent (broadcast to the
    output), as the Jacobian of a pointwise op on real numbers is diagonal."""
    vjp = DERIVATIVES[op]
    n = len(tangents)
    total = None
    for i, t in enumerate(tangents):
        if t is None:
            continue
        g = t if tuple(t.shape) == tuple(out.shape) else t.expand(out.shape)
        needs = tuple(j == i for j in range(n))
        share = _call_formula(vjp, g, args, kwargs, out, needs)[i]
        if share is None:
            continue
        if not isinstance(share, Tensor) or tuple(share.shape) != tuple(out.shape):
            raise NotElementWise
        total = share if total is None else total + share
    return total


def _element_wise_applies(op: OpOverload, args: tuple[Any, ...], kwargs: dict[str, Any],
                          out: Any) -> bool:  # fmt: skip
    if not isinstance(out, Tensor) or out.dtype.category != 2:
        return False
    for p in tensor_params(op):
        x = get_param(args, kwargs, p)
        if isinstance(x, Tensor) and x.dtype.category == 3:
            return False
    return True


# --------------------------------------------------------------------------- double-vjp


def _real_inner(g: Tensor, t: Tensor) -> Tensor:
    """``Re sum(g * conj(t))``, the real inner product (NOTE [complex gradients])."""
    if g.dtype.category == 3 or t.dtype.category == 3:
        return aten.real.default(g * aten.conj_physical.default(t)).sum()
    return (g * t).sum()


def double_vjp(op: OpOverload, args: tuple[Any, ...], kwargs: dict[str, Any],
               tangents: tuple[Any, ...], out: Any) -> Any:  # fmt: skip
    """``J t`` as the gradient of ``Re <vjp(u), t>`` with respect to ``u`` (NOTE [forward
    rules]): the op runs again on ``x + z`` (``z`` a zero leaf standing for the input)."""
    # cycle: ember.autograd.api imports the engine, whose kernel imports forward_ad
    from ember.autograd.api import grad

    vjp = DERIVATIVES[op]
    params = tensor_params(op)
    wants_graph = False
    with enable_grad():
        zs: list[Tensor] = []
        ts: list[Tensor] = []
        new: dict[int, Any] = {}
        for i, p in enumerate(params):
            x = get_param(args, kwargs, p)
            t = tangents[i]
            if t is None:
                continue
            if p[2]:
                items = list(x)
                for j, (e, tt) in enumerate(zip(x, t, strict=True)):
                    if tt is not None:
                        z = _zeros(e).requires_grad_()
                        items[j] = e + z
                        zs.append(z)
                        ts.append(tt)
                        wants_graph |= e.requires_grad or tt.requires_grad
                new[i] = items
            else:
                z = _zeros(x).requires_grad_()
                new[i] = x + z
                zs.append(z)
                ts.append(t)
                wants_graph |= x.requires_grad or t.requires_grad
        a, k = replaced(op, args, kwargs, new)
        out2 = op(*a, **k)
        many = isinstance(out2, (tuple, list))
        outs = list(out2) if many else [out2]
        flags = vjp.outputs
        diff = [
            j for j, o in enumerate(outs)
            if _differentiable(o) and o.requires_grad and (flags is None or flags[j])
        ]  # fmt: skip
        result: list[Any] = [None] * len(outs)
        if diff:
            us = [_zeros(outs[j]).requires_grad_() for j in diff]
            gs = grad([outs[j] for j in diff], zs, us, create_graph=True, allow_unused=True)
            h = None
            for g, t in zip(gs, ts, strict=True):
                if g is not None:
                    term = _real_inner(g, t)
                    h = term if h is None else h + term
            if h is not None and h.requires_grad:
                jv = grad(h, us, allow_unused=True, create_graph=wants_graph)
                for j, v in zip(diff, jv, strict=True):
                    result[j] = v
    if not wants_graph:
        result = [r.detach() if isinstance(r, Tensor) else r for r in result]
    for j, o in enumerate(outs):
        if result[j] is None and _differentiable(o) and j in diff:
            result[j] = _zeros(o)
    return tuple(result) if many else result[0]


# --------------------------------------------------------------------------- choice


def rule_name(op: OpOverload) -> str | None:
    """Which rule of NOTE [forward rules] ``op`` uses: ``"written"``, ``"linear"``,
    ``"element-wise"``, ``"double-vjp"``, ``"random"`` (a draw: zero), or None (no forward
    derivative).

    >>> from ember.autograd.forward_ad import rule_name
    >>> rule_name(ember.ops.aten.mm.default), rule_name(ember.ops.aten.exp.default)
    ('written', 'element-wise')
    """
    op = FUNCTIONAL_OF.get(op, op)
    if op in WRITTEN:
        return "written"
    if "nondeterministic_seeded" in op.tags and op in DERIVATIVES:
        return "random"
    if f"{op.overloadpacket.__name__}.{op._overloadname}" in LINEAR_NAMES:
        return "linear"
    if op not in DERIVATIVES:
        return None
    if "pointwise" in op.tags:
        return "element-wise"
    return "double-vjp"


def apply(op: OpOverload, args: tuple[Any, ...], kwargs: dict[str, Any],
          tangents: tuple[Any, ...], out: Any) -> Any:  # fmt: skip
    """The output tangent(s) of ``op`` (functional) by its rule."""
    name = _RULES.get(op)
    if name is None:
        name = _RULES[op] = rule_name(op) or ""
    if name == "written":
        return WRITTEN[op](op, args, kwargs, tangents, out)
    if name == "random":  # NOTE [random gradients] in ember/ops/native/random.py: zero
        return None
    if op in RAISES_AT_BACKWARD:  # no derivative at all, as in PyTorch (unique, ...)
        raise NotImplementedError(
            f"Trying to use forward AD with {op.overloadpacket.__name__} that does not support "
            "it because it has not been implemented yet (as in PyTorch). detach() the input, "
            "or unpack_dual(x).primal, if no derivative should flow through it"
        )
    if name == "linear":
        return linear(op, args, kwargs, tangents, out)
    if name == "element-wise" and _element_wise_applies(op, args, kwargs, out):
        try:
            return element_wise(op, args, kwargs, tangents, out)
        except NotElementWise:
            pass
    if name in ("element-wise", "double-vjp"):
        return double_vjp(op, args, kwargs, tangents, out)
    if not any(_differentiable(o) for o in (out if isinstance(out, (tuple, list)) else [out])):
        return None  # comparisons, indices: nothing to differentiate
    raise RuntimeError(
        f"the forward derivative for '{op.name()}' is not implemented: it has no backward "
        "formula to derive one from nor a forward formula of its own (add one with "
        "ember.autograd.forward_ad.defjvp), or call it on tensors without tangents"
    )


_RULES: dict[OpOverload, str] = {}
