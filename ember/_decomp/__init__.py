"""Decomposition tables, as ``torch._decomp``: functions that compute an op from other ops,
for tracers (``make_fx(f, decomposition_table=...)``, ``aot_function(decompositions=...)``).

# NOTE [decomposition tables]
ember has one source of decompositions: an op's CompositeImplicitAutograd kernel (what the
dispatcher runs for an op without a kernel for the call's key, so tracers and the lazy device
never see such an op, only its parts: ``OpOverload.decompose``), and the functions registered
here with ``register_decomposition`` for ops that do have kernels but that a backend may want
in simpler ops (``silu`` as ``x * sigmoid(x)``, ``t`` as ``transpose``:
``ember/_decomp/decompositions.py``). ``get_decompositions(ops)`` picks entries of both;
``core_aten_decompositions()`` is every registered one. A decomposition calls ops through
the dispatcher, so a tracer records the ops it is made of.

>>> from ember._decomp import get_decompositions
>>> from ember.fx.experimental.proxy_tensor import make_fx
>>> table = get_decompositions([ember.ops.aten.silu])
>>> gm = make_fx(ember.nn.functional.silu, decomposition_table=table)(ember.ones(2))
>>> [str(n.target) for n in gm.graph.nodes if n.op == "call_function"]
['aten.sigmoid.default', 'aten.mul.Tensor']
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from ember.dispatch.keys import DispatchKey
from ember.ops.registry import OpOverload, OpOverloadPacket

__all__ = [
    "core_aten_decompositions",
    "decomposition_table",
    "get_decompositions",
    "global_decomposition_table",
    "register_decomposition",
]

#: "post_autograd" / "pre_autograd" / "meta" -> op -> function, as PyTorch's
global_decomposition_table: dict[str, dict[OpOverload, Callable[..., Any]]] = {
    "post_autograd": {},
    "pre_autograd": {},
    "meta": {},
}
decomposition_table = global_decomposition_table["post_autograd"]


def _overloads(op: Any) -> list[OpOverload]:
    if isinstance(op, OpOverload):
        return [op]
    if isinstance(op, OpOverloadPacket):
        return [getattr(op, name) for name in op.overloads()]
    raise TypeError(
        f"decompositions are keyed by OpOverload or OpOverloadPacket, got {type(op).__name__} "
        f"({op!r}); write ember.ops.aten.<op> or ember.ops.aten.<op>.<overload>"
    )


def register_decomposition(
    aten_op: Any,
    registry: dict[OpOverload, Callable[..., Any]] | None = None,
    *,
    type: str = "post_autograd",
    unsafe: bool = False,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """A decorator registering a function as the decomposition of ``aten_op`` (an overload,
    a packet: every overload, or a list of them), in ``registry`` or the global table.

    >>> from ember._decomp import register_decomposition
    >>> mine = {}
    >>> @register_decomposition(ember.ops.aten.neg.default, mine)
    ... def neg(x):
    ...     return x * -1
    >>> list(mine)
    [<OpOverload(op='aten.neg', overload='default')>]
    """
    if type not in global_decomposition_table:
        raise ValueError(f"register_decomposition: unknown type {type!r}")

    def decorator(fn: Callable[..., Any]) -> Callable[..., Any]:
        table = global_decomposition_table[type] if registry is None else registry
        ops = aten_op if isinstance(aten_op, (list, tuple)) else [aten_op]
        for op in ops:
            for overload in _overloads(op):
                if overload in table and not unsafe and registry is None:
                    raise RuntimeError(f"register_decomposition: {overload} is registered twice")
                table[overload] = fn
        return fn

    return decorator


def _composite(op: OpOverload) -> Callable[..., Any] | None:
    if not op.has_kernel_for_dispatch_key(DispatchKey.CompositeImplicitAutograd):
        return None

    def decomposition(*args: Any, **kwargs: Any) -> Any:
        return op.decompose(*args, **kwargs)

    decomposition.__name__ = f"{op.overloadpacket.__name__}_decomposition"
    return decomposition


def get_decompositions(
    aten_ops: Iterable[Any], type: str = "post_autograd"
) -> dict[OpOverload, Callable[..., Any]]:
    """The decompositions of the given ops (overloads or packets): registered ones, else the
    op's CompositeImplicitAutograd kernel; ops with neither are left out (NOTE
    [decomposition tables]).

    >>> from ember._decomp import get_decompositions
    >>> sorted(str(op) for op in get_decompositions([ember.ops.aten.hardtanh]))
    ['aten.hardtanh.default']
    """
    registered = global_decomposition_table[type]
    out: dict[OpOverload, Callable[..., Any]] = {}
    for op in aten_ops:
        for overload in _overloads(op):
            fn = registered.get(overload) or _composite(overload)
            if fn is not None:
                out[overload] = fn
    return out


def core_aten_decompositions() -> dict[OpOverload, Callable[..., Any]]:
    """Every registered decomposition: the table that leaves ember's core ops (those with
    kernels and no registered decomposition).

    >>> from ember._decomp import core_aten_decompositions
    >>> ember.ops.aten.silu.default in core_aten_decompositions()
    True
    """
    return dict(global_decomposition_table["post_autograd"])


from ember._decomp import decompositions as _decompositions  # noqa: E402,F401 (registers)
