"""Kernels of the foreach ops for every key, derived from their element ops (NOTE [foreach
ops] in ``ember/ops/native/foreach.py``).

A backend key's kernel calls the element op's kernel for that key once per position: the
list is dispatched once, its elements not at all. The loop is generated from the two
schemas (the foreach op's parameters, passed on to the element op's by position, the extra
ones by keyword), so a position costs one kernel call. The Autograd kernel passes the call
down when no element needs a graph; otherwise it dispatches the element ops one by one, so
each records its own node (and a leaf that requires grad refuses the in-place write).
"""

from __future__ import annotations

import linecache
from collections.abc import Callable
from typing import Any

from ember._tensor import Tensor
from ember.dispatch import dispatcher, state
from ember.dispatch.dispatcher import KIND_KEYSET, KIND_PLAIN
from ember.dispatch.keys import AUTOGRAD_BIT, DispatchKey, below
from ember.ops.native.foreach import FOREACH, Foreach, check_lists
from ember.ops.registry import OpOverload, ops
from ember.ops.schema import FunctionSchema

_COPY_ = ops.aten.copy_.default
_BELOW_AUTOGRAD = below(DispatchKey.Autograd)


def _call(el: OpOverload, key: int, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """The element op's kernel for ``key``, whatever its calling convention."""
    fn, kind = (el._table or el._build_table())[key]
    if kind == KIND_PLAIN:
        return fn(*args, **kwargs)
    if kind == KIND_KEYSET:
        return fn(1 << key, *args, **kwargs)
    return fn(el, 1 << key, args, kwargs)


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


def _compile(src: str, scope: dict[str, Any], where: str) -> Callable[..., Any]:
    filename = f"<generated {where}>"
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    exec(compile(src, filename, "exec"), scope)  # noqa: S102 - generated from parsed schemas
    return scope["kernel"]  # type: ignore[no-any-return]


def _backend_kernel(op: OpOverload, spec: Foreach, key: DispatchKey) -> Callable[..., Any]:
    """``op``'s kernel for backend ``key``: the element op's kernel for ``key``, per
    position, in a loop generated for ``op``."""
    element = spec.inplace_element if spec.inplace and spec.inplace_element else spec.element
    write = spec.inplace and spec.inplace_element is None  # functional, then copy_ into self
    params = _signature(op._schema)
    positional = op._schema.positional
    lists = [positional[i].name for i in spec.lists]
    items = {n: f"x{i}" for i, n in enumerate(lists)}
    call = _element_call(op, spec, items)
    loop = f"for {', '.join(items.values())}, in zip({', '.join(lists)}):"
    pos_args = ", ".join(a.name for a in positional)
    after = [f"CALL(COPY, KEY, ({items[lists[0]]}, r), {{}})"] if write else []
    after += [] if spec.inplace else ["out.append(r)"]

    def loop_with(callee: str) -> list[str]:
        body = [f"r = {callee}({call})", *after]
        return [f"        {loop}", *(f"            {b}" for b in body)]

    lines = [
        f"def kernel({params}):",
        f"    CHECK(OP, SPEC, ({pos_args},))",
        "    fn, kind = (EL._table or EL._build_table())[KEY]",
        "    out = []",
        "    if kind == 0:",  # a plain kernel: called straight
        *loop_with("fn"),
        "    else:",  # any other calling convention, through _call
        *loop_with("ELEMENT"),
        "    return None" if spec.inplace else "    return out",
    ]
    src = "\n".join(lines) + "\n"
    scope: dict[str, Any] = {
        "CHECK": check_lists, "OP": op, "SPEC": spec, "EL": element, "KEY": int(key),
        "CALL": _call, "COPY": _COPY_, "D": _defaults(op._schema),
        "ELEMENT": lambda *a, **k: _call(element, int(key), a, k),
    }  # fmt: skip
    return _compile(src, scope, f"{op} {key.name}")


def _defaults(schema: FunctionSchema) -> dict[str, Any]:
    return {a.name: a.default_value for a in schema.arguments if a.has_default_value()}


def _autograd_kernel(op: OpOverload, spec: Foreach) -> Callable[..., Any]:
    """``op``'s Autograd kernel: below at once unless an element requires grad in grad
    mode; then the element ops, dispatched one by one, record a node each."""
    element = spec.inplace_element if spec.inplace and spec.inplace_element else spec.element
    write = spec.inplace and spec.inplace_element is None
    tensor_lists = tuple(i for i in spec.lists if op._schema.positional[i].type.base == "Tensor")

    def kernel(ks: int, *args: Any, **kwargs: Any) -> Any:
        if state.local.grad_enabled and _any_requires_grad(args, tensor_lists):
            n = check_lists(op, spec, args)
            out = []
            for i in range(n):
                ea = tuple(a[i] if j in spec.lists else a for j, a in enumerate(args))
                ea, ekw = spec.adapt(*ea, **kwargs)
                r = element(*ea, **ekw)
                if write:
                    _COPY_(ea[0], r)
                out.append(r)
            return None if spec.inplace else out
        return op.redispatch(ks & _BELOW_AUTOGRAD, *args, **kwargs)

    kernel.__name__ = kernel.__qualname__ = f"{op.overloadpacket.__name__}_Autograd"
    return kernel


def _any_requires_grad(args: tuple[Any, ...], lists: tuple[int, ...]) -> bool:
    for i in lists:
        if i < len(args):
            for t in args[i]:
                if isinstance(t, Tensor) and t._keys & AUTOGRAD_BIT:
                    return True
    return False


for _op, _spec in FOREACH.items():
    for _key in (DispatchKey.CPU, DispatchKey.Meta):
        dispatcher.set_kernel(_op, _key, _backend_kernel(_op, _spec, _key), KIND_PLAIN)
    dispatcher.set_kernel(_op, DispatchKey.Autograd, _autograd_kernel(_op, _spec), KIND_KEYSET)
