"""``make_fx``: trace a function into an ``ember.fx`` graph of the ops that reach the
Python key, as ``torch.fx.experimental.proxy_tensor``.

>>> from ember.fx.experimental.proxy_tensor import make_fx
>>> gm = make_fx(lambda x: (x * 2).relu())(ember.ones(3))
>>> print(gm.code.strip())
def forward(self, x_1):
    mul = ember.ops.aten.mul.Tensor(x_1, 2);  x_1 = None
    relu = ember.ops.aten.relu.default(mul);  mul = None
    return relu

# NOTE [make_fx]
The tracer is a ``TorchDispatchMode`` (``ProxyTorchDispatchMode``), so it sees what
``__torch_dispatch__`` code sees: every op below autograd, the parts of composite ops, the
backward's ops when ``autograd.grad`` runs inside the traced function, factories and random
ops. Each op runs for real (on real tensors, or on fake ones under ``FakeTensorMode`` with
``tracing_mode="fake"``) and is recorded as a ``call_function`` node whose target is the
``OpOverload``; the tracer keeps, per tensor it has seen, the node that computes it
(``_Tracker``): inputs are placeholders named as PyTorch's (``x_1`` for a function's
parameter ``x``, ``arg<i>_1`` for ``*args`` or nested arguments), a tensor the trace did not make (a
global, a closure's) is a constant (``get_attr`` of ``_tensor_constant<i>``, or
``_param_constant<i>`` for a parameter), an op with
several outputs gets ``getitem`` nodes when an output is used. An in-place op's tensor is
computed by its node from then on.

Reading a traced tensor's values (``bool(x.sum() > 0)``, ``item()``, ``tolist()``) raises
PyTorch's error naming ``aten._local_scalar_dense``: the graph cannot branch on data
(``DataDependentTracingError``, a ``RuntimeError``). Shapes are Python ints, so control flow
on them is specialized into the graph.

With ``_functionalize=True`` (what AOTAutograd traces with: NOTE [functional tracing]) a
write becomes its functional op, through the Functionalize key's rewrite (``rewrite`` in
``ember/ops/functional_rewrite.py``, the one the lazy device's key runs), and the written tensor
is computed by that node from then on.
"""

from __future__ import annotations

import inspect
import operator
from collections.abc import Callable
from typing import Any

import numpy as np

from ember import _tensor as _tensor_mod
from ember._graph_break import USER_CODE, side_effect
from ember._memory_format import contiguous_format as ember_contiguous
from ember._shape_only import ShapeOnlyArray
from ember._subclasses.fake_tensor import (
    DynamicOutputShapeException,
    FakeTensor,
    FakeTensorMode,
)
from ember._tensor import Tensor
from ember.dispatch import marks, state
from ember.dtypes import int64 as _int64
from ember.fx.experimental._pre_dispatch import PreDispatchTracer
from ember.fx.graph import Graph
from ember.fx.graph_module import GraphModule
from ember.fx.node import Node
from ember.fx.passes.shape_prop import extract_tensor_metadata
from ember.nn.parameter import Parameter
from ember.ops.functional_rewrite import functional_of, metadata_view_of, new_values, rewrite
from ember.ops.registry import OpOverload, ops
from ember.ops.writes import STATE_FUNCTIONAL, UNDECLARED_WRITES, written_tensors
from ember.utils._python_dispatch import TorchDispatchMode
from ember.utils._pytree import tree_flatten, tree_map, tree_unflatten

__all__ = [
    "DataDependentTracingError",
    "ProxyTorchDispatchMode",
    "get_isolated_graphmodule",
    "make_fx",
]

aten = ops.aten
#: what reading one value of a tensor without data dispatches (``item()`` of a fake tensor)
_LIFT_FRESH, _LIFT_FRESH_COPY = aten.lift_fresh.default, aten.lift_fresh_copy.default
_LOCAL_SCALAR: Any = getattr(getattr(aten, "_local_scalar_dense", None), "default", None)


class DataDependentTracingError(RuntimeError):
    """A traced function read a traced tensor's values (data-dependent control flow)."""


_DATA_ERROR = (
    "It appears that you're trying to get value out of a tracing tensor with "
    "aten._local_scalar_dense.default - erroring out! It's likely that this is caused by "
    "data-dependent control flow or similar. It may be possible to trace this with dynamic "
    "shapes; try setting tracing_mode='symbolic' in your make_fx call."
)


