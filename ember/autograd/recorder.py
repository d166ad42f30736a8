"""Straight-line autograd code, generated per op and per derivative entry.

# NOTE [generated recorders]
The Autograd key's fallback (``kernel.py``) handles every op, but most recorded calls are a
functional op with plain Tensor parameters (``mm``, ``relu``, ``addmm``): no ``Tensor[]``,
no in-place write, no ``out=``. When an op's kernel table is built, the fallback specializes
itself for that op (NOTE [specialized fallbacks] in ``ember/dispatch/dispatcher.py``), as
PyTorch's VariableType kernels are generated per op from derivatives.yaml:

- ``make_recorder`` writes, from the op's schema and its derivative entry, the op's own
  Autograd kernel. It reads each Tensor argument once, checks grad mode and which inputs
  require grad, runs the op below the Autograd key, and builds the node: its edges, input
  shapes, the arguments the formula reads (unread ones are dropped, so the graph doesn't
  keep them alive), its saved tensors and, for a single Tensor output, the output's
  history. No loop over the schema, no helper call per input.
- ``make_nondifferentiable`` runs an op whose outputs never require grad below the
  Autograd key; ``make_passthrough`` is every other op's Autograd kernel: with grad mode off
  it runs the op below at once; otherwise it hands the call to the general fallback
  (in-place ops, lists, ops with no formula, the ``out=`` error).
- ``make_runner`` writes a derivative entry's backward function (a node's ``backward_fn``):
  version checks of the saved tensors, shape-only arguments, the ``needs`` mask and the
  saved result, only where the entry uses them.

Both paths build the same node; ``tests/test_engine.py`` compares them.

# NOTE [plain kernels below]
The recorded op runs below the Autograd key with the key excluded, so that ops the kernel
below dispatches on the inputs (which carry the key) record nothing. A boxed kernel there
(the Python key's ``__torch_dispatch__``, the lazy device) may well dispatch such ops. A
plain kernel is a backend's own (CPU, Meta: NumPy on arrays) or a CompositeExplicit one;
ember's dispatch no ops on their inputs, and if a user's did, the nested ops would record nodes
the result's history replaces at once: work wasted, no gradient changed (a functional op
writes no input). So the recorder excludes the key only around a kernel that is not plain,
and saves the thread-local round trip on every common call.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ember._tensor import Tensor
from ember.autograd import saved_hooks
from ember.autograd.anomaly_mode import OPEN as ANOMALY
from ember.autograd.anomaly_mode import forward_trace, is_anomaly_enabled
from ember.autograd.function_table import VJP
from ember.autograd.graph import NO_EDGE, Node, SavedOutput, SavedTensor
from ember.dispatch import dispatcher, state
from ember.dispatch.codegen import define
from ember.dispatch.keys import AUTOGRAD_BIT
from ember.dtypes import FROM_NUMPY

Kernel = Callable[..., Any]
Runner = Callable[[Node, Any], Any]

#: the call of the kernel found below the Autograd key (``op.redispatch``, inlined)
_CALL_BELOW = dispatcher.call_source("below")


def _excluded(statement: str, indent: str) -> list[str]:
    """``statement`` (a call below) with the Autograd key excluded, restored after."""
    return state.guard_lines(statement, "AB", indent)


_HEAD = [
    "def kernel(ks, *args, **kwargs):",
    "    below = ks & BELOW",
    "    if not below:",
    "        return op.redispatch(below, *args, **kwargs)  # raises: no kernel below",
    f"    fn, kind = {dispatcher.lookup_source('below')}",
]


def _scope(op: Any, below: int, **more: Any) -> dict[str, Any]:
    return {
        "op": op, "BELOW": below, "local": state.local, "build_table": dispatcher.build_table,
        **more,
    }  # fmt: skip


def make_passthrough(
    op: Any, below: int, fallback: Kernel, written: Callable[[Any], None] | None = None
) -> Kernel:
    """The Autograd kernel of an op the recorder doesn't cover: grad mode off runs it below
    straight away (then, for an in-place op, tells ``written(self)``); grad mode on goes to
    the boxed ``fallback(op, keyset, args, kwargs)``."""
    lines = [*_HEAD, "    if not local.grad_enabled:"]
    if written is None:
        lines.append(f"        return {_CALL_BELOW}")
    else:  # NOTE [view creation meta] in view_rules.py
        lines += [
            f"        out = {_CALL_BELOW}",
            "        WRITTEN(args[0] if args else kwargs.get('self'))",
            "        return out",
        ]
    lines.append("    return FALLBACK(op, ks, args, kwargs)")
    scope = _scope(op, below, FALLBACK=fallback, WRITTEN=written)
    return define(lines, scope, "kernel", f"autograd {op}")


def make_nondifferentiable(op: Any, below: int) -> Kernel:
    """The Autograd kernel of an op whose outputs never require grad (``ones_like``,
    ``argmax``): it runs below the Autograd key, so nothing nested records either."""
    lines = [
        *_HEAD,
        "    if not local.grad_enabled:",
        f"        return {_CALL_BELOW}",
        *_excluded(f"return {_CALL_BELOW}", "    "),
    ]
    scope = _scope(op, below, AB=AUTOGRAD_BIT, ACTIVE=state.ACTIVE)
    return define(lines, scope, "kernel", f"autograd {op}")  # type: ignore[no-any-return]


def make_recorder(
    op: Any,
    params: list[tuple[int, str, bool]],
    vjp: VJP,
    below: int,
    gradient_edge: Callable[[Any], Any],
    attach: Callable[[Node, Any], None],
    runner: Runner,
    saved_output: Callable[[Tensor], Tensor],
    track: Callable[..., None],
    nograd_view: Callable[[Any], None],
    fallback: Kernel,
) -> Kernel:
    """``kernel(keyset, *args, **kwargs)``, the Autograd kernel of ``op``, whose Tensor
    parameters are ``params`` ((position or -1, name, is_list) each, none a list) and whose
    derivative entry is ``vjp`` (NOTE [generated recorders]). While saved-tensor hooks are
    active it hands the call to the general ``fallback``, which packs (NOTE [packed saved
    tensors] in ``saved_hooks.py``)."""
    lines = [*_HEAD, "    if not local.grad_enabled:"]
    if op.is_view:  # a view of a tensor that requires grad: NOTE [view creation meta]
        lines += [
            f"        out = {_CALL_BELOW}",
            "        if args and isinstance(x := args[0], T) and x._ekeys & AB:",
            "            NOGRAD_VIEW(out)",
            "        return out",
        ]
    else:
        lines.append(f"        return {_CALL_BELOW}")
    lines.append("    n = len(args)")
    k = len(params)
    for i, (pos, name, _) in enumerate(params):
        if pos < 0:
            lines.append(f"    x{i} = kwargs.get({name!r})")
        else:
            lines.append(f"    x{i} = args[{pos}] if n > {pos} else kwargs.get({name!r})")
        lines.append(f"    r{i} = isinstance(x{i}, T) and x{i}._ekeys & AB")
    any_ = " or ".join(f"r{i}" for i in range(k)) or "False"
    lines += [
        f"    if not ({any_}):",
        f"        return {_CALL_BELOW}",
        "    if HOOKS:",
        "        return FALLBACK(op, ks, args, kwargs)",
        "    if kind == 0:  # a plain kernel: nothing to exclude (NOTE [plain kernels below])",
        "        out = fn(*args, **kwargs)",
        "    else:",
        *_excluded(f"out = {_CALL_BELOW}", "        "),
    ]
    for i in range(k):
        lines += [
            f"    if r{i}:",
            f"        fn = x{i}.grad_fn",
            "        if fn is not None:",
            f"            e{i} = (fn, x{i}._output_nr)",
            "        else:",  # a leaf: its live accumulator, else gradient_edge makes one
            f"            ref = x{i}.__dict__.get('_grad_accumulator')",
            "            acc = ref() if ref is not None else None",
            f"            e{i} = (acc, 0) if acc is not None else EDGE(x{i})",
            "    else:",
            f"        e{i} = NO_EDGE",
            f"    if isinstance(x{i}, T):",
            f"        d = x{i}._edata",
            f"        m{i} = (d.shape, d.dtype)",
            "    else:",
            f"        m{i} = None",
        ]
    unread = [pos for pos, name, _ in params if pos >= 0 and name not in vjp.reads]
    # the formula never reads them: the node doesn't keep them alive
    if unread:
        n_pos = len(op._schema.positional)
        var = {pos: f"x{i}" for i, (pos, _, _) in enumerate(params) if pos >= 0}
        items = [
            "None" if j in unread else var.get(j, f"args[{j}]") for j in range(n_pos)
        ]  # fmt: skip
        lines.append(f"    if n == {n_pos}:  # every positional argument given: built at once")
        lines.append(f"        cargs = ({', '.join(items)},)")
        lines.append("    else:")
        lines.append("        cargs = args")
        for pos in unread:
            lines.append(f"        if n > {pos}:")
            lines.append(f"            cargs = cargs[:{pos}] + (None,) + cargs[{pos + 1}:]")
    else:
        lines.append("    cargs = args")
    saved = [i for i, (_, name, _) in enumerate(params) if name in vjp.reads]
    edges = "".join(f"e{i}, " for i in range(k))
    metas = "".join(f"m{i}, " for i in range(k))
    single = (
        len(op._schema.returns) == 1
        and op._schema.returns[0].type.base == "Tensor"
        and not op._schema.returns[0].type.is_list
    )
    # a node that saves nothing shares one empty tuple (the general path appends to a list)
    lines.append("    saved = []" if saved or vjp.wants_result or not single else "    saved = ()")
    for i in saved:
        lines += [f"    if m{i} is not None:", f"        saved.append(Saved(x{i}, NAME))"]
    lines += [
        "    node = NEW(NODE)",  # Node.__init__, inlined (the name is the class's)
        "    node.backward_fn = RUN",
        f"    node.next_functions = ({edges})",
        f"    node.input_meta = ({metas})",
        "    node.ctx = (VJP, cargs, kwargs)",
        "    node.saved = saved",
        "    if ANOMALY[0] and is_anomaly_enabled():",
        "        node.metadata['trace'] = forward_trace()",
    ]
    if single:  # one Tensor output: its history, inline (``attach``'s common case)
        lines += [
            "    if type(out) is not T:",
            "        attach(node, out)",
            "        return out",
            "    if FROM_NP[out._edata.dtype].category >= 2:",
            "        out._ekeys |= AB",
            "        out.grad_fn = node",
            "        if out._output_nr:",
            "            out._output_nr = 0",
        ]
        if vjp.wants_result:
            lines += [
                "    kept = node.result = SAVED_OUTPUT(out)",
                "    saved.append(SavedOut(kept, NAME, 0))",
            ]
        if op.is_view:  # NOTE [views of a rewritten base]
            lines += ["    if out._base is not None:", "        TRACK(out, x0)"]
        lines.append("    return out")
    elif _fixed_tensors(op._schema.returns):  # several Tensor outputs, inline too
        lines += _attach_outputs(len(op._schema.returns), vjp)
    else:
        lines.append("    attach(node, out)")
        if op.is_view:  # (split, unbind: a list of views) NOTE [views of a rewritten base]
            lines += [
                "    for o in out:",
                "        if isinstance(o, T) and o._base is not None:",
                "            TRACK(o, x0, True)",  # NOTE [view creation meta]
            ]
        lines.append("    return out")
    scope = _scope(
        op, below, T=Tensor, AB=AUTOGRAD_BIT, ACTIVE=state.ACTIVE, EDGE=gradient_edge,
        FROM_NP=FROM_NUMPY, NODE=vjp.cls, NAME=vjp.name, RUN=runner, VJP=vjp, ANOMALY=ANOMALY,
        is_anomaly_enabled=is_anomaly_enabled, forward_trace=forward_trace, Saved=SavedTensor,
        SavedOut=SavedOutput,
        attach=attach, SAVED_OUTPUT=saved_output, NEW=object.__new__, NO_EDGE=NO_EDGE,
        TRACK=track, NOGRAD_VIEW=nograd_view, HOOKS=saved_hooks.STACK, FALLBACK=fallback,
    )  # fmt: skip
    return define(lines, scope, "kernel", f"autograd recorder {op}")


def _fixed_tensors(returns: Any) -> bool:
    """A fixed tuple of several plain Tensor returns (``nll_loss_forward``, ``max.dim``)."""
    return len(returns) > 1 and all(
        r.type.base == "Tensor" and not r.type.is_list and not r.type.optional for r in returns
    )


def _attach_outputs(k: int, vjp: VJP) -> list[str]:
    """Lines giving each of ``k`` outputs its history (``attach`` for a tuple, unrolled):
    differentiable ones (floating, and marked so in the entry) get the node; ``out_meta``
    says what to fill a missing gradient with; only the outputs the formula reads are kept."""
    lines = [
        f"    if type(out) is not tuple or len(out) != {k}:",  # a return_types tuple, ...
        "        attach(node, out)",
        "        return out",
    ]
    flags = vjp.outputs or (True,) * k
    for i in range(k):
        if flags[i]:
            lines += [
                f"    o = out[{i}]",  # (None where a backward op skipped an output)
                "    if isinstance(o, T) and (dt := FROM_NP[o._edata.dtype]).category >= 2:",
                "        o._ekeys |= AB",
                "        o.grad_fn = node",
                f"        o._output_nr = {i}",
                f"        om{i} = (o._edata.shape, dt)",
                "    else:",
                f"        om{i} = None",
            ]
        else:
            lines.append(f"    om{i} = None")
    metas = "".join(f"om{i}, " for i in range(k))
    lines += [
        f"    node.n_outputs = {k}",
        "    node._sequence = True",
        f"    node.out_meta = ({metas})",
    ]
    if vjp.wants_result:
        reads = vjp.result_reads
        kept = [i for i in range(k) if reads is None or i in reads]
        for i in kept:
            lines += [
                f"    r{i} = out[{i}]",
                f"    if isinstance(r{i}, T):",
                f"        r{i} = SAVED_OUTPUT(r{i})",
                f"        saved.append(SavedOut(r{i}, NAME, {i}))",
            ]
        items = "".join(f"r{i}, " if i in kept else "None, " for i in range(k))
        lines.append(f"    node.result = ({items})")
    lines.append("    return out")
    return lines


def make_runner(
    vjp: VJP,
    with_meta: Callable[..., tuple[Any, ...]],
    relinked: Callable[[Node, Any], Any],
    unpacked: Callable[[Node, Any], Any],
    flatten: Callable[[Any, tuple[int, ...]], list[Any]],
) -> Runner:
    """``backward_fn(node, grads)`` for nodes of the derivative entry ``vjp``: checks the
    saved tensors' versions (NOTE [saved tensor versions]) and calls the formula with what
    it asks for."""
    lines = [
        "def run(node, grads):",
        "    for s in node.saved:",  # SavedTensor.unpack, inlined: it raises on a mismatch
        "        t = s.tensor",  # (None once released: the second-backward error)
        "        if t is None or (0 if (vc := t._vc) is None else vc[0]) != s.version:",
        "            s.unpack()",
        "    _, args, kwargs = node.ctx",
    ]
    if vjp.meta_args:  # NOTE [shape-only arguments]
        lines.append("    args = WITH_META(args, META_ARGS, node)")
    lines.append("    g = tuple(grads) if node._sequence else grads[0]")
    extra = ""
    if vjp.wants_needs:
        lines.append("    needs = tuple([e[0] is not None for e in node.next_functions])")
        extra += "needs=needs, "
    if vjp.wants_result:
        lines += [
            "    result = node.result",
            "    if local.grad_enabled:  # create_graph: the result is differentiable again",
            "        result = RELINKED(node, result)",
            "    else:",
            "        result = UNPACKED(node, result)",
        ]
        extra += "result=result, "
    call = f"FORMULA(g, *args, {extra}**kwargs)"
    if any(a.type.base == "Tensor" and a.type.is_list for a in vjp.op._schema.arguments):
        # one gradient per entry of next_functions: a Tensor[] parameter's list, flattened
        lines.append(f"    return FLATTEN({call}, node._sizes)")
    else:
        lines.append(f"    return {call}")
    scope = {
        "WITH_META": with_meta, "META_ARGS": vjp.meta_args, "RELINKED": relinked,
        "UNPACKED": unpacked, "FORMULA": vjp.formula, "local": state.local, "FLATTEN": flatten,
    }  # fmt: skip
    return define(lines, scope, "run", f"backward of {vjp.name}")  # type: ignore[no-any-return]
