"""Which tensors a call writes: the schema's ``Tensor(a!)`` arguments, plus the writes some
PyTorch schemas leave undeclared.

NOTE [undeclared writes]
PyTorch's ``native_batch_norm`` updates ``running_mean`` and ``running_var`` in place in
training, yet its schema marks no argument as written (PyTorch's functionalization knows it
by hand and rewrites the op to ``_native_batch_norm_legit_functional``). ember keeps the
schema as PyTorch prints it, so ``__torch_dispatch__`` code sees the same, and declares the
hidden writes once, here, beside the schema's: every layer that must know what a call
writes (the lazy device's functionalization) asks ``written_tensors``. The tracer's
functionalization (NOTE [functional tracing]) rewrites such a call as PyTorch's does, to
the op ``STATE_FUNCTIONAL`` names, whose last outputs are the written tensors' new values;
the lazy device's Functionalize key leaves the op to the Lazy key, which records its
writes itself.

>>> from ember.ops.writes import written_tensors
>>> x, rm, rv = ember.ones(4, 2), ember.zeros(2), ember.ones(2)
>>> op = ember.ops.aten.native_batch_norm.default
>>> [t is rm for t in written_tensors(op, (x, None, None, rm, rv, True, 0.1, 1e-5), {})]
[True, False]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ember.ops.registry import OpOverload, ops

aten = ops.aten

#: op -> (args, kwargs) -> names of the arguments this call writes that its schema does not
#: mark (NOTE [undeclared writes])
UNDECLARED_WRITES: dict[OpOverload, Callable[[tuple[Any, ...], dict[str, Any]], tuple[str, ...]]]
UNDECLARED_WRITES = {
    aten.native_batch_norm.default: lambda args, kwargs: (
        ("running_mean", "running_var")
        if _argument(aten.native_batch_norm.default, args, kwargs, "training")
        else ()
    ),  # fmt: skip
}


#: op -> the functional op a call that writes undeclared tensors becomes (its last outputs
#: are their new values, in ``written_tensors`` order; NOTE [undeclared writes])
STATE_FUNCTIONAL: dict[OpOverload, OpOverload] = {
    aten.native_batch_norm.default: aten._native_batch_norm_legit_functional.default,
}


def _argument(op: OpOverload, args: tuple[Any, ...], kwargs: dict[str, Any], name: str) -> Any:
    """The value of the argument ``name`` of a call (its default when omitted)."""
    schema = op._schema
    for i, a in enumerate(schema.positional):
        if a.name == name:
            return args[i] if i < len(args) else kwargs.get(name, a.default_value)
    for a in schema.kwarg_only:
        if a.name == name:
            return kwargs.get(name, a.default_value)
    raise KeyError(f"{op} has no argument {name!r}")


def written_names(op: OpOverload, args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[str]:
    """Names of the arguments a call writes, in schema order."""
    schema = op._schema
    names = [schema.arguments[i].name for i in schema.mutated_indices]
    hidden = UNDECLARED_WRITES.get(op)
    if hidden is not None:
        extra = set(hidden(args, kwargs))
        names = [a.name for a in schema.arguments if a.name in extra or a.name in names]
    return names


def written_tensors(op: OpOverload, args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[Any]:
    """The tensors a call writes, in schema order (a ``Tensor[]`` argument's in list order;
    ``None`` arguments left out)."""
    out: list[Any] = []
    for name in written_names(op, args, kwargs):
        x = _argument(op, args, kwargs, name)
        for t in x if isinstance(x, (list, tuple)) else (x,):
            if t is not None:
                out.append(t)
    return out
