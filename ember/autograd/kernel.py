"""The Autograd key's kernel: one boxed fallback that records a graph node for every op.

# NOTE [autograd as a dispatch key]
A tensor carries the Autograd key only while it requires grad, so ops on plain tensors never
reach this layer. Here, with grad mode on and some input requiring grad, the op runs below
the Autograd key (nested ops record nothing), and its differentiable outputs get a
``grad_fn`` node built from the op's entry in the derivative table. In-place ops rewrite
the history of the tensor they modify (its ``grad_fn`` becomes the new node); on a leaf that
requires grad they raise, as in PyTorch. Backward formulas are ember ops, so they dispatch
like any other op and record their own graph when ``create_graph=True``.
"""

from __future__ import annotations

from typing import Any

from ember._tensor import Tensor
from ember.autograd.anomaly_mode import forward_trace, is_anomaly_enabled
from ember.autograd.function_table import DERIVATIVES, NONDIFFERENTIABLE, VJP
from ember.autograd.graph import AccumulateGrad, Edge, Node, SavedTensor
from ember.dispatch import state
from ember.dispatch.dispatcher import set_fallback
from ember.dispatch.keys import AUTOGRAD_BIT, DispatchKey, below
from ember.ops.native._define import FUNCTIONAL_OF
from ember.ops.registry import OpOverload

BELOW = below(DispatchKey.Autograd)


class below_autograd:
    """Run ops with the Autograd key excluded (what the recorded op itself runs under)."""

    __slots__ = ("old",)

    def __enter__(self) -> None:
        loc = state.local
        self.old = loc.exclude
        loc.exclude = self.old | AUTOGRAD_BIT
        state.ACTIVE[0] += 1

    def __exit__(self, *exc: Any) -> None:
        state.local.exclude = self.old
        state.ACTIVE[0] -= 1


def gradient_edge(t: Tensor) -> Edge:
    """Where the gradient of ``t`` goes: its grad_fn, or its leaf accumulator."""
    fn = t.grad_fn
    if fn is not None:
        return (fn, t.__dict__.get("_output_nr", 0))
    acc = t.__dict__.get("_grad_accumulator")
    if acc is None:
        acc = AccumulateGrad(t)
        t._grad_accumulator = acc  # type: ignore[attr-defined]
    return (acc, 0)


def _tensor_params(op: OpOverload) -> list[tuple[int, str, bool]]:
    """(position or -1 for kwarg-only, name, is_list) of each Tensor parameter."""
    out = []
    pos = 0
    for a in op._schema.arguments:
        if a.type.base == "Tensor":
            out.append((-1 if a.kwarg_only else pos, a.name, a.type.is_list))
        if not a.kwarg_only:
            pos += 1
    return out


def _arg(args: tuple[Any, ...], kwargs: dict[str, Any], pos: int, name: str) -> Any:
    if 0 <= pos < len(args):
        return args[pos]
    return kwargs.get(name)


def _differentiable(t: Any) -> bool:
    return isinstance(t, Tensor) and t.dtype.category >= 2


