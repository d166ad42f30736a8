"""The interpreter tier: a lowered graph run node by node by an ``ember.fx.Interpreter``.

Values are ndarrays; an op runs its cpu kernel (``redispatch`` to the CPU key only, so no
mode or upper key sees the graph's ops) on tensors wrapping them, and an argument the op
writes takes the wrapper's array afterwards. Values are freed after their last use.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ember._tensor import Tensor, wrap
from ember.compiler.effects import mutated_args
from ember.compiler.graph_meta import single_output
from ember.dispatch.keys import CPU_BIT
from ember.fx.graph_module import GraphModule
from ember.fx.interpreter import Interpreter
from ember.fx.node import Node, map_arg
from ember.ops.registry import OpOverload


def flatten(result: Any) -> tuple[Any, ...]:
    """A kernel's result as the flat tuple of its arrays (None stays None)."""
    out: list[Any] = []
    _flatten(result, out)
    return tuple(out)


def _flatten(result: Any, out: list[Any]) -> None:
    if isinstance(result, Tensor):
        out.append(result._edata)
    elif isinstance(result, (list, tuple)):
        for r in result:
            _flatten(r, out)
    elif result is None:
        out.append(None)
    else:
        out.append(np.asarray(result))


def run_kernel(node: Node, env: dict[Node, Any]) -> Any:
    """Run ``node``'s op on the cpu kernel with its arguments' arrays from ``env``;
    updates ``env`` for the arguments it writes; returns its lowered value."""
    op = node.target
    assert isinstance(op, OpOverload)
    wrappers: dict[Node, Tensor] = {}

    def load(a: Node) -> Any:
        if a.meta.get("param") is not None:
            return env[a]
        w = wrappers.get(a)
        if w is None:
            v = env[a]
            w = wrappers[a] = wrap(v) if v is not None else None  # type: ignore[assignment]
        return w

    args, kwargs = map_arg(node.args, load), map_arg(node.kwargs, load)
    result = op.redispatch(CPU_BIT, *args, **kwargs)
    for m in mutated_args(node):
        env[m] = wrappers[m]._edata
    if single_output(op):
        return result._edata
    return flatten(result)


class ArrayInterpreter(Interpreter):
    """Runs a lowered graph on ndarrays (see the module docstring)."""

    def run_node(self, n: Node) -> Any:
        if n.op == "call_function" and isinstance(n.target, OpOverload):
            with self._set_current_node(n):
                return run_kernel(n, self.env)
        return super().run_node(n)


def compile_interpreter(gm: GraphModule) -> Callable[..., Any]:
    """The graph as a function of its placeholders' values, run by ``ArrayInterpreter``."""
    interp = ArrayInterpreter(gm)

    def run(*args: Any) -> Any:
        try:
            return interp.run(*args)
        finally:  # hold no array after the run (NOTE [donated inputs])
            interp.env = {}
            interp.args_iter = iter(())

    return run
