"""Recording without the Meta rule: per-op recipes keyed by the call's signature.

NOTE [recording fast path]
Recording a call runs the op's Meta rule on proxies of its arguments (``recorder.record``):
about 20 us of Python. For an op that writes nothing, everything recording produces (the
node's key and argument template, each output's shape, strides and dtype, which outputs
are views of which argument) depends only on the call's *signature*: each tensor
argument's shape, strides, storage offset, dtype and whether it is a view, which arguments
are the same tensor, the types of the Python numbers in Scalar and float slots (their values
are graph parameters), and the value of every other argument. The first call with a
signature records the slow way and keeps a *recipe*; later calls with that signature build
the node and the outputs from it, without proxies or the Meta rule.

What the recipe skips is the Meta rule's checks, which a signature that passed them once
passes again, except checks of a parameter's value (an integer tensor raised to a negative
Python int): those errors are raised by the cpu kernel when the graph runs. Ops that write
(the Functionalize key leaves few for the Lazy key: NOTE [functionalize]) and ops without a
tensor argument (factories, whose shapes may come from the values of Scalar arguments)
always record the slow way.
"""

from __future__ import annotations

from typing import Any
from weakref import ref

import numpy as np

from ember._tensor import Tensor, wrap_shape_only, wrap_view
from ember.compiler import metrics
from ember.dispatch import dispatcher
from ember.dispatch.dispatcher import KIND_BOXED, Kernel
from ember.dispatch.keys import LAZY_KEYS, DispatchKey
from ember.lazy import recorder
from ember.lazy._array import LazyArray
from ember.lazy.executor import LIVE, current, sync_arrays
from ember.lazy.ir import Node, data_node
from ember.lazy.recorder import _numeric, _scalar, lazy_fallback, lazy_tensor, record
from ember.ops.registry import OpOverload
from ember.ops.writes import UNDECLARED_WRITES

#: recipes kept per op before the oldest are dropped (a program with many shapes)
MAX_RECIPES = 512
_RECORDED = metrics.tally("ops_recorded")
_LIVE = LIVE._refs
_HASHABLE = (int, float, bool, str, type(None))


class Recipe:
    """What recording a call of one signature produces (NOTE [recording fast path])."""

    __slots__ = ("key", "args", "kwargs", "metas", "n_out", "result")

    def __init__(self, node: Node | None, result: Any) -> None:
        self.key = node.key if node is not None else None
        self.args = node.args if node is not None else ()
        self.kwargs = node.kwargs if node is not None else {}
        self.metas = node.meta if node is not None else ()
        self.n_out = node.n_out if node is not None else 0
        self.result = result


def _signature(
    x: Any, numeric: int, tensors: list[Tensor], params: list[Any], lazy: list[bool]
) -> Any:
    """The signature of one argument; notes its tensors (in slot order) and parameters.
    ``numeric``: bit 1 set for a Scalar, float or Tensor argument (a Python number there is
    a parameter), bit 2 for a number-only one (Scalar, float, int, bool: a tensor there is
    read by the slow path). Raises ``TypeError`` for an argument no signature can hold."""
    if isinstance(x, Tensor):
        if numeric & 2:
            raise TypeError
        for j, t in enumerate(tensors):
            if t is x:
                return j
        tensors.append(x)
        d = x._edata
        if type(d) is LazyArray:
            lazy[0] = True
            return (d.shape, d.strides, d.dtype, d.offset, d.base is None)
        if x.ndim:  # a cpu tensor with dimensions: only some ops take one (slow path)
            raise TypeError
        return ("cpu", d.dtype)
    tx = type(x)
    if numeric & 1 and (tx is int or tx is float or tx is bool):
        params.append(x)
        return tx
    if tx is list or tx is tuple:
        return (tx, tuple(_signature(e, 0, tensors, params, lazy) for e in x))
    if tx in _HASHABLE:
        return (tx, x)
    hash(x)  # devices, dtypes, memory formats; TypeError for the unhashable
    return x


def _kind(a: Any) -> int:
    """The ``numeric`` code of a schema argument for ``_signature``."""
    return (2 if _scalar(a) else 0) | (1 if _numeric(a) else 0)