class _Getitem:
    """An output of a multi-output node, made a ``getitem`` node when first used."""

    __slots__ = ("parent", "index", "node")

    def __init__(self, parent: Any, index: int) -> None:
        self.parent = parent
        self.index = index
        self.node: Node | None = None


class _Tracker:
    """The state of one trace: the graph, and the node computing each tensor seen."""

    def __init__(
        self, decomposition_table: dict[Any, Callable[..., Any]], functionalize: bool
    ) -> None:
        self.graph = Graph()
        self.root: dict[str, Any] = {}
        self.decomposition_table = decomposition_table
        self.functionalize = functionalize
        #: id(tensor) -> [tensor, node or _Getitem, base version it was made at]
        self.of: dict[int, list[Any]] = {}
        #: id(base) -> number of writes into it through views (functional tracing)
        self.base_version: dict[int, int] = {}
        self.constants: dict[int, Node] = {}
        #: id(object an op returned as ``Any``) -> (the object, its node)
        self.opaque: dict[int, tuple[Any, Node]] = {}
        self.inputs: set[int] = set()
        #: id(non-contiguous base written through a view) -> (the base's node then, the
        #: node of its storage span, the span's first storage position)
        self.storage_of: dict[int, tuple[Node, Node, int]] = {}
        #: a real-mode trace that records scalar reads (``item()``, ``bool()``...) as
        #: ``_local_scalar_dense`` nodes and goes on with the value (NOTE [graph break
        #: segments] in ``ember/aot/segments.py``); ops whose output shape depends on values
        #: still raise
        self.allow_reads = False
        #: the values of those reads, in order
        self.read_values: list[Any] = []
        #: writes are checked (``check_write``) in a higher-order operator's subgraph too
        #: (NOTE [higher-order ops in graphs])
        self.check_inputs = False

    # values -> nodes

    def bind(self, t: Tensor, ref: Any) -> None:
        base = self.base_of(t)
        self.of[id(t)] = [t, ref, self.base_version.get(id(base), 0) if base is not t else 0]

    def tracks(self, t: Any) -> bool:
        entry = self.of.get(id(t))
        return entry is not None and entry[0] is t

    def node_of(self, t: Tensor) -> Node:
        entry = self.of.get(id(t))
        if entry is None or entry[0] is not t:
            return self.constant(t)
        ref = entry[1]
        if self.functionalize:
            base = self.base_of(t)
            if base is not t and entry[2] != self.base_version.get(id(base), 0):
                # NOTE [functional tracing]: the base was written through another view since
                # this view's node was made: the view is re-derived from the base's value
                node = self.regenerate_view(t, base)
                entry[1], entry[2] = node, self.base_version.get(id(base), 0)
                return node
        return self.resolve(ref)

    def resolve(self, ref: Any) -> Node:
        if isinstance(ref, Node):
            return ref
        if ref.node is None:
            parent = self.resolve(ref.parent)
            ref.node = self.graph.call_function(operator.getitem, (parent, ref.index))
        return ref.node

    def constant(self, t: Tensor) -> Node:
        node = self.constants.get(id(t))
        if node is None:  # parameters and other tensors counted apart, as PyTorch names them
            if USER_CODE[0] and t.requires_grad and state.local.grad_enabled:
                side_effect(  # NOTE [compile side effects]
                    f"the function reads a tensor of shape {tuple(t.shape)} that requires "
                    "grad from outside its arguments (a global, a closure's or a module "
                    "attribute's): its gradient would not reach it"
                )
            param = isinstance(t, Parameter) or getattr(t, "_is_param", False)
            kind = "param" if param else "tensor"
            name = f"_{kind}_constant{sum(1 for n in self.root if n.startswith(f'_{kind}_'))}"
            self.root[name] = t
            node = self.graph.get_attr(name)
            node.meta["val"] = _snapshot(t)
            self.constants[id(t)] = node
            self.of[id(t)] = [t, node, 0]
        return node

    def check_write(self, func: Any, args: Any, kwargs: dict[str, Any]) -> None:
        """NOTE [compile side effects]: ``func`` must write only tensors the trace received
        or made (and views of them)."""
        for w in written_tensors(func, args, kwargs):
            if not isinstance(w, Tensor):
                continue
            base = self.base_of(w)
            if not self.tracks(w) or id(w) in self.constants or id(base) in self.constants:
                side_effect(
                    f"{func} writes a tensor of shape {tuple(w.shape)} the function did not "
                    "receive as an argument (a global, a closure's or a module attribute's, "
                    "as optimizer.step() writes the parameters)"
                )

    def arg(self, x: Any) -> Any:
        if isinstance(x, Tensor):
            return self.node_of(x)
        found = self.opaque.get(id(x))
        return found[1] if found is not None and found[0] is x else x

    def base_of(self, t: Tensor) -> Tensor:
        """The tensor whose storage ``t`` views, when the trace knows it; else ``t``."""
        b = t._base
        if b is not None and self.tracks(b):
            return b
        return t

    # recording

    def record(self, func: OpOverload, args: Any, kwargs: dict[str, Any], out: Any) -> Node:
        if func is _LIFT_FRESH:  # a constant's alias: a copy in the graph, as PyTorch's
            func = _LIFT_FRESH_COPY
        pargs, pkwargs = tree_map(self.arg, (args, kwargs))
        node = self.graph.call_function(
            func, tuple(pargs), pkwargs, name=func.overloadpacket.__name__
        )
        self.track(out, node)
        returns = func._schema.returns
        if len(returns) == 1 and returns[0].type.base == "Any" and out is not None:
            # an opaque object (a profiler range's handle): later ops take it from this node
            self.opaque[id(out)] = (out, node)
        return node

    def track(self, out: Any, ref: Any) -> None:
        if isinstance(out, Tensor):
            self.bind(out, ref)
            if isinstance(ref, Node):
                ref.meta["val"] = _snapshot(out)
                ref.meta["tensor_meta"] = extract_tensor_metadata(ref.meta["val"])
        elif isinstance(out, (tuple, list)):
            if isinstance(ref, Node):
                ref.meta["val"] = tuple(_snapshot(o) if isinstance(o, Tensor) else o for o in out)
            for i, o in enumerate(out):
                if isinstance(o, (Tensor, tuple, list)):
                    self.track(o, _Getitem(ref, i))

    def regenerate_view(self, t: Tensor, base: Tensor) -> Node:
        storage = self.storage_of.get(id(base))
        if storage is not None and storage[0] is self.of[id(base)][1]:
            # a non-contiguous base written through a view: its views are read from the
            # storage node (NOTE [functional tracing])
            _, node, lo = storage
            view = self.graph.call_function(
                aten.as_strided.default,
                (node, list(t.shape), list(t.stride()), t.storage_offset() - lo),
                name="as_strided",
            )
            view.meta["val"] = _snapshot(t, t.storage_offset() - lo)
            return view
        offset = t.storage_offset() - base.storage_offset()
        node = self.graph.call_function(
            aten.as_strided.default,
            (self.node_of(base), list(t.shape), list(t.stride()), offset),
            name="as_strided",
        )
        node.meta["val"] = _snapshot(t)
        return node

    def add(
        self, target: Any, args: tuple[Any, ...], name: str, val: Tensor,
        kwargs: dict[str, Any] | None = None,
    ) -> Node:  # fmt: skip
        """A node the functional tracing adds, with its value's metadata (as every node
        has: compilers read it)."""
        node = self.graph.call_function(target, args, kwargs or {}, name=name)
        node.meta["val"] = val
        node.meta["tensor_meta"] = extract_tensor_metadata(val)
        return node

    def flatten(self, node: Node, like: Tensor) -> Node:
        """``node``'s values (those of ``like``'s shape) as a 1-D node, through a
        contiguous clone when its layout is not contiguous."""
        val = node.meta.get("val")
        offset = 0
        if isinstance(val, Tensor) and val.is_contiguous():
            offset = val.storage_offset()
        else:  # the functional op that last wrote it may lay its result out otherwise
            node = self.add(aten.clone.default, (node,), "clone",
                            _contiguous_val(tuple(like.shape), like),
                            {"memory_format": ember_contiguous})  # fmt: skip
        flat = _contiguous_val((like.numel(),), like, offset)
        return self.add(aten.view.default, (node, [-1]), "view", flat)

    def positions(self, t: Tensor, size: int, offset: int) -> Node:
        """A node of the positions, in a 1-D space of ``size`` elements, of ``t``'s elements
        (row-major) when ``t``'s first element is at ``offset``: ``as_strided`` of an
        ``arange`` with ``t``'s shape and strides, made contiguous and flat. Computed in the
        graph, not held as a constant: a fake trace of the graph has no real tensor to meet
        (NOTE [functional tracing])."""
        like = _contiguous_val((size,), t, dtype=np.dtype(np.int64))
        device = t.device
        space = self.add(aten.arange.default, (size,), "arange", like,
                         {"dtype": _int64, "device": device})  # fmt: skip
        shape = tuple(t.shape)
        view = self.add(aten.as_strided.default, (space, list(shape), list(t.stride()), offset),
                        "as_strided", _strided_val(shape, t.stride(), offset, like))  # fmt: skip
        dense = self.add(aten.clone.default, (view,), "clone", _contiguous_val(shape, like),
                         {"memory_format": ember_contiguous})  # fmt: skip
        return self.add(aten.view.default, (dense, [-1]), "view",
                        _contiguous_val((t.numel(),), like))  # fmt: skip

    def rebind_written(self, t: Tensor, new: Node) -> None:
        """NOTE [functional tracing]: ``t`` is computed by ``new`` from now on; a view's base
        is computed by the base with the view's elements replaced."""
        base = self.base_of(t)
        if base is not t:
            if not base.is_contiguous():
                self.rebind_through_storage(t, base, new)
                return
            off = t.storage_offset() - base.storage_offset()
            vals = self.flatten(new, t)
            if off == 0 and t.numel() == base.numel() and t.is_contiguous():
                # a reshaping view (``view(-1)``, ``unsqueeze``): the base is its new values
                put = vals
            else:
                idx = self.positions(t, base.numel(), off)
                flat = self.flatten(self.node_of(base), base)
                put = self.add(aten.index_put.default, (flat, [idx], vals), "index_put",
                               _contiguous_val((base.numel(),), base))  # fmt: skip
            back = self.add(aten.view.default, (put, list(base.shape)), "view", _snapshot(base))
            self.base_version[id(base)] = self.base_version.get(id(base), 0) + 1
            self.bind(base, back)
        self.bind(t, new)

    def rebind_through_storage(self, t: Tensor, base: Tensor, new: Node) -> None:
        """NOTE [functional tracing]: a write into view ``t`` of a non-contiguous ``base``.
        The base's storage span becomes a node (a 1-D tensor: the base's values put at
        their storage positions), the view's new values are put into it, and the base and
        its other views are ``as_strided`` views of it with their traced strides."""
        pb = _storage_positions(base)
        if len(np.unique(pb)) != len(pb):
            raise NotImplementedError(
                "functional tracing: a write through a view of a tensor whose elements "
                f"overlap in memory (shape {tuple(base.shape)}, strides {base.stride()}) is "
                "not supported; clone() it first"
            )
        lo = int(pb.min()) if len(pb) else 0
        size = int(pb.max()) - lo + 1 if len(pb) else 0
        storage = self.storage_of.get(id(base))
        if storage is not None and storage[0] is self.of[id(base)][1]:
            span = storage[1]
        else:
            zeros = self.add(
                aten.zeros.default, ([size],), "zeros", _contiguous_val((size,), base),
                {"dtype": base.dtype, "device": base.device},
            )  # fmt: skip
            idx = self.positions(base, size, base.storage_offset() - lo)
            span = self.add(
                aten.index_put.default, (zeros, [idx], self.flatten(self.node_of(base), base)),
                "index_put", _contiguous_val((size,), base),
            )  # fmt: skip
        idx_t = self.positions(t, size, t.storage_offset() - lo)
        span = self.add(aten.index_put.default, (span, [idx_t], self.flatten(new, t)),
                        "index_put", _contiguous_val((size,), base))  # fmt: skip
        back = self.add(
            aten.as_strided.default,
            (span, list(base.shape), list(base.stride()), base.storage_offset() - lo),
            "as_strided", _snapshot(base, base.storage_offset() - lo),
        )  # fmt: skip
        self.base_version[id(base)] = self.base_version.get(id(base), 0) + 1
        self.bind(base, back)
        self.storage_of[id(base)] = (back, span, lo)
        self.bind(t, new)


