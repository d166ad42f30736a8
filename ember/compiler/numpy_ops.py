"""Ops the NumPy-source tier writes as direct NumPy calls, with ember's dtype semantics.

NOTE [direct numpy]
A call is written as NumPy only where the NumPy expression computes exactly what the op's
cpu kernel computes: the same ufuncs on the same dtypes in the same order (the kernels'
fast paths for float32/float64 operands of one dtype, Python numbers as weak scalars; see
``ember/backends/cpu/pointwise.py``, ``linalg.py``, ``reductions.py``). Anything else
(other dtypes, mixed dtypes, arguments that are not plain) calls the op's cpu kernel. The
dtypes are known when the graph is compiled: inputs' dtypes are part of the graph key, and
each node's dtype comes from its Meta rule.

An emitter takes the node and the source of its arguments and returns the expression, or
None when the call is not one it can write; given ``out`` (a dead buffer of the result's
shape and dtype: ``ember/compiler/buffers.py``), it writes the result there.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ember._tensor import wrap
from ember.backends.cpu.linalg import _addmm_fast, _mm2
from ember.backends.cpu.pointwise import _zero_where
from ember.dispatch.keys import CPU_BIT
from ember.fx.node import Node
from ember.ops.native.reductions import reduction_axes
from ember.ops.registry import ops

aten = ops.aten
_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
_NUMBERS = (int, float)

#: names the emitted source reads (bound as the generated function's globals)
GLOBALS: dict[str, Any] = {
    "np": np,
    "_asarray": np.asarray,
    "_add_reduce": np.add.reduce,
    "_mm2": _mm2,
    "_prod": math.prod,
}


class Source:
    """What an emitter sees of a call: its arguments' source text, dtypes and kinds."""

    def __init__(self, node: Node, name: Callable[[Any], str]) -> None:
        self.node = node
        self.name = name

    def dtype(self, a: Any) -> Any:
        """An argument's NumPy dtype (a tensor), its Python type (a number), or None."""
        if isinstance(a, Node):
            param = a.meta.get("param")
            if param is not None:
                return param
            tm = a.meta.get("tensor_meta")
            return getattr(tm, "dtype", None) and tm.dtype.np  # type: ignore[union-attr]
        return type(a) if type(a) in _NUMBERS else None

    def ndim(self, a: Any) -> int | None:
        tm = a.meta.get("tensor_meta") if isinstance(a, Node) else None
        return len(tm.shape) if tm is not None and hasattr(tm, "shape") else None

    @property
    def result_dtype(self) -> Any:
        tm = self.node.meta.get("tensor_meta")
        return tm.dtype.np if tm is not None and hasattr(tm, "dtype") else None

    @property
    def result_ndim(self) -> int | None:
        tm = self.node.meta.get("tensor_meta")
        return len(tm.shape) if tm is not None and hasattr(tm, "shape") else None

    def float_operand(self, a: Any, dt: Any) -> bool:
        return isinstance(a, Node) and a.meta.get("param") is None and self.dtype(a) == dt

    def number(self, a: Any) -> bool:
        """A Python int or float (a parameter, or a literal), not a bool."""
        if isinstance(a, Node):
            return a.meta.get("param") in _NUMBERS
        return type(a) in _NUMBERS


Emitter = Callable[[Source, str | None], str | None]
EMITTERS: dict[Any, Emitter] = {}
#: ops whose emitted call takes ``out=`` (buffer reuse may give them a dead buffer)
TAKES_OUT: set[Any] = set()
#: elementwise ones: ``out`` may be one of their own operands (exact overlap)
ELEMENTWISE_OUT: set[Any] = set()


def _out(out: str | None) -> str:
    return f", out={out}" if out is not None else ""


def _as_array(src: Source, expr: str) -> str:
    """A 0-d result comes back from NumPy as a scalar: make it an array again."""
    return f"_asarray({expr})" if src.result_ndim == 0 else expr


def _plain_float(src: Source) -> Any:
    """The float dtype every tensor operand and the result share, or None."""
    dt = src.result_dtype
    if dt not in _FLOATS:
        return None
    return dt


