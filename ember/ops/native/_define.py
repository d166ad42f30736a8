"""Helpers the catalogue files use to declare ops: one call per functional schema, which
also declares its in-place (``add_.Tensor``) and ``out=`` (``add.out``) overloads.

# NOTE [variants]
``variants`` says which public bindings an op gets, as ``native_functions.yaml`` does:
``"function"`` (``ember.add``), ``"method"`` (``Tensor.add``). In-place overloads are methods
only (``Tensor.add_``); ``out=`` overloads join the functional packet (``ember.add(..., out=)``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

from ember.ops.registry import OpOverload, define_op

FUNCTION_AND_METHOD = ("function", "method")
#: functional op -> (in-place op, out op); either may be None
VARIANTS_OF: dict[OpOverload, tuple[OpOverload | None, OpOverload | None]] = {}
#: in-place or out op -> the functional op it writes the result of
FUNCTIONAL_OF: dict[OpOverload, OpOverload] = {}
#: out op -> a check of its arguments (all but the out tensors) that PyTorch's out= kernel
#: runs and the functional one does not; the derived out= kernels of every backend run it
#: first (``ember/backends/variants.py``)
OUT_CHECKS: dict[OpOverload, Callable[..., None]] = {}
#: out ops declared ``exact_out_dtype`` (only ``define`` adds to it; ``exact_out_dtype(op)``
#: reads it)
_EXACT_OUT_DTYPE: set[OpOverload] = set()


def define(
    schema: str,
    *,
    tags: tuple[str, ...] = (),
    variants: tuple[str, ...] = FUNCTION_AND_METHOD,
    inplace: bool = False,
    out: bool = False,
    out_overload: str = "out",
    out_arg: str = "out",
    exact_out_dtype: bool = False,
) -> OpOverload:
    """Declare ``schema`` in ``aten``; with ``inplace``/``out``, declare those variants too
    (``out_arg``: the out argument's name, ``grad_input`` for some backward ops).

    ``exact_out_dtype``: the out tensor must have the result's dtype exactly, as PyTorch's
    linear algebra kernels require ("Expected out tensor to have dtype float, but got double
    instead"), where other out= ops take any dtype the result casts to safely (an op with
    several outputs always requires it)."""
    if exact_out_dtype and not out:
        raise ValueError(f"exact_out_dtype needs out=True: {schema}")
    op = define_op(schema, "aten", tags, variants)
    ip = define_op(inplace_schema(schema), "aten", tags, ("method",)) if inplace else None
    o = define_op(out_schema(schema, out_overload, out_arg), "aten", tags, ()) if out else None
    if exact_out_dtype and o is not None:
        _EXACT_OUT_DTYPE.add(o)
    if ip is not None or o is not None:
        VARIANTS_OF[op] = (ip, o)
    for v in (ip, o):
        if v is not None:
            FUNCTIONAL_OF[v] = op
    return op


def exact_out_dtype(op: OpOverload) -> bool:
    """Whether out op ``op`` was declared ``exact_out_dtype`` (see ``define``)."""
    return op in _EXACT_OUT_DTYPE


def _split(schema: str) -> tuple[str, str, str, str]:
    m = re.match(r"^(\w+)(?:\.(\w+))?\((.*)\)\s*->\s*(.+)$", schema.strip(), re.S)
    if m is None:
        raise ValueError(f"malformed schema {schema!r}")
    name, overload, args, ret = m.groups()
    return name, overload or "", args, ret


def inplace_schema(schema: str) -> str:
    """The in-place schema of a functional one.

    ``add.Tensor(Tensor self, ...) -> Tensor`` → ``add_.Tensor(Tensor(a!) self, ...) -> Tensor(a!)``
    """
    name, overload, args, _ = _split(schema)
    if not args.startswith("Tensor self"):
        raise ValueError(f"in-place variant needs a leading 'Tensor self': {schema}")
    args = "Tensor(a!) self" + args[len("Tensor self") :]
    return f"{name}_{'.' + overload if overload else ''}({args}) -> Tensor(a!)"


def out_schema(schema: str, overload: str = "out", out_arg: str = "out") -> str:
    """``add.Tensor(...) -> Tensor`` → ``add.out(..., *, Tensor(a!) out) -> Tensor(a!)``;
    several returns get one ``out`` argument each, named after them (``values``, ``indices``)
    unless ``out_arg`` names them, comma-separated (``linalg_eigh``'s ``eigvals,eigvecs``)."""
    name, _, args, ret = _split(schema)
    has_star = "*" in [a.strip() for a in args.split(",")]
    sep = ", " if has_star else (", *, " if args.strip() else "*, ")
    if ret.startswith("("):
        names = [r.strip().split()[-1] for r in ret[1:-1].split(",")]
        given = out_arg.split(",") if out_arg != "out" else names
        letters = "abcdefgh"
        outs = ", ".join(f"Tensor({letters[i]}!) {n}" for i, n in enumerate(given))
        rets = ", ".join(f"Tensor({letters[i]}!) {n}" for i, n in enumerate(names))
        return f"{name}.{overload}({args}{sep}{outs}) -> ({rets})"
    return f"{name}.{overload}({args}{sep}Tensor(a!) {out_arg}) -> Tensor(a!)"


def by_name(op: OpOverload, fn: Callable[[SimpleNamespace], Any]) -> Callable[..., Any]:
    """A kernel for ``op`` (plain convention) that calls ``fn`` with the call's arguments by
    their schema names (``FunctionSchema.named``): for a kernel written once for several
    overloads or keys, so it does not repeat the op's signature."""
    named = op._schema.named

    def kernel(*args: Any, **kwargs: Any) -> Any:
        return fn(named(args, kwargs))

    kernel.__name__ = kernel.__qualname__ = getattr(fn, "__name__", op._name)
    return kernel
