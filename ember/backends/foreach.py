"""Kernels of the foreach ops for every key, derived from their element ops (NOTE [foreach
ops] in ``ember/ops/native/foreach.py``).

One loop is generated per op from the two schemas (the foreach op's parameters passed on to
the element op's by position, the extra ones by keyword) and made twice: a backend key's
kernel calls the element op's kernel for that key at each position (the list is dispatched
once, its elements not at all); the Autograd kernel passes the call down when no element
needs a graph, and otherwise runs the loop with the element op itself, dispatched, so each
position records its own node (and a leaf that requires grad refuses the in-place write).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ember._tensor import Tensor
from ember.dispatch import dispatcher, marks, state
from ember.dispatch.codegen import define
from ember.dispatch.dispatcher import KIND_KEYSET, KIND_PLAIN
from ember.dispatch.keys import DispatchKey, below
from ember.ops.native.foreach import FOREACH, Foreach, check_lists
from ember.ops.registry import OpOverload, ops
from ember.ops.schema import FunctionSchema

_COPY_ = ops.aten.copy_.default
_BELOW_AUTOGRAD = below(DispatchKey.Autograd)


def _signature(schema: FunctionSchema) -> str:
    """The Python parameters of ``schema``, defaults as the schema's (from ``D``)."""
    parts, star = [], False
    for a in schema.arguments:
        if a.kwarg_only and not star:
            parts.append("*")
            star = True
        parts.append(a.name if not a.has_default_value() else f"{a.name}=D[{a.name!r}]")
    return ", ".join(parts)


def _element_call(op: OpOverload, spec: Foreach, items: dict[str, str]) -> str:
    """The element op's arguments, from the foreach op's (``items``: a name per list param,
    the one element of it): positional ones by position, the rest as the element op's
    keyword-only parameters, in order (``addcmul``'s ``value``)."""
    el = spec.element._schema
    el_pos = [a.name for a in el.positional]
    el_kw = [a.name for a in el.kwarg_only]
    out, extra = [], []
    for i, a in enumerate(op._schema.positional):
        v = items.get(a.name, a.name)
        if i < len(el_pos):
            out.append(v)
        else:
            extra.append(v)
    for name, v in zip(el_kw, extra, strict=False):
        out.append(f"{name}={v}")
    for a in op._schema.kwarg_only:
        out.append(f"{a.name}={a.name}")
    return ", ".join(out)


def _loop(op: OpOverload, spec: Foreach, callee: Callable[[], Any], copy: Any) -> Any:
    """``op`` over its lists: at each position, ``callee()``'s function on the element
    arguments (then ``copy(self, result)`` for an in-place op with no in-place element)."""
    positional = op._schema.positional
    lists = [positional[i].name for i in spec.lists]
    items = {n: f"x{i}" for i, n in enumerate(lists)}
    lines = [
        f"def kernel({_signature(op._schema)}):",
        f"    CHECK(OP, SPEC, ({', '.join(a.name for a in positional)},))",
        "    element = CALLEE()",
        "    out = []",
        f"    for {', '.join(items.values())}, in zip({', '.join(lists)}):",
        f"        r = element({_element_call(op, spec, items)})",
    ]
    if spec.inplace and spec.inplace_element is None:  # functional, then copy_ into self
        lines.append(f"        COPY({items[lists[0]]}, r)")
    lines += ["    return None"] if spec.inplace else ["        out.append(r)", "    return out"]
    defaults = {a.name: a.default_value for a in op._schema.arguments if a.has_default_value()}
    scope = {"CHECK": check_lists, "OP": op, "SPEC": spec, "CALLEE": callee, "COPY": copy,
             "D": defaults}  # fmt: skip
    # one source per argument layout (the ops' names live in the scope): compiled once
    return define(lines, scope, "kernel", f"foreach loop{lines[0][len('def kernel') : -1]}")


def _element(spec: Foreach) -> OpOverload:
    return spec.inplace_element if spec.inplace and spec.inplace_element else spec.element


def _backend_kernel(op: OpOverload, spec: Foreach, key: DispatchKey) -> Callable[..., Any]:
    """``op``'s kernel for backend ``key``: the element op's kernel for ``key``, per
    position."""
    element, k = _element(spec), int(key)
    copy = lambda d, r: _COPY_.kernel_for(k)(d, r)  # noqa: E731 - looked up when it runs
    return _loop(op, spec, lambda: element.kernel_for(k), copy)  # type: ignore[no-any-return]


def per_element_loop(op: OpOverload, spec: Foreach) -> Callable[..., Any]:
    """``op`` as its element op dispatched at each position (what the Autograd kernel runs
    when an element requires grad, and vmap's batching rule)."""
    dispatch = _element(spec)._dispatch
    return _loop(op, spec, lambda: dispatch, _COPY_._dispatch)  # type: ignore[no-any-return]


def _autograd_kernel(op: OpOverload, spec: Foreach) -> Callable[..., Any]:
    """``op``'s Autograd kernel: below at once unless an element requires grad in grad
    mode; then the element ops, dispatched one by one, record a node each."""
    per_element = per_element_loop(op, spec)
    lists = tuple(i for i in spec.lists if op._schema.positional[i].type.base == "Tensor")

    def kernel(ks: int, *args: Any, **kwargs: Any) -> Any:
        if state.local.grad_enabled and _any_requires_grad(args, lists):
            return per_element(*args, **kwargs)
        return op.redispatch(ks & _BELOW_AUTOGRAD, *args, **kwargs)

    kernel.__name__ = kernel.__qualname__ = f"{op.overloadpacket.__name__}_Autograd"
    return kernel


def _any_requires_grad(args: tuple[Any, ...], lists: tuple[int, ...]) -> bool:
    for i in lists:
        if i < len(args):
            for t in args[i]:
                if isinstance(t, Tensor) and marks.tracks_grad(t):
                    return True
    return False


for _op, _spec in FOREACH.items():
    for _key in (DispatchKey.CPU, DispatchKey.Meta):
        dispatcher.set_kernel(_op, _key, _backend_kernel(_op, _spec, _key), KIND_PLAIN)
    dispatcher.set_kernel(_op, DispatchKey.Autograd, _autograd_kernel(_op, _spec), KIND_KEYSET)
