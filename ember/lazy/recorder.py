"""The Lazy key's boxed fallback: record an IR node for any op of the registry.

One function serves every op. It runs the op's Meta rule on *proxies* (meta tensors with the
lazy tensors' shapes, strides, offsets and version counters) to learn the outputs' metadata,
records a ``call`` node whose inputs are the lazy arguments' current IR values, and returns
lazy tensors holding the node's outputs. Nothing is computed.

NOTE [lazy views]
A view op records nothing: its result is a lazy view (``LazyArray.base`` is the base's
array) with the geometry the Meta rule gave, relative to the base's storage as on the cpu
device. Its IR value is derived from the base's *current* value each time it is used
(``executor.current``), so after a write to the base, or through another view, every view
reads the new values. Composite ops such as ``reshape`` reach the fallback as their parts.

NOTE [lazy mutation]
An op that writes an argument (in-place, ``out=``, running statistics) is functionalized:
its node copies the written inputs before running the cpu kernel on them, and outputs their
new values after the op's own results; then a written *base* is rebound to its output, and
a written *view* rebinds its base to a ``write`` node (the old storage with the view's
region replaced). The Meta rule bumped the version counters, which the proxies share with
the lazy tensors, so autograd's checks on saved tensors see writes as on the cpu device.
(Updates whose old value is dead are still copies; making them in-place again is the
compiler's job, still to come.)

NOTE [lazy cpu fallback]
An op whose output shape depends on values (``nonzero``, ``unique``, ``masked_select``),
or that has no Meta rule, or that changes a base's shape or strides, runs eagerly instead: its lazy
inputs are computed, the cpu kernel runs, and its results come back as lazy tensors holding
data. ``cpu_fallback::<op>`` counts each one; ``EMBER_LAZY_DEBUG=1`` prints them.

NOTE [graph size]
A graph that grows without a sync (a loop that never reads a value) is cut: when a new
node needs more than ``GRAPH_LIMIT`` uncomputed nodes, its outputs are synced at once.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import numpy as np

from ember._shape_only import DataDependentShapeError, ShapeOnlyArray
from ember._tensor import Tensor, wrap, wrap_shape_only, wrap_view
from ember.compiler import layout, metrics
from ember.device import device
from ember.dispatch.keys import CPU_BIT, LAZY_KEYS, META_BIT
from ember.lazy._array import LazyArray
from ember.lazy.executor import LIVE, current, sync_arrays, values_of, view_geometry
from ember.lazy.ir import Node, Param, Slot, Value, data_node
from ember.ops.registry import OpOverload
from ember.ops.writes import written_tensors

GRAPH_LIMIT = 20_000
META = device("meta")
CPU = device("cpu")

#: ops that take a cpu tensor of any rank beside lazy ones (a copy between devices)
#: (and indexing, whose index tensors PyTorch takes from the cpu for any device)
_ACROSS_DEVICES = frozenset(
    {"copy_", "copy", "_to_copy", "_copy_from", "_copy_from_and_resize", "index", "index_put",
     "index_put_", "_index_put_impl_", "_unsafe_index", "_unsafe_index_put"}
)  # fmt: skip


def debug_enabled() -> bool:
    return os.environ.get("EMBER_LAZY_DEBUG", "") not in ("", "0")


def lazy_tensor(arr: LazyArray) -> Tensor:
    """A new lazy base tensor over ``arr``."""
    if arr.value is None:
        LIVE.add(arr)
    return wrap_shape_only(arr, LAZY_KEYS)


def to_lazy(t: Tensor) -> Tensor:
    """A lazy tensor holding a cpu tensor's values (what the Lazy key's ``_to_copy`` kernel
    makes of a cpu tensor; the array is already a copy)."""
    data = t._edata
    return lazy_tensor(LazyArray(data.shape, data.dtype, t.stride(), value=data))


def is_lazy(x: Any) -> bool:
    return isinstance(x, Tensor) and type(x._edata) is LazyArray


def _same_device_error(op: OpOverload, other: Tensor) -> RuntimeError:
    return RuntimeError(
        f"{op}: Expected all tensors to be on the same device, but found at least two "
        f"devices, lazy and {other.device} (a {list(other.shape)} tensor)! Move it with "
        ".to('lazy'), or the lazy ones with .to('cpu')"
    )


class _Call:
    """One op call being recorded: proxies, inputs and the argument template."""

    def __init__(self, op: OpOverload) -> None:
        self.op = op
        self.inputs: list[Value] = []
        self.slot_of: dict[int, int] = {}  # id(tensor) -> slot
        self.tensors: list[Tensor] = []  # by slot
        self.params: list[Any] = []
        self.proxy_of: dict[int, Tensor] = {}  # id(lazy tensor) -> its proxy
        self.lazy_of: dict[int, Tensor] = {}  # id(proxy) -> its lazy tensor
        self.across = op.overloadpacket.__name__ in _ACROSS_DEVICES

    # arguments ----------------------------------------------------------------------
    def argument(self, x: Any, numeric: bool) -> tuple[Any, Any]:
        """(meta argument, template) of one argument; ``numeric``: a Scalar or float slot,
        where a Python number becomes a graph parameter."""
        if isinstance(x, Tensor):
            return self.tensor(x)
        if isinstance(x, (list, tuple)) and any(isinstance(e, Tensor) for e in x):
            pairs = [self.argument(e, False) for e in x]
            return type(x)(m for m, _ in pairs), type(x)(t for _, t in pairs)
        if numeric and type(x) in (int, float, bool):
            self.params.append(x)
            return x, Param(len(self.params) - 1)
        if isinstance(x, device) or (isinstance(x, str) and x.startswith("lazy")):
            d = device(x)
            if d.type == "lazy":
                return META, CPU
        return x, x

    def tensor(self, t: Tensor) -> tuple[Tensor, Slot]:
        slot = self.slot_of.get(id(t))
        if slot is not None:
            return self.proxy_of[id(t)], Slot(slot)
        if is_lazy(t):
            proxy = self.proxy(t)
            value = current(t._edata)
        elif t.ndim == 0 or self.across:
            if t.device.type != "cpu":
                raise _same_device_error(self.op, t)
            # a snapshot: the cpu tensor may change before the graph runs
            proxy = wrap_shape_only(ShapeOnlyArray(tuple(t.shape), t._edata.dtype, t.stride()))
            value = (data_node(np.array(t._edata, copy=True, order="K")), 0)
            self.proxy_of[id(t)] = proxy
            self.lazy_of[id(proxy)] = t
        else:
            raise _same_device_error(self.op, t)
        slot = len(self.inputs)
        self.slot_of[id(t)] = slot
        self.inputs.append(value)
        self.tensors.append(t)
        return proxy, Slot(slot)

    def proxy(self, t: Tensor) -> Tensor:
        """A meta tensor with ``t``'s metadata and version counter; a view's proxy is a
        view of its base's proxy (so Meta rules see the same storage offsets)."""
        found = self.proxy_of.get(id(t))
        if found is not None:
            return found
        arr = t._edata
        if t._vc is None:
            t._vc = [0]
        if arr.base is None:
            p = wrap_shape_only(ShapeOnlyArray(arr.shape, arr.dtype, arr.element_strides))
            p._vc = t._vc
        else:
            base = t._base
            pb = self.proxy(base)
            p = wrap_view(pb, ShapeOnlyArray(arr.shape, arr.dtype, arr.element_strides, arr.offset))
        self.proxy_of[id(t)] = p
        self.lazy_of[id(p)] = t
        return p

    def arguments(
        self, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> tuple[tuple[Any, ...], dict[str, Any], tuple[Any, ...], dict[str, Any]]:
        schema = self.op._schema
        positional = schema.positional
        by_name = {a.name: a for a in schema.arguments}
        margs, targs = [], []
        for i, x in enumerate(args):
            a = positional[i] if i < len(positional) else None
            if a is not None and is_lazy(x) and _scalar(a):
                x = x.item()  # a tensor given for a number: its value, as PyTorch's parser
            m, t = self.argument(x, a is not None and _numeric(a))
            margs.append(m)
            targs.append(t)
        mkw, tkw = {}, {}
        for k, x in kwargs.items():
            a = by_name.get(k)
            if a is not None and is_lazy(x) and _scalar(a):
                x = x.item()
            mkw[k], tkw[k] = self.argument(x, a is not None and _numeric(a))
        return tuple(margs), mkw, tuple(targs), tkw

    def written(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[Tensor]:
        """The lazy tensors the call writes, in schema order (NOTE [undeclared writes])."""
        return [t for t in written_tensors(self.op, args, kwargs) if is_lazy(t)]


def _base_array(arr: LazyArray) -> LazyArray:
    return arr if arr.base is None else arr.base


def _scalar(a: Any) -> bool:
    """A number argument (Scalar, float, int, bool), not a list."""
    return a.type.base in ("Scalar", "float", "int", "SymInt", "bool") and not a.type.is_list


def _numeric(a: Any) -> bool:
    """A Scalar or float argument, or a Tensor one given a Python number (a wrapped scalar)."""
    return a.type.base in ("Scalar", "float", "Tensor") and not a.type.is_list


def lazy_fallback(op: OpOverload, ks: int, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """The Lazy key's kernel for every op (NOTE [lazy views], NOTE [lazy mutation])."""
    return record(op, args, kwargs, None)


def record(
    op: OpOverload, args: tuple[Any, ...], kwargs: dict[str, Any], learn: list[Any] | None
) -> Any:
    """Record one call (running its Meta rule on proxies). With ``learn``, a pure call that
    recorded appends its recipe (NOTE [recording fast path] in ``recipes.py``)."""
    call = _Call(op)
    written = call.written(args, kwargs)
    if op._schema.is_mutable and len(written) != len(written_tensors(op, args, kwargs)):
        return eager(op, args, kwargs, "it writes a tensor that is not on the lazy device")
    margs, mkwargs, targs, tkwargs = call.arguments(args, kwargs)
    before = [_geometry(call.proxy_of[id(t)]) for t in written]
    try:
        result = op.redispatch(META_BIT, *margs, **mkwargs)
    except (NotImplementedError, DataDependentShapeError) as exc:  # no Meta rule; a shape
        # that depends on values
        return eager(op, args, kwargs, f"no Meta result ({exc})".split("\n")[0][:120])
    changed = [
        t for t, g in zip(written, before, strict=True) if _geometry(call.proxy_of[id(t)]) != g
    ]
    if any(t._edata.base is not None for t in changed):
        raise NotImplementedError(
            f"{op}: changing the shape or strides of a view of a lazy tensor is not supported "
            "yet; call it on the base tensor, or move the tensors to the cpu device first"
        )
    if changed and not op._schema.is_out:  # t_, squeeze_, set_, resize_ on a base
        return eager(op, args, kwargs, "it changes a tensor's shape or strides", bumped=True)
    metrics.count("ops_recorded")
    fresh: list[tuple[int, Tensor]] = []  # (flat output index, meta result)
    flat = _number(result, call, fresh, [0])
    node = None
    if fresh or written:
        metas = tuple(_meta_of(r) for _, r in fresh)
        node = Node(
            "call", op, targs, tkwargs, tuple(call.inputs), tuple(call.params),
            tuple(call.slot_of[id(t)] for t in written), flat + len(written), metas,
        )  # fmt: skip
    made: dict[int, Tensor] = {}
    for k, r in fresh:
        arr = LazyArray(tuple(r.shape), r._edata.dtype, r.stride(), node=(node, k))  # type: ignore[arg-type]
        made[id(r)] = lazy_tensor(arr)
    for j, t in enumerate(written):
        p = call.proxy_of[id(t)]
        _rebind(t, (node, flat + j), p)  # type: ignore[arg-type]
    out = _rebuild(result, call, made)
    if learn is not None and not written:
        learn.append((node, _describe(result, call, made)))
    if node is not None and node.size > GRAPH_LIMIT:
        sync_arrays([m._edata for m in made.values()] + [t._edata for t in written], "graph_size")
    return out


def _geometry(t: Tensor) -> tuple[Any, ...]:
    return (tuple(t.shape), t.stride(), t.storage_offset())


def _meta_of(r: Tensor) -> tuple[Any, ...]:
    return (tuple(r.shape), r.stride(), r._edata.dtype)


def _number(result: Any, call: _Call, fresh: list[tuple[int, Tensor]], n: list[int]) -> int:
    """Give each tensor of a Meta result its flat output index (as ``executor._flatten``
    lists the cpu results); note the fresh ones. Returns the number of outputs."""
    if isinstance(result, Tensor):
        if id(result) not in call.lazy_of and not _view_of_proxy(result, call):
            fresh.append((n[0], result))
        n[0] += 1
    elif isinstance(result, (list, tuple)):
        for r in result:
            _number(r, call, fresh, n)
    else:
        n[0] += 1
    return n[0]


def _view_of_proxy(r: Tensor, call: _Call) -> bool:
    return (
        r._base is not None and id(r._base) in call.lazy_of and is_lazy(call.lazy_of[id(r._base)])
    )


def _rebuild(result: Any, call: _Call, made: dict[int, Tensor]) -> Any:
    """The Meta result with lazy tensors in place of proxies and meta outputs."""
    if isinstance(result, Tensor):
        found = call.lazy_of.get(id(result))
        if found is not None:
            return found
        if id(result) in made:
            return made[id(result)]
        base = call.lazy_of[id(result._base)]
        arr = LazyArray(
            tuple(result.shape), result._edata.dtype, result.stride(), result.storage_offset(),
            base=base._edata if base._edata.base is None else base._edata.base,
        )  # fmt: skip
        return wrap_view(base, arr)
    if isinstance(result, list):
        return [_rebuild(r, call, made) for r in result]
    if isinstance(result, tuple):
        rebuilt = tuple(_rebuild(r, call, made) for r in result)
        return type(result)(*rebuilt) if hasattr(result, "_fields") else rebuilt
    return result


def _describe(result: Any, call: _Call, made: dict[int, Tensor]) -> Any:
    """How to rebuild a Meta result from a node's outputs and the call's tensors: the
    recipe's ``result`` (NOTE [recording fast path] in ``recipes.py``)."""
    if isinstance(result, Tensor):
        found = call.lazy_of.get(id(result))
        if found is not None:
            return ("input", call.slot_of[id(found)])
        if id(result) in made:
            arr = made[id(result)]._edata
            return ("fresh", arr.node[1], arr.shape, arr.strides, arr.dtype)
        root = call.lazy_of[id(result._base)]
        slot = next(
            i for i, t in enumerate(call.tensors) if (t if t._base is None else t._base) is root
        )
        d = result._edata
        return ("view", slot, d.shape, d.strides, d.offset, d.dtype)  # strides in bytes
    if isinstance(result, (list, tuple)):
        parts = tuple(_describe(r, call, made) for r in result)
        kind = type(result) if hasattr(result, "_fields") else type(result).__name__
        return (kind, parts)
    return ("value", result)


def _rebind(t: Tensor, value: Value, proxy: Tensor | None) -> None:
    """``t`` now holds ``value`` (NOTE [lazy mutation]); ``proxy``, when given, has the
    geometry an ``out=`` op resized it to."""
    arr = t._edata
    if arr.base is None:
        if proxy is not None and (
            tuple(proxy.shape) != arr.shape or proxy.stride() != arr.element_strides
        ):
            t._edata = arr = LazyArray(tuple(proxy.shape), arr.dtype, proxy.stride())  # out= resize
        arr.node, arr.value = value, None
        LIVE.add(arr)
        return
    base = arr.base
    geometry = view_geometry(base, arr)
    meta = ((base.shape, base.element_strides, base.dtype),)
    write = Node("write", None, geometry, {}, (current(base), value), (), (), 1, meta)
    base.node, base.value = (write, 0), None
    LIVE.add(base)


# --------------------------------------------------------------------------- cpu fallback


def eager(
    op: OpOverload,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    reason: str,
    bumped: bool = False,
) -> Any:
    """Run ``op`` on the cpu kernels now, with lazy arguments computed and results brought
    back as lazy tensors holding data (NOTE [lazy cpu fallback])."""
    metrics.count(f"cpu_fallback::{op}")
    if debug_enabled():
        print(f"[ember.lazy] cpu fallback for {op}: {reason}", file=sys.stderr)
    written_bases = {
        id(_base_array(t._edata)) for t in written_tensors(op, args, kwargs) if is_lazy(t)
    }
    cpu_bases: dict[int, tuple[LazyArray, Tensor]] = {}
    lazy_of: dict[int, Tensor] = {}

    def to_cpu(x: Any) -> Any:
        if is_lazy(x):
            arr = x._edata
            base = _base_array(arr)
            entry = cpu_bases.get(id(base))
            if entry is None:
                values = values_of(base, "cpu_fallback")
                if id(base) in written_bases:
                    copy = layout.fresh(base.shape, base.element_strides, base.dtype)
                    copy[...] = values
                    values = copy
                entry = cpu_bases[id(base)] = (base, wrap(values))
                if not bumped and id(base) in written_bases:
                    owner = x._base if x._base is not None else x
                    entry[1]._vc = owner._vc  # the cpu kernel's bump is the lazy tensor's
            cpu = entry[1]
            if arr.base is not None:
                cpu = wrap_view(cpu, layout.window(cpu._edata, *view_geometry(base, arr)[2:]))
            lazy_of[id(cpu)] = x
            return cpu
        if isinstance(x, (list, tuple)) and any(isinstance(e, Tensor) for e in x):
            return type(x)(to_cpu(e) for e in x)
        if isinstance(x, device) or (isinstance(x, str) and x.startswith("lazy")):
            return CPU if device(x).type == "lazy" else x
        return x

    cargs = tuple(to_cpu(a) for a in args)
    ckwargs = {k: to_cpu(v) for k, v in kwargs.items()}
    result = op.redispatch(CPU_BIT, *cargs, **ckwargs)
    for base, cpu in cpu_bases.values():
        if id(base) in written_bases:
            base.shape = tuple(cpu.shape)
            base.strides = tuple(s * base.dtype.itemsize for s in cpu.stride())
            base.value, base.node = cpu._edata, None
    by_cpu_base = {id(cpu): base for base, cpu in cpu_bases.values()}

    given = {id(t) for t in written_tensors(op, args, kwargs) if not is_lazy(t)}

    def back(r: Any) -> Any:
        if isinstance(r, Tensor):
            if id(r) in given:  # a cpu tensor the op wrote (and returns)
                return r
            found = lazy_of.get(id(r))
            if found is not None:
                if is_lazy(found) and found._edata.base is None:
                    found._edata.shape = tuple(r.shape)  # metadata ops (t_, squeeze_)
                    found._edata.strides = tuple(s * r._edata.itemsize for s in r.stride())
                return found
            if r._base is not None and id(r._base) in by_cpu_base:
                base = by_cpu_base[id(r._base)]
                arr = LazyArray(
                    tuple(r.shape), r._edata.dtype, r.stride(), r.storage_offset(), base=base
                )
                owner = next(t for t in lazy_of.values() if _base_array(t._edata) is base)
                return wrap_view(owner, arr)
            data = np.array(r._edata, copy=True, order="K") if r._base is not None else r._edata
            return to_lazy(wrap(data))
        if isinstance(r, list):
            return [back(e) for e in r]
        if isinstance(r, tuple):
            rebuilt = tuple(back(e) for e in r)
            return type(r)(*rebuilt) if hasattr(r, "_fields") else rebuilt
        return r

    return back(result)