def _storage_positions(t: Tensor) -> np.ndarray:
    """The storage position of each element of ``t``, in row-major order."""
    pos = np.full(tuple(t.shape), t.storage_offset(), dtype=np.int64)
    for d, (n, s) in enumerate(zip(t.shape, t.stride(), strict=True)):
        shape = [1] * t.dim()
        shape[d] = n
        pos = pos + (np.arange(n, dtype=np.int64) * s).reshape(shape)
    return pos.reshape(-1)


def _contiguous_val(
    shape: tuple[int, ...], like: Tensor, offset: int = 0, dtype: np.dtype[Any] | None = None
) -> Tensor:
    """A contiguous fake tensor of ``shape`` and ``like``'s dtype (or ``dtype``) and device
    (the value of a node the functional tracing adds)."""
    strides: list[int] = []
    acc = 1
    for n in reversed(shape):
        strides.append(acc)
        acc *= max(n, 1)
    return _strided_val(shape, tuple(reversed(strides)), offset, like, dtype)


def _strided_val(
    shape: tuple[int, ...],
    strides: tuple[int, ...],
    offset: int,
    like: Tensor,
    dtype: np.dtype[Any] | None = None,
) -> Tensor:
    """A fake tensor of this geometry with ``like``'s dtype (or ``dtype``) and device."""
    np_dtype = like._edata.dtype if dtype is None else dtype
    arr = ShapeOnlyArray(shape, np_dtype, tuple(strides), offset, like.device)
    f = object.__new__(FakeTensor)
    f._edata = arr
    marks.mark_fake(f)
    f.fake_mode = _SNAPSHOT_MODE
    return f