class Signature:
    """How one op's calls are keyed (NOTE [recording fast path]): which of its arguments are
    numbers (parameters) and which take no tensor."""

    __slots__ = ("numeric", "numeric_kw")

    def __init__(self, op: OpOverload) -> None:
        schema = op._schema
        self.numeric = tuple(_kind(a) for a in schema.positional)
        self.numeric_kw = {a.name: _kind(a) for a in schema.arguments if _kind(a)}

    def of(
        self, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> tuple[Any, list[Tensor], list[Any], bool]:
        """(signature, tensors in slot order, parameters, whether a tensor is lazy); raises
        ``TypeError`` for a call no signature can hold."""
        tensors: list[Tensor] = []
        params: list[Any] = []
        flag = [False]  # set by _signature when it meets a lazy tensor
        lazy = False
        numeric = self.numeric
        n = len(numeric)
        parts = []
        i = 0
        for x in args:
            tx = type(x)
            if tx is Tensor and (d := x._edata).__class__ is LazyArray:
                # the common cases inline (as _signature does them): a lazy tensor...
                for j, t in enumerate(tensors):
                    if t is x:  # (identity: == on tensors is an op)
                        parts.append(j)
                        break
                else:
                    tensors.append(x)
                    lazy = True
                    parts.append((d.shape, d.strides, d.dtype, d.offset, d.base is None))
            elif (tx is int or tx is float) and i < n and numeric[i] & 1:
                params.append(x)  # ...and a number in a Scalar, float or Tensor slot
                parts.append(tx)
            else:
                parts.append(_signature(x, numeric[i] if i < n else 0, tensors, params, flag))
            i += 1
        if kwargs:
            kw = self.numeric_kw
            for k, v in kwargs.items():
                tv = type(v)
                if (tv is float or tv is int) and kw.get(k, 0) & 1:  # alpha=-lr, inline
                    params.append(v)
                    parts.append((k, tv))
                else:
                    parts.append((k, _signature(v, kw.get(k, 0), tensors, params, flag)))
        return tuple(parts), tensors, params, lazy or flag[0]


class Recorder:
    """The Lazy key's kernel for one op: a recipe per signature (NOTE [recording fast
    path])."""

    __slots__ = ("op", "signature", "recipes", "hits")

    def __init__(self, op: OpOverload) -> None:
        self.op = op
        self.signature = Signature(op)
        self.recipes: dict[Any, Recipe] = {}
        self.hits = 0  # calls recorded from a recipe

    def __call__(
        self, op: OpOverload, ks: int, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> Any:
        try:
            sig, tensors, params, lazy = self.signature.of(args, kwargs)
            recipe = self.recipes.get(sig)
        except TypeError:
            return lazy_fallback(op, ks, args, kwargs)
        if recipe is None:
            if not lazy:
                return lazy_fallback(op, ks, args, kwargs)
            learned: list[Any] = []
            out = record(op, args, kwargs, learned)
            if learned:
                if len(self.recipes) >= MAX_RECIPES:
                    self.recipes.clear()
                self.recipes[sig] = Recipe(*learned[0])
            return out
        _RECORDED[0] += 1
        self.hits += 1
        node = None
        if recipe.key is not None:
            values = []
            size = 1  # NOTE [graph size]
            for t in tensors:
                d = t._edata
                if d.__class__ is LazyArray:
                    v = d.node if d.base is None and d.node is not None else current(d)
                else:  # a 0-dim cpu tensor: a snapshot of its value now
                    v = (data_node(_snapshot(t)), 0)
                values.append(v)
                m = v[0]
                if m.value is None and m.kind != "data":
                    size += m.size
            node = Node.__new__(Node)
            node.kind, node.op, node.args, node.kwargs = "call", op, recipe.args, recipe.kwargs
            node.inputs, node.params, node.written = tuple(values), tuple(params), ()
            node.n_out, node.meta, node.key = recipe.n_out, recipe.metas, recipe.key
            node.value, node.size = None, size
        desc = recipe.result
        if desc[0] == "fresh":  # one new tensor: the common case, inline
            arr = LazyArray.pending(desc[2], desc[4], desc[3], (node, desc[1]))  # type: ignore[arg-type]
            _LIVE[id(arr)] = ref(arr)  # LIVE.add(arr), inline
            out = wrap_shape_only(arr, LAZY_KEYS)
        else:
            out = _build(desc, node, tensors)
        if node is not None and node.size > recorder.GRAPH_LIMIT:
            sync_arrays(_pending(out, node), "graph_size")
        return out


def _snapshot(t: Tensor) -> Any:
    return np.array(t._edata, copy=True, order="K")


def _build(desc: Any, node: Node | None, tensors: list[Tensor]) -> Any:
    """The result a recipe describes, over a new node's outputs."""
    kind = desc[0]
    if kind == "fresh":
        _, k, shape, strides, dtype = desc
        return lazy_tensor(LazyArray.pending(shape, dtype, strides, (node, k)))  # type: ignore[arg-type]
    if kind == "view":
        _, slot, shape, strides, offset, dtype = desc
        t = tensors[slot]
        root = t if t._base is None else t._base
        return wrap_view(root, LazyArray.view_of(root._edata, shape, dtype, strides, offset))
    if kind == "input":
        return tensors[desc[1]]
    if kind == "value":
        return desc[1]
    parts = [_build(d, node, tensors) for d in desc[1]]
    if kind == "list":
        return parts
    if kind == "tuple":
        return tuple(parts)
    return kind(*parts)  # a named tuple's class


def _pending(out: Any, node: Node) -> list[LazyArray]:
    """The arrays of ``out`` that hold ``node``'s outputs."""
    if isinstance(out, Tensor):
        d = out._edata
        return [d] if type(d) is LazyArray and d.node is not None and d.node[0] is node else []
    if isinstance(out, (list, tuple)):
        return [a for o in out for a in _pending(o, node)]
    return []


def recipe_hits(op: OpOverload) -> int | None:
    """How many calls of ``op`` were recorded from a recipe; None when the Lazy key does
    not record ``op`` through recipes (a decomposition, a write, a factory)."""
    fn = op.entry(DispatchKey.Lazy)[0]
    fn = getattr(fn, "recorder", fn)  # a kernel that records through one (kernels.py)
    return fn.hits if isinstance(fn, Recorder) else None


def specialize(op: OpOverload) -> Kernel:
    """A recipe-keeping kernel for an op that writes nothing and takes a tensor; the
    fallback itself for the others."""
    schema = op._schema
    has_tensor = any(a.type.base == "Tensor" for a in schema.arguments)
    dynamic = "dynamic_output_shape" in op.tags  # runs on the cpu: nothing to keep
    if schema.is_mutable or op in UNDECLARED_WRITES or not has_tensor or dynamic:
        return lazy_fallback, KIND_BOXED
    return Recorder(op), KIND_BOXED


dispatcher.set_fallback(DispatchKey.Lazy, lazy_fallback, specialize=specialize)