def autograd_fallback(
    op: OpOverload, ks: int, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> Any:
    loc = state.local
    if not loc.grad_enabled or op in NONDIFFERENTIABLE:
        with below_autograd():
            return op.redispatch(ks & BELOW, *args, **kwargs)
    params = _tensor_params(op)
    inputs: list[Any] = [_arg(args, kwargs, pos, name) for pos, name, _ in params]
    needs = [
        [isinstance(t, Tensor) and t.requires_grad for t in x] if is_list and x is not None
        else isinstance(x, Tensor) and x.requires_grad
        for (_, _, is_list), x in zip(params, inputs, strict=True)
    ]  # fmt: skip
    if not any(any(n) if isinstance(n, list) else n for n in needs):
        return op.redispatch(ks & BELOW, *args, **kwargs)
    schema = op._schema
    if schema.is_out:
        raise RuntimeError(
            f"{op.overloadpacket.__name__}(): functions with out=... arguments don't support "
            "automatic differentiation, but one of the arguments requires grad. Call it without "
            "out= or inside ember.no_grad()."
        )
    vjp = DERIVATIVES.get(op) or DERIVATIVES.get(FUNCTIONAL_OF.get(op, op))
    inplace = schema.is_inplace
    if inplace:
        _check_inplace(op, args[0])
    if vjp is None:
        with below_autograd():
            out = op.redispatch(ks & BELOW, *args, **kwargs)
        if any(_differentiable(o) for o in _flat_outputs(out)):
            raise RuntimeError(
                f"the derivative for '{op.name()}' is not implemented: add a line for it to "
                "ember/autograd/derivatives.py, or call it on tensors that don't require grad "
                "(detach() them)"
            )
        return out
    formula_args = args
    if inplace and "self" in vjp.reads:
        with below_autograd():  # the formula reads self as it was before the mutation
            formula_args = (args[0].clone(), *args[1:])  # type: ignore[attr-defined]
    with below_autograd():
        out = op.redispatch(ks & BELOW, *args, **kwargs)
    node = _make_node(vjp, params, inputs, needs, formula_args, kwargs, out)
    _attach(node, out, inplace)
    return out


def _check_inplace(op: OpOverload, self: Any) -> None:
    if not isinstance(self, Tensor) or not self.requires_grad:
        return
    if self.grad_fn is None and self._base is None:
        raise RuntimeError(
            f"{op.__name__}: a leaf Variable that requires grad is being used in an in-place "
            "operation. Do it inside ember.no_grad(), or on a clone()."
        )
    base = self._base
    if base is not None and base.requires_grad:
        raise RuntimeError(
            f"{op.__name__}: in-place modification of a view of a tensor that requires grad is "
            "not supported by ember's autograd yet; clone() the view, or build the result "
            "out of place."
        )


def _flat_outputs(out: Any) -> list[Any]:
    return list(out) if isinstance(out, (tuple, list)) else [out]


def _make_node(
    vjp: VJP,
    params: list[tuple[int, str, bool]],
    inputs: list[Any],
    needs: list[Any],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    out: Any,
) -> Node:
    edges: list[Any] = []
    meta: list[Any] = []
    for x, need, (_, _, is_list) in zip(inputs, needs, params, strict=True):
        if is_list:
            edges.append(
                tuple(gradient_edge(t) if n else None for t, n in zip(x or (), need, strict=True))
            )
            meta.append(
                tuple((tuple(t.shape), t.dtype) if isinstance(t, Tensor) else None for t in x or ())
            )
        else:
            edges.append(gradient_edge(x) if need else None)
            meta.append((tuple(x.shape), x.dtype) if isinstance(x, Tensor) else None)
    node = Node(vjp.name, _run_formula, tuple(edges), tuple(meta), ctx=(vjp, args, kwargs))
    if is_anomaly_enabled():
        node.metadata["trace"] = forward_trace()
    reads = vjp.reads
    for (_, name, is_list), x in zip(params, inputs, strict=True):
        if name in reads and x is not None:
            for t in x if is_list else (x,):
                if isinstance(t, Tensor):
                    node.saved.append(SavedTensor(t, vjp.name))
    return node


def _attach(node: Node, out: Any, inplace: bool) -> None:
    vjp: VJP = node.ctx[0]
    outs = _flat_outputs(out)
    node.metadata["n_outputs"] = len(outs)
    node.metadata["out_meta"] = tuple(
        (tuple(o.shape), o.dtype) if isinstance(o, Tensor) else None for o in outs
    )
    results: list[Any] = []
    for i, o in enumerate(outs):
        if _differentiable(o):
            o._keys |= AUTOGRAD_BIT
            o.grad_fn = node
            if i:
                o._output_nr = i  # type: ignore[attr-defined]
            elif "_output_nr" in o.__dict__:
                del o.__dict__["_output_nr"]
        results.append(o)
    if vjp.wants_result:
        node.metadata["result"] = out
        for i, o in enumerate(outs):
            if isinstance(o, Tensor):
                node.saved.append(SavedTensor(o, vjp.name, i, is_output=True))


def _run_formula(node: Node, grads: Any) -> Any:
    vjp, args, kwargs = node.ctx
    for s in node.saved:
        s.unpack()  # raises if freed or modified in place (NOTE [saved tensor versions])
    g = grads[0] if node.metadata.get("n_outputs", 1) == 1 else tuple(grads)
    if vjp.wants_result:
        return vjp.formula(g, *args, result=node.metadata["result"], **kwargs)
    return vjp.formula(g, *args, **kwargs)


def install() -> None:
    set_fallback(DispatchKey.Autograd, autograd_fallback)