def _snapshot(t: Tensor, storage_offset: int | None = None) -> Tensor:
    """A fake tensor with ``t``'s metadata now (what ``node.meta["val"]`` holds; a new one
    even for a fake ``t``, whose metadata a later in-place op like ``unsqueeze_`` changes);
    ``storage_offset`` replaces its offset."""
    off = t.storage_offset() if storage_offset is None else storage_offset
    arr = ShapeOnlyArray(tuple(t.shape), t._edata.dtype, t.stride(), off, t.device)
    f = object.__new__(FakeTensor)
    f._edata = arr
    marks.mark_fake(f)
    f.fake_mode = _SNAPSHOT_MODE
    if t.requires_grad and t.dtype.is_floating_point:
        f.requires_grad_(True)
    return f


_SNAPSHOT_MODE = FakeTensorMode()


class ProxyTorchDispatchMode(TorchDispatchMode):
    """The tracer: records each op that reaches it into the tracker's graph (NOTE [make_fx])."""

    def __init__(self, tracker: _Tracker) -> None:
        super().__init__()
        self.tracker = tracker

    def __torch_dispatch__(
        self, func: Any, types: Any, args: Any = (), kwargs: dict[str, Any] | None = None
    ) -> Any:
        kwargs = kwargs or {}
        for t in types:
            if not issubclass(t, FakeTensor):
                return NotImplemented  # a subclass's own handler runs first, then its parts
        tr = self.tracker
        if func is _LOCAL_SCALAR and tr.tracks(args[0]) and id(args[0]) not in tr.constants:
            if not tr.allow_reads:
                raise DataDependentTracingError(f"{_DATA_ERROR} ({func} was called)")
            out = func(*args, **kwargs)
            tr.record(func, args, kwargs, out)
            tr.read_values.append(out)
            return out
        if tr.allow_reads and "dynamic_output_shape" in func.tags:
            raise DynamicOutputShapeException(func)
        if func._schema.is_mutable and (USER_CODE[0] or tr.check_inputs):
            tr.check_write(func, args, kwargs)
        decomp = tr.decomposition_table.get(func)
        if decomp is not None:
            with self:
                out = decomp(*args, **kwargs)
            if out is not NotImplemented:
                return out
        if tr.functionalize and (func._schema.is_mutable or func in STATE_FUNCTIONAL):
            return self.functional(func, args, kwargs)
        out = func(*args, **kwargs)
        tr.record(func, args, kwargs, out)
        return out

    def functional(self, func: OpOverload, args: Any, kwargs: dict[str, Any]) -> Any:
        """NOTE [functional tracing]: a write recorded as its functional op."""
        tr = self.tracker
        written = written_tensors(func, args, kwargs)
        if func in STATE_FUNCTIONAL:
            return self.state_functional(func, args, kwargs, written)
        functional = functional_of(func)
        if functional is not None:  # NOTE [functional rewrite], driven by the trace
            done: list[Any] = []

            def run(op: OpOverload, a: tuple[Any, ...], k: dict[str, Any]) -> Any:
                new = op(*a, **k)
                tr.record(op, a, k, new)
                done.append(func(*args, **kwargs))  # the values (PyTorch's checks, versions)
                return new

            def rebind(t: Tensor, v: Tensor, i: int) -> None:
                n = tr.resolve(tr.of[id(v)][1])
                if v.dtype is not t.dtype or tuple(v.shape) != tuple(t.shape):
                    n = tr.graph.call_function(
                        aten._to_copy.default, (n,), {"dtype": t.dtype}, name="_to_copy"
                    )
                    if tuple(v.shape) != tuple(t.shape):
                        n = tr.graph.call_function(
                            aten.expand.default, (n, list(t.shape)), name="expand"
                        )
                    n = tr.graph.call_function(aten.clone.default, (n,), name="clone")
                n.meta["val"] = _snapshot(t)
                tr.rebind_written(t, n)

            rewrite(func, functional, args, kwargs, written, run, rebind)
            return done[0]
        if func._schema.is_inplace and not written_tensors(func, args, kwargs)[1:]:
            view_op = metadata_view_of(func)
            if view_op is not None:  # a metadata write (t_, transpose_, squeeze_): its view
                out = func(*args, **kwargs)
                node = tr.graph.call_function(
                    view_op,
                    (tr.node_of(args[0]), *tree_map(tr.arg, tuple(args[1:]))),
                    tree_map(tr.arg, kwargs),
                    name=view_op.overloadpacket.__name__,
                )
                node.meta["val"] = _snapshot(args[0])
                tr.bind(args[0], node)
                return out
        # no functional counterpart (or writes the schema leaves undeclared): the op writes
        # clones, which stand for what it wrote from then on
        clones: dict[int, Node] = {}
        for t in written + [w for w in _undeclared(func, args, kwargs) if w is not None]:
            if id(t) not in clones:
                c = tr.graph.call_function(aten.clone.default, (tr.node_of(t),), name="clone")
                c.meta["val"] = _snapshot(t)
                clones[id(t)] = c
        pargs, pkwargs = tree_map(
            lambda x: clones[id(x)] if isinstance(x, Tensor) and id(x) in clones else tr.arg(x),
            (args, kwargs),
        )
        out = func(*args, **kwargs)
        node = tr.graph.call_function(
            func, tuple(pargs), pkwargs, name=func.overloadpacket.__name__
        )
        for t in written:
            tr.rebind_written(t, clones[id(t)])
        for t in _undeclared(func, args, kwargs):
            if t is not None:
                tr.rebind_written(t, clones[id(t)])
        written_ids = {id(t) for t in written}
        if isinstance(out, Tensor) and id(out) not in written_ids:
            tr.track(out, node)
        elif isinstance(out, (tuple, list)):
            for i, o in enumerate(out):
                if isinstance(o, Tensor) and id(o) not in written_ids:
                    tr.track(o, _Getitem(node, i))
        return out

    def state_functional(
        self, func: OpOverload, args: Any, kwargs: dict[str, Any], written: list[Tensor]
    ) -> Any:
        """NOTE [undeclared writes]: a training ``native_batch_norm`` recorded as the op
        returning the new running statistics, which the statistics are rebound to."""
        tr = self.tracker
        if not written:  # nothing written (evaluation, or no running statistics)
            out = func(*args, **kwargs)
            tr.record(func, args, kwargs, out)
            return out
        functional = STATE_FUNCTIONAL[func]
        new = functional(*args, **kwargs)
        tr.record(functional, args, kwargs, new)
        values = new_values(new)
        kept = len(values) - len(written)
        for t, v in zip(written, values[kept:], strict=True):
            t.copy_(v)  # the value and the version the write leaves (not recorded)
            node = tr.resolve(tr.of[id(v)][1])
            tr.rebind_written(t, node)
        return tuple(new[:kept])


