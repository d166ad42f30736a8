"""``functionalize``: a function whose writes and views are rewritten as pure ops."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ember.ops.registry import OpOverload, ops

__all__ = ["functionalize"]


def functionalize(func: Callable[..., Any], *, remove: str = "mutations") -> Callable[..., Any]:
    """``func`` run as a pure graph: traced with its writes as functional ops (NOTE
    [functional tracing]), writes into its inputs applied to them afterwards; with
    ``remove="mutations_and_views"`` the graph's views are copies too.

    >>> from ember.func import functionalize
    >>> from ember.fx.experimental.proxy_tensor import make_fx
    >>> def f(x):
    ...     y = x.clone()
    ...     y.add_(1)
    ...     return y
    >>> gm = make_fx(functionalize(f))(ember.ones(2))
    >>> [str(n.target) for n in gm.graph.nodes if n.op == "call_function"]
    ['aten.clone.default', 'aten.add.Tensor']
    """
    if remove not in ("mutations", "mutations_and_views"):
        raise ValueError(
            f"functionalize: remove must be 'mutations' or 'mutations_and_views', got {remove!r}"
        )
    # cycle: ember.aot imports ember.func (functional_call)
    from ember.aot.aot_autograd import aot_function, nop

    compiler = nop if remove == "mutations" else _copy_views
    compiled = aot_function(func, compiler)

    def wrapped(*args: Any, **kwargs: Any) -> Any:
        return compiled(*args, **kwargs)

    wrapped.__name__ = getattr(func, "__name__", "functionalized")
    return wrapped


def _copy_views(gm: Any, example_inputs: Any) -> Any:
    """The graph with each view op's result cloned (no value aliases another)."""
    from ember.aot.aot_autograd import nop  # cycle: ember.aot imports ember.func

    g = gm.graph
    for n in list(g.nodes):
        if n.op == "call_function" and isinstance(n.target, OpOverload):
            if n.target._schema.view_of is not None:
                with g.inserting_after(n):
                    c = g.call_function(ops.aten.clone.default, (n,), name="clone")
                n.replace_all_uses_with(c)
                c.args = (n,)
    gm.recompile()
    return nop(gm, example_inputs)