def _operands(src: Source, dt: Any, scaled: bool) -> tuple[str, str] | None:
    """The two operands of a binary float op of dtype ``dt`` (the node's first argument,
    already checked, and a float tensor or a number) as source names, the second times
    ``alpha`` where the op is ``scaled`` and given one, as the kernel's scaled path computes
    it; None where the kernel decides (other keywords, or a number times ``alpha``, which
    rounds differently)."""
    n = src.node
    a, b = n.args
    if not (src.float_operand(b, dt) or src.number(b)):
        return None
    if set(n.kwargs) - ({"alpha"} if scaled else set()):
        return None
    x, y = src.name(a), src.name(b)
    if "alpha" in n.kwargs:  # the kernel's scaled path: other * alpha first
        if not (src.float_operand(b, dt) and src.number(n.kwargs["alpha"])):
            return None
        y = f"np.multiply({y}, {src.name(n.kwargs['alpha'])})"
    return x, y


def _binary(op: Any, ufunc: str, scaled: bool) -> None:
    def emit(src: Source, out: str | None) -> str | None:
        n = src.node
        dt = _plain_float(src)
        if dt is None or len(n.args) != 2 or not src.float_operand(n.args[0], dt):
            return None
        operands = _operands(src, dt, scaled)
        if operands is None:
            return None
        x, y = operands
        return _as_array(src, f"np.{ufunc}({x}, {y}{_out(out)})")

    EMITTERS[op] = emit
    TAKES_OUT.add(op)
    ELEMENTWISE_OUT.add(op)


for _op, _uf, _scaled in (
    (aten.add.Tensor, "add", True),
    (aten.sub.Tensor, "subtract", True),
    (aten.mul.Tensor, "multiply", False),
    (aten.div.Tensor, "true_divide", False),
):
    _binary(_op, _uf, _scaled)


def _inplace(op: Any, ufunc: str, scaled: bool) -> None:
    """``self op= other`` on a float32/float64 tensor (the kernels' ``_inplace_fast``)."""

    def emit(src: Source, out: str | None) -> str | None:
        n = src.node
        if len(n.args) != 2 or not isinstance(n.args[0], Node):
            return None
        dt = src.dtype(n.args[0])
        if dt not in _FLOATS or n.args[0].meta.get("param") is not None:
            return None
        operands = _operands(src, dt, scaled)
        if operands is None:
            return None
        x, y = operands
        return f"np.{ufunc}({x}, {y}, out={x})"

    EMITTERS[op] = emit


for _op, _uf, _scaled in (
    (aten.add_.Tensor, "add", True),
    (aten.sub_.Tensor, "subtract", True),
    (aten.mul_.Tensor, "multiply", False),
    (aten.div_.Tensor, "true_divide", False),
):
    _inplace(_op, _uf, _scaled)


def _unary(op: Any, template: str) -> None:
    """A one-operand float op; ``template`` uses ``{x}`` and ``{o}`` (``, out=...``)."""

    def emit(src: Source, out: str | None) -> str | None:
        n = src.node
        dt = _plain_float(src)
        if dt is None or len(n.args) != 1 or n.kwargs or not src.float_operand(n.args[0], dt):
            return None
        return _as_array(src, template.format(x=src.name(n.args[0]), o=_out(out)))

    EMITTERS[op] = emit
    TAKES_OUT.add(op)
    ELEMENTWISE_OUT.add(op)


for _name, _template in (
    ("neg", "np.negative({x}{o})"),
    ("exp", "np.exp({x}{o})"),
    ("log", "np.log({x}{o})"),
    ("tanh", "np.tanh({x}{o})"),
    ("sqrt", "np.sqrt({x}{o})"),
    ("sin", "np.sin({x}{o})"),
    ("cos", "np.cos({x}{o})"),
    ("abs", "np.abs({x}{o})"),
    ("relu", "np.maximum({x}, 0{o})"),
    # 1 / (1 + exp(-x)), as the kernel: each step may write the buffer (x is dead after)
    ("sigmoid", "np.true_divide(1, np.add(1, np.exp(np.negative({x}{o}){o}){o}){o})"),
):
    _unary(getattr(aten, _name).default, _template)


def _mm(src: Source, out: str | None) -> str | None:
    n = src.node
    dt = _plain_float(src)
    if dt is None or n.kwargs or len(n.args) != 2:
        return None
    a, b = n.args
    if not (src.float_operand(a, dt) and src.float_operand(b, dt)):
        return None
    if src.ndim(a) != 2 or src.ndim(b) != 2:
        return None
    return f"_mm2({src.name(a)}, {src.name(b)})"


EMITTERS[aten.mm.default] = _mm


def _addmm_or_kernel(s: Any, a: Any, b: Any, kernel: Callable[..., Any]) -> Any:
    """The kernel's fast path (``bias + x @ W``), or the kernel itself."""
    r = _addmm_fast(s, a, b)
    return r if r is not None else kernel(s, a, b)