def _undeclared(func: OpOverload, args: Any, kwargs: dict[str, Any]) -> list[Any]:
    """The tensors a call writes that its schema does not declare (batch norm's running
    statistics: NOTE [undeclared writes])."""
    if func not in UNDECLARED_WRITES:
        return []
    out = []
    for name in UNDECLARED_WRITES[func](args, kwargs):  # the names this call writes
        pos = next(
            (i for i, a in enumerate(func._schema.positional) if a.name == name),
            None,
        )
        x = args[pos] if pos is not None and pos < len(args) else kwargs.get(name)
        if isinstance(x, Tensor):
            out.append(x)
    return out


# NOTE [functional tracing]
# AOTAutograd traces with ``_functionalize=True``: its graphs are pure. An op that writes is
# recorded as its functional op (``add_``/``add.out`` -> ``add``, ``copy_`` -> ``copy``): the
# trace drives the Functionalize key's rewrite (NOTE [functional rewrite] in
# ``ember/ops/functional_rewrite.py``), running the functional op as a traced op and rebinding
# each written tensor to a node, cast back to the written tensor's dtype when the functional
# op promotes; the op itself still runs on the
# traced values, so later ops see the written values and PyTorch's checks and version bumps
# happen. The written tensor is computed by the new node from then on; a written view's base
# is computed by ``index_put`` of the view's elements into the base's old value (at
# positions the graph computes, ``as_strided`` of an ``arange``: a graph holds no constant
# tensor, so running it under another fake trace works, as ``make_fx(functionalize(f),
# tracing_mode="fake")`` does), or is the view's values reshaped when the view covers the
# whole base in order (``view(-1)``); every other view of that base is re-derived by
# ``as_strided`` of the base's new value the
# next time it is used. Metadata writes (``t_``) become their view op; a training batch
# norm, whose schema leaves its writes undeclared, becomes
# ``_native_batch_norm_legit_functional`` and its running statistics that op's last
# outputs (NOTE [undeclared writes]); other writes without a functional op run on
# clones, which stand for the written tensors from then on (the graph writes only values
# it made). Which inputs were written is read from the tracker afterwards.


