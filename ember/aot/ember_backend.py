"""The ``"ember"`` backend: a dense graph of OpOverloads (what AOTAutograd hands its
compilers) compiled by the lazy device's compiler (``ember/compiler/``: the same passes,
tiers, numba fusion and kernel disk cache).

# NOTE [ember backend]
The compiler works on graphs over ndarrays (NOTE [lowering] in
``ember/lazy/lowering.py``). A traced graph already has that form but for its values:
placeholders become ``x<i>`` holding the input tensors' arrays, each node's
``meta["tensor_meta"]`` comes from its fake value (``meta["val"]``, which ``make_fx``
records), constants (``get_attr``) hold their arrays, and an output that is an input itself
is copied (a gradient must not alias a tangent the engine may reuse). Then ``optimize`` runs
the passes and the tier generates the function. No input is donated: the passes never write
the caller's tensors. The returned callable takes tensors and returns tensors (arrays
wrapped, other values as they are).

>>> from ember.aot import aot_function
>>> from ember.aot.ember_backend import ember_compiler
>>> f = aot_function(lambda x: (x * 2 + 1).relu().sum(), ember_compiler)
>>> f(ember.ones(4))
tensor(12.)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ember._tensor import Tensor, wrap
from ember.compiler import array_ops
from ember.compiler.graph_meta import tensor_meta
from ember.compiler.pipeline import compile_lowered, tier
from ember.fx.graph import Graph
from ember.fx.graph_module import GraphModule
from ember.fx.node import Node, map_arg
from ember.ops.registry import OpOverload

__all__ = ["ember_compiler", "lower_traced"]

_ndarray = np.ndarray


def _meta_of(val: Any) -> Any:
    if isinstance(val, Tensor):
        return tensor_meta(tuple(val.shape), tuple(val.stride()), val._edata.dtype)
    if isinstance(val, (tuple, list)):
        return tuple(_meta_of(v) for v in val)
    return None


def _is_view(n: Node) -> bool:
    op = n.target
    if not isinstance(op, OpOverload) or op._schema.view_of is None:
        return False
    val = n.meta.get("val")
    src = n.args[0] if n.args else None
    return (
        isinstance(val, Tensor)
        and isinstance(src, Node)
        and isinstance(src.meta.get("val"), Tensor)
        and src.meta["val"].dtype is val.dtype
    )


def _lower_view(g: Graph, n: Node, env: dict[Node, Node]) -> Node:
    """A view op as ``array_ops.view`` of its root's storage, by its traced geometry (the
    NumPy tier writes a transpose, reshape or broadcast as a NumPy view)."""
    root = n.args[0]
    while isinstance(root, Node) and _is_view(root):
        root = root.args[0]
    base = root.meta["val"]
    val = n.meta["val"]
    item = val.element_size()
    dt = base._edata.dtype
    offset = (val.storage_offset() - base.storage_offset()) * item
    v = g.call_function(
        array_ops.view,
        (env[root], tuple(base.stride()), tuple(val.shape), dt,
         tuple(s * item for s in val.stride()), offset),
        name="view",
    )  # fmt: skip
    v.meta["tensor_meta"] = _meta_of(val)
    v.meta["base"] = (tuple(base.shape), dt)
    return v


def lower_traced(gm: GraphModule) -> GraphModule:
    """The traced graph as a graph over ndarrays (NOTE [ember backend])."""
    g = Graph()
    env: dict[Node, Node] = {}
    root: dict[str, Any] = {}
    i = 0
    for n in gm.graph.nodes:
        if n.op == "placeholder":
            ph = g.placeholder(f"x{i}")
            ph.meta["tensor_meta"] = _meta_of(n.meta.get("val"))
            ph.meta["input"] = i
            i += 1
            env[n] = ph
    # Python numbers in Scalar (or Tensor) arguments become parameters, as the lazy device's do (so
    # fusion can take their ops into a kernel); their values are passed at each call
    scalars: dict[tuple[type, Any], Node] = {}
    values: list[Any] = []
    swapped: dict[Node, tuple[Any, Any]] = {}
    for n in gm.graph.nodes:
        if n.op == "call_function" and isinstance(n.target, OpOverload):
            swapped[n] = _with_params(n, g, scalars, values)
    for n in gm.graph.nodes:
        if n.op == "placeholder":
            continue
        elif n.op == "get_attr":
            value = gm
            for part in str(n.target).split("."):
                value = getattr(value, part)
            if isinstance(value, GraphModule):  # a higher-order operator's subgraph
                env[n] = n
                continue
            name = str(n.target).replace(".", "_")
            root[name] = value._edata if isinstance(value, Tensor) else value
            c = g.get_attr(name)
            c.meta["tensor_meta"] = _meta_of(value)
            # a tensor the user holds (a closure's, a global): written between calls, so
            # read at each call, never folded (NOTE [live constants])
            c.meta["live"] = isinstance(value, Tensor)
            env[n] = c
        elif n.op == "call_function" and getattr(n.target, "namespace", "") == "higher_order":
            run = _OnArrays(n, gm)
            c = g.call_function(run, map_arg(run.args, lambda a: env.get(a, a)), name=n.name)
            c.meta["tensor_meta"] = _meta_of(n.meta.get("val"))
            env[n] = c
        elif n.op == "call_function" and _is_view(n):
            env[n] = _lower_view(g, n, env)
        elif n.op == "call_function":
            args, kwargs = swapped.get(n, (n.args, n.kwargs))
            c = g.call_function(n.target, map_arg(args, lambda a: env.get(a, a)),
                                map_arg(kwargs, lambda a: env.get(a, a)), name=n.name)  # fmt: skip
            c.meta["tensor_meta"] = _meta_of(n.meta.get("val"))
            env[n] = c
        elif n.op == "output":
            outs = []
            for o in n.args[0] if isinstance(n.args[0], (tuple, list)) else (n.args[0],):
                if isinstance(o, Node):
                    v = env[o]
                    if v.op == "placeholder" and str(o.target).startswith("tangents"):
                        v = g.call_function(array_ops.copy, (v,), name="copy")
                        v.meta["tensor_meta"] = env[o].meta.get("tensor_meta")
                    outs.append(v)
                else:
                    outs.append(o)
            g.output(tuple(outs))
        else:
            raise NotImplementedError(f"the ember backend compiles no {n.op} nodes ({n.name})")
    lowered = GraphModule(root, g)
    lowered.meta["arrays"] = True
    lowered.meta["param_values"] = values
    return lowered


class _OnArrays:
    """A higher-order operator's node (``cond``, ``while_loop``: NOTE [higher-order ops in
    graphs]) in a lowered graph: called on arrays, it calls the operator on tensors with
    each subgraph compiled by this backend, and returns the arrays of its results."""

    def __init__(self, n: Node, gm: GraphModule) -> None:
        self.op = n.target
        self.__name__ = self.op.name()  # type: ignore[union-attr]
        #: the node's arguments without its subgraphs, and where each compiled one goes
        self.args = tuple(a for a in n.args if not _is_subgraph(a, gm))
        self.slots = {
            k: _compiled(getattr(gm, str(a.target)))
            for k, a in enumerate(n.args)
            if _is_subgraph(a, gm)
        }

    def __call__(self, *args: Any) -> tuple[Any, ...]:
        rest = iter(args)
        full = [
            self.slots[k] if k in self.slots else _tensors(next(rest))
            for k in range(len(self.args) + len(self.slots))
        ]
        out = self.op(*full)  # type: ignore[operator]
        return tuple(o._edata if isinstance(o, Tensor) else o for o in out)


def _is_subgraph(a: Any, gm: GraphModule) -> bool:
    return (
        isinstance(a, Node)
        and a.op == "get_attr"
        and isinstance(getattr(gm, str(a.target), None), GraphModule)
    )


def _tensors(a: Any) -> Any:
    if type(a) is _ndarray:
        return wrap(a)
    if isinstance(a, (tuple, list)):
        return tuple(_tensors(v) for v in a)
    return a


def _compiled(sub: GraphModule) -> Callable[..., Any]:
    """A subgraph compiled by this backend, called with tensors; it returns a tuple, or a
    lone value as the subgraph does (a loop's condition)."""
    run = ember_compiler(sub, None)
    (out,) = (n for n in sub.graph.nodes if n.op == "output")
    lone = not isinstance(out.args[0], (tuple, list))
    if lone:
        return lambda *a: run(list(a))[0]
    return lambda *a: run(list(a))


def _with_params(
    n: Node, g: Graph, scalars: dict[tuple[type, Any], Node], values: list[Any]
) -> tuple[Any, Any]:
    """``n``'s arguments with each Python number in a Scalar parameter replaced by a
    parameter placeholder (one per distinct value and type)."""
    schema = n.target._schema  # type: ignore[union-attr]

    def param(v: Any) -> Any:
        key = (type(v), v)
        ph = scalars.get(key)
        if ph is None:
            ph = g.placeholder(f"p{len(values)}")
            ph.meta["param"] = type(v)
            scalars[key] = ph
            values.append(v)
        return ph

    def fits(a: Any, v: Any) -> bool:
        return (
            a.type.base in ("Scalar", "Tensor")
            and not a.type.is_list
            and type(v) in (int, float, bool)
        )

    args = list(n.args)
    for k, (a, v) in enumerate(zip(schema.positional, n.args, strict=False)):
        if fits(a, v):
            args[k] = param(v)
    kwargs = dict(n.kwargs)
    for a in schema.kwarg_only:
        if a.name in kwargs and fits(a, kwargs[a.name]):
            kwargs[a.name] = param(kwargs[a.name])
    return tuple(args), kwargs


def ember_compiler(
    gm: GraphModule, example_inputs: Any, *, tier_name: str | None = None
) -> Callable[..., Any]:
    """Compile a traced graph with ember's compiler (NOTE [ember backend]); the callable
    takes and returns tensors, boxed (one list of arguments)."""
    lowered = lower_traced(gm)
    fn, source = compile_lowered(lowered, tier_name or tier())

    params = lowered.meta["param_values"]

    def run(args: list[Any]) -> tuple[Any, ...]:
        arrays = [a._edata if isinstance(a, Tensor) else a for a in args]
        args.clear()
        outs = fn(*arrays, *params)
        return tuple([wrap(o) if type(o) is _ndarray else o for o in outs])

    run._boxed_call = True  # type: ignore[attr-defined]
    run.source = source  # type: ignore[attr-defined]
    run.graph = lowered  # type: ignore[attr-defined]
    return run
