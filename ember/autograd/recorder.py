"""Straight-line recording code, generated per op, for the Autograd key's common case.

# NOTE [generated recorders]
Most recorded calls are a functional op with plain Tensor parameters (``mm``, ``relu``,
``addmm``): no ``Tensor[]``, no in-place write, no ``out=``. For such an op with a derivative
entry, ``make_recorder`` writes one function from its schema and entry, as PyTorch's
VariableType is generated from derivatives.yaml: it reads each Tensor argument once, checks
which require grad, runs the op below the Autograd key, and builds the node with its edges,
input shapes, the arguments the formula reads (unread ones are dropped, so the graph doesn't
keep them alive) and its saved tensors, with no loop over the schema and no helper call per
input. Everything else (in-place ops, lists, ops with no formula, ``out=`` errors) takes the
general path in ``kernel.py``; both build the same node.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ember._tensor import Tensor
from ember.autograd.anomaly_mode import OPEN as ANOMALY
from ember.autograd.anomaly_mode import forward_trace, is_anomaly_enabled
from ember.autograd.function_table import VJP
from ember.autograd.graph import Node, SavedTensor
from ember.dispatch import state
from ember.dispatch.keys import AUTOGRAD_BIT
from ember.dtypes import FROM_NUMPY

Recorder = Callable[[Any, int, tuple[Any, ...], dict[str, Any]], Any]


def make_recorder(
    params: list[tuple[int, str, bool]],
    vjp: VJP,
    below: int,
    gradient_edge: Callable[[Any], Any],
    attach: Callable[[Node, Any, bool], None],
    run_formula: Callable[..., Any],
) -> Recorder:
    """``record(op, keyset, args, kwargs)`` for an op whose Tensor parameters are ``params``
    ((position or -1, name, is_list) each, none a list) and whose entry is ``vjp``."""
    lines = ["def record(op, ks, args, kwargs):", "    n = len(args)"]
    k = len(params)
    for i, (pos, name, _) in enumerate(params):
        if pos < 0:
            lines.append(f"    x{i} = kwargs.get({name!r})")
        else:
            lines.append(f"    x{i} = args[{pos}] if n > {pos} else kwargs.get({name!r})")
        lines.append(f"    r{i} = isinstance(x{i}, T) and x{i}._keys & AB")
    any_ = " or ".join(f"r{i}" for i in range(k)) or "False"
    lines += [
        f"    if not ({any_}):",
        "        return op.redispatch(ks & BELOW, *args, **kwargs)",
        "    loc = local",
        "    old = loc.exclude",
        "    loc.exclude = old | AB",
        "    ACTIVE[0] += 1",
        "    try:",  # op.redispatch, inlined
        "        below = ks & BELOW",
        "        if not below:",
        "            op.redispatch(below, *args, **kwargs)  # raises: no kernel below",
        "        fn, kind = (op._table or op._build_table())[below.bit_length() - 1]",
        "        if kind == 0:",
        "            out = fn(*args, **kwargs)",
        "        elif kind == 1:",
        "            out = fn(below, *args, **kwargs)",
        "        else:",
        "            out = fn(op, below, args, kwargs)",
        "    finally:",
        "        loc.exclude = old",
        "        ACTIVE[0] -= 1",
    ]
    for i in range(k):
        lines += [
            f"    if r{i}:",
            f"        fn = x{i}.grad_fn",
            f"        e{i} = (fn, x{i}._output_nr) if fn is not None else EDGE(x{i})",
            "    else:",
            f"        e{i} = None",
            f"    if isinstance(x{i}, T):",
            f"        d = x{i}._data",
            f"        m{i} = (d.shape, FROM_NP[d.dtype])",
            "    else:",
            f"        m{i} = None",
        ]
    unread = [pos for pos, name, _ in params if pos >= 0 and name not in vjp.reads]
    lines.append("    cargs = args")
    for pos in unread:  # the formula never reads them: the node doesn't keep them alive
        lines.append(f"    if n > {pos}:")
        lines.append(f"        cargs = (*cargs[:{pos}], None, *cargs[{pos + 1}:])")
    edges = "".join(f"e{i}, " for i in range(k))
    metas = "".join(f"m{i}, " for i in range(k))
    lines += [
        f"    node = Node(NAME, RUN, ({edges}), ({metas}), (VJP, cargs, kwargs))",
        "    if ANOMALY[0] and is_anomaly_enabled():",
        "        node.metadata['trace'] = forward_trace()",
    ]
    for i, (_, name, _) in enumerate(params):
        if name in vjp.reads:
            lines += [f"    if m{i} is not None:", f"        node.saved.append(Saved(x{i}, NAME))"]
    lines += ["    attach(node, out, False)", "    return out"]
    scope: dict[str, Any] = {
        "T": Tensor, "AB": AUTOGRAD_BIT, "BELOW": below, "local": state.local,
        "ACTIVE": state.ACTIVE, "EDGE": gradient_edge, "FROM_NP": FROM_NUMPY, "Node": Node,
        "NAME": vjp.name, "RUN": run_formula, "VJP": vjp, "ANOMALY": ANOMALY,
        "is_anomaly_enabled": is_anomaly_enabled, "forward_trace": forward_trace,
        "Saved": SavedTensor, "attach": attach,
    }  # fmt: skip
    exec("\n".join(lines), scope)  # noqa: S102 - generated from a parsed schema
    return scope["record"]  # type: ignore[no-any-return]