_SCALAR_READS = frozenset(("__bool__", "__float__", "__int__", "__index__", "item"))


#: how many make_fx traces this process is inside (``ember.compiler.is_compiling``)
TRACING = [0]


class _Tracing:
    """Installs the data-read check for the tensors of one trace."""

    def __init__(self, tracker: _Tracker) -> None:
        self.tracker = tracker
        self.previous: Any = None

    def __enter__(self) -> None:
        self.previous = _tensor_mod.VALUE_READ_HOOK[0]
        tracker = self.tracker

        def check(t: Tensor, what: str) -> None:
            if tracker.tracks(t) and id(t) not in tracker.constants:
                if tracker.allow_reads and what in _SCALAR_READS and t.numel() == 1:
                    node = tracker.graph.call_function(
                        _LOCAL_SCALAR, (tracker.node_of(t),), name="_local_scalar_dense"
                    )
                    node.meta["val"] = None
                    tracker.read_values.append(np.asarray(t._edata).reshape(()).item())
                    return
                raise DataDependentTracingError(f"{_DATA_ERROR} (Tensor.{what}() was called)")

        _tensor_mod.VALUE_READ_HOOK[0] = check
        TRACING[0] += 1

    def __exit__(self, *exc: Any) -> None:
        TRACING[0] -= 1
        _tensor_mod.VALUE_READ_HOOK[0] = self.previous