def _addmm(src: Source, out: str | None) -> str | None:
    n = src.node
    dt = _plain_float(src)
    if dt is None or n.kwargs or len(n.args) != 3:
        return None
    if not all(src.float_operand(a, dt) for a in n.args):
        return None
    if src.ndim(n.args[1]) != 2 or src.ndim(n.args[2]) != 2:
        return None
    s, a, b = (src.name(x) for x in n.args)
    return f"_addmm({s}, {a}, {b}, _addmm_kernel)"


def _addmm_kernel(s: Any, a: Any, b: Any) -> Any:
    return aten.addmm.default.redispatch(CPU_BIT, wrap(s), wrap(a), wrap(b))._edata


EMITTERS[aten.addmm.default] = _addmm
GLOBALS["_addmm"] = _addmm_or_kernel
GLOBALS["_addmm_kernel"] = _addmm_kernel


def _threshold_backward(g: Any, x: Any, threshold: Any) -> Any:
    """The kernel's fast path: 0 where ``x <= threshold``, else ``g`` (same shapes)."""
    if g.size < 4096:
        return np.where(x <= threshold, g.dtype.type(0), g)
    return _zero_where(x <= threshold, g)


def _tb(src: Source, out: str | None) -> str | None:
    n = src.node
    dt = _plain_float(src)
    if dt is None or n.kwargs or len(n.args) != 3:
        return None
    g, x, t = n.args
    if not (src.float_operand(g, dt) and src.float_operand(x, dt) and src.number(t)):
        return None
    gm, xm = g.meta["tensor_meta"], x.meta["tensor_meta"]
    if tuple(gm.shape) != tuple(xm.shape):  # equal for every run: NOTE [shape classes]
        return None
    return f"_threshold_backward({src.name(g)}, {src.name(x)}, {src.name(t)})"


EMITTERS[aten.threshold_backward.default] = _tb
GLOBALS["_threshold_backward"] = _threshold_backward


def _reduce(mean: bool, full: bool) -> Emitter:
    def emit(src: Source, out: str | None) -> str | None:
        n = src.node
        dt = _plain_float(src)
        if dt is None or not src.float_operand(n.args[0], dt) or "dtype" in n.kwargs:
            return None
        ndim = src.ndim(n.args[0])
        if ndim is None:
            return None
        x = src.name(n.args[0])
        if full:
            if len(n.args) != 1 or n.kwargs:
                return None
            axes: Any = None
            keepdim = False
        else:
            rest = list(n.args[1:]) + [n.kwargs[k] for k in ("keepdim",) if k in n.kwargs]
            if set(n.kwargs) - {"keepdim"} or any(isinstance(r, Node) for r in rest):
                return None
            dim = n.args[1] if len(n.args) > 1 else None
            keepdim = bool(n.args[2]) if len(n.args) > 2 else bool(n.kwargs.get("keepdim", False))
            axes = reduction_axes((1,) * ndim, dim, "mean" if mean else "sum")
        t = f"np.{dt.name}"
        expr = f"_add_reduce({x}, {axes!r}, {t}, {out}, {keepdim})"
        if mean:
            count = f"{x}.size" if axes is None else f"_prod({x}.shape[i] for i in {axes!r})"
            expr = f"np.true_divide({expr}, {count}{_out(out)})"
        return _as_array(src, expr)

    return emit


EMITTERS[aten.sum.default] = _reduce(False, True)
EMITTERS[aten.sum.dim_IntList] = _reduce(False, False)
EMITTERS[aten.mean.default] = _reduce(True, True)
EMITTERS[aten.mean.dim] = _reduce(True, False)
TAKES_OUT.update({aten.sum.dim_IntList, aten.mean.dim})


def _clone(src: Source, out: str | None) -> str | None:
    """A copy of any dtype (its layout may differ from the kernel's, its values do not; the
    lazy device lays results out as declared: ``layout.laid_out``). The call depends on no
    size: a lazy graph serves every size of its shape classes (NOTE [shape classes])."""
    n = src.node
    if len(n.args) != 1 or set(n.kwargs) - {"memory_format"}:
        return None
    if n.kwargs.get("memory_format") is not None or not isinstance(n.args[0], Node):
        return None
    return f"{src.name(n.args[0])}.copy(order='K')"


EMITTERS[aten.clone.default] = _clone

#: ops whose direct call returns an array of its own (a buffer reuse may later write it)
FRESH = frozenset(
    TAKES_OUT | {aten.mm.default, aten.addmm.default, aten.threshold_backward.default}
)
