"""The Functionalize key's rewrite of one call that writes: the functional op it becomes,
the arguments that op takes, the new value of each written tensor, and the view op a
metadata write applies (NOTE [functional rewrite]). It lives in ``ops/``, beside
``writes.py``, so that the key (``ember/functionalize/``) and the tracer (``ember/fx/``)
both import it.

# NOTE [functional rewrite]
One rewrite, two drivers. A call that writes (``add_``, ``add.out``, ``copy_``,
``_foreach_mul_``) is run as its functional op (``functional_of``: the ``FUNCTIONAL_OF``
table, except for ops whose schema leaves writes undeclared), with the ``out=`` arguments
dropped (``functional_kwargs``), and each written tensor takes the matching tensor of the
result (``new_values``, in the order ``written_tensors`` gives), cast to its dtype where
the functional op promotes. ``rewrite`` is that step; a driver says how an op runs below
it and how a written tensor is rebound to its new value:

- the Functionalize key's kernel (``ember/functionalize/fallback.py``, NOTE
  [functionalize]) runs the functional op below the key and rebinds a lazy tensor through
  the lazy recorder;
- AOTAutograd's functional tracing (``ember/fx/experimental/proxy_tensor.py``, NOTE
  [functional tracing]) runs it as a traced op and rebinds a traced tensor to its graph
  node (a view's base through ``index_put``).

A metadata write (``t_``, ``transpose_``, ``squeeze_``) has no functional op; it becomes
the view op it applies (``metadata_view_of``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ember._tensor import Tensor
from ember.ops.native._define import FUNCTIONAL_OF
from ember.ops.registry import OpOverload, ops
from ember.ops.writes import UNDECLARED_WRITES

aten = ops.aten


def functional_of(op: OpOverload) -> OpOverload | None:
    """The functional op a call of ``op`` is rewritten to (``add_.Tensor`` and ``add.out`` ->
    ``add.Tensor``), or None: no counterpart, or writes its schema leaves undeclared
    (NOTE [undeclared writes])."""
    if op in UNDECLARED_WRITES:
        return None
    return FUNCTIONAL_OF.get(op)


def functional_kwargs(op: OpOverload, kwargs: dict[str, Any]) -> dict[str, Any]:
    """The keyword arguments of the functional call: an ``out=`` op's outputs dropped."""
    if not op._schema.is_out:
        return kwargs
    outs = {a.name for a in op._schema.kwarg_only if a.is_write}
    return {k: v for k, v in kwargs.items() if k not in outs}


def new_values(result: Any) -> list[Tensor]:
    """The tensors of a functional op's result, in order (a list result flattened): the new
    value of each written tensor."""
    if isinstance(result, Tensor):
        return [result]
    out: list[Tensor] = []
    for r in result:
        out.extend(new_values(r))
    return out


def rewrite(
    op: OpOverload,
    functional: OpOverload,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    written: list[Tensor],
    run: Callable[[OpOverload, tuple[Any, ...], dict[str, Any]], Any],
    rebind: Callable[[Tensor, Tensor, int], None],
) -> Any:
    """NOTE [functional rewrite]: ``functional`` run by ``run`` with ``op``'s arguments, then
    ``rebind(t, value, i)`` for the ``i``-th written tensor ``t``; the functional result."""
    new = run(functional, args, functional_kwargs(op, kwargs))
    for i, (t, v) in enumerate(zip(written, new_values(new), strict=True)):
        rebind(t, v, i)
    return new


def metadata_view_of(op: OpOverload) -> OpOverload | None:
    """``t`` for ``t_``, ``transpose.int`` for ``transpose_``...: the view op a metadata
    write applies to its tensor, or None."""
    name = op.overloadpacket.__name__
    if not name.endswith("_") or name.startswith("_"):
        return None
    packet = getattr(aten, name[:-1], None)
    if packet is None:
        return None
    view = getattr(packet, op._overloadname, None)
    if isinstance(view, OpOverload) and view._schema.view_of is not None:
        return view
    # another overload name with the same arguments (``transpose_.default``: ``transpose.int``)
    args = [str(a.type) for a in op._schema.positional]
    for overload in packet.overloads():
        view = getattr(packet, overload)
        if (
            view._schema.view_of is not None
            and [str(a.type) for a in view._schema.positional] == args
        ):
            return view
    return None