def make_fx(
    f: Callable[..., Any],
    decomposition_table: dict[Any, Callable[..., Any]] | None = None,
    tracing_mode: str = "real",
    _allow_non_fake_inputs: bool = False,
    *,
    pre_dispatch: bool = False,
    record_module_stack: bool = False,
    _allow_fake_constant: bool = False,
    _error_on_data_dependent_ops: bool = True,
    _functionalize: bool = False,
) -> Callable[..., GraphModule]:
    """A function that traces ``f`` on example arguments into a ``GraphModule`` of the ops
    that reach the Python key (NOTE [make_fx]).

    >>> from ember.fx.experimental.proxy_tensor import make_fx
    >>> gm = make_fx(lambda x: x.sum(0), tracing_mode="fake")(ember.ones(1000, 1000))
    >>> [n.target for n in gm.graph.nodes if n.op == "call_function"]
    [<OpOverload(op='aten.sum', overload='dim_IntList')>]
    """
    if tracing_mode not in ("real", "fake", "symbolic"):
        raise AssertionError(f"make_fx: unexpected tracing mode {tracing_mode!r}")
    if tracing_mode == "symbolic":
        raise NotImplementedError(
            "make_fx: tracing_mode='symbolic' (symbolic shapes) is not supported by ember; "
            "use 'real' or 'fake' (shapes are specialized)"
        )
    table = dict(decomposition_table or {})

    def wrapped(*args: Any) -> GraphModule:
        tracker = _Tracker(table, _functionalize)
        names = _placeholder_names(f, args)
        return _trace(f, args, tracker, tracing_mode, _allow_non_fake_inputs, names, pre_dispatch)[
            0
        ]

    return wrapped


def _trace(
    f: Callable[..., Any],
    args: tuple[Any, ...],
    tracker: _Tracker,
    tracing_mode: str,
    allow_non_fake_inputs: bool,
    placeholder_names: list[str] | None = None,
    pre_dispatch: bool = False,
) -> tuple[GraphModule, Any, list[Any]]:
    """Trace ``f(*args)``: the graph module, the traced output and the traced inputs (the
    fake ones in fake mode), flattened; ``pre_dispatch``: on the PreDispatch key (NOTE
    [pre-dispatch tracing])."""
    flat, spec = tree_flatten(args)
    fake_mode = None
    if tracing_mode == "fake":
        fake_mode = FakeTensorMode(allow_non_fake_inputs=allow_non_fake_inputs)
        flat = [fake_mode.from_tensor(a) if isinstance(a, Tensor) else a for a in flat]
    g = tracker.graph
    for i, a in enumerate(flat):
        name = placeholder_names[i] if placeholder_names is not None else f"arg{i}_1"
        ph = g.placeholder(name)
        if isinstance(a, Tensor):
            if tracker.tracks(a):  # the same tensor twice: its first placeholder
                continue
            tracker.bind(a, ph)
            tracker.inputs.add(id(a))
            ph.meta["val"] = _snapshot(a)
            ph.meta["tensor_meta"] = extract_tensor_metadata(ph.meta["val"])
        else:
            ph.meta["val"] = a
    traced_args = tree_unflatten(flat, spec)
    mode: Any = PreDispatchTracer(tracker) if pre_dispatch else ProxyTorchDispatchMode(tracker)
    with _Tracing(tracker):
        if fake_mode is not None:
            with fake_mode, mode:
                out = f(*traced_args)
        else:
            with mode:
                out = f(*traced_args)
        if pre_dispatch:
            mode.sync_grad_mode()  # a no_grad block the traced code ended with
    out_flat, out_spec = tree_flatten(out)
    g.output(
        tree_unflatten(
            [tracker.node_of(o) if isinstance(o, Tensor) else o for o in out_flat], out_spec
        )  # fmt: skip
    )
    gm = GraphModule(tracker.root, g)
    if not _is_flat(spec):
        gm = _with_input_spec(gm, spec)
    return gm, out, flat


def _placeholder_names(f: Callable[..., Any], args: tuple[Any, ...]) -> list[str] | None:
    """The placeholders' names as PyTorch's ``make_fx`` gives them: ``<parameter>_1`` for a
    Python function of named parameters called with flat arguments (``x_1``, ``y_1``);
    None (``arg<i>_1``) for ``*args``, nested arguments, or a callable without code (a
    ``partial``, a module)."""
    fn = getattr(f, "__func__", f)
    code = getattr(fn, "__code__", None)
    if code is None or code.co_flags & inspect.CO_VARARGS:
        return None
    if any(isinstance(a, (list, tuple, dict)) for a in args):
        return None
    params = list(code.co_varnames[: code.co_argcount])
    if getattr(f, "__self__", None) is not None:
        params = params[1:]
    if len(params) < len(args):
        return None
    return [f"{p}_1" for p in params[: len(args)]]


def _is_flat(spec: Any) -> bool:
    flat, _ = tree_flatten(tree_unflatten([0] * spec.num_leaves, spec))
    return tree_unflatten(list(range(spec.num_leaves)), spec) == tuple(range(spec.num_leaves))


def _with_input_spec(gm: GraphModule, spec: Any) -> GraphModule:
    """The module called with the traced function's argument structure (flattened for the
    graph's placeholders), as PyTorch's pytree codegen does."""
    inner = gm.__dict__["_forward_fn"]
    del inner

    class PytreeGraphModule(GraphModule):
        def forward(self, *args: Any) -> Any:
            flat, _ = tree_flatten(args)
            return GraphModule.forward(self, *flat)

    gm.__class__ = PytreeGraphModule
    gm.__dict__["_in_spec"] = spec
    return gm


def get_isolated_graphmodule(
    func: Callable[..., Any],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    tracing_mode: str = "real",
) -> GraphModule:
    """``func(*args, **kwargs)`` traced in a fresh tracer, whatever modes are on."""
    return make_fx(lambda *a: func(*a, **kwargs), tracing_mode=tracing_mode)(*args)
