"""Lazy IR to fx: the graph a sync cut becomes a ``GraphModule`` over ndarrays.

NOTE [lowering]
Each input of the cut graph (a value computed before) becomes a placeholder ``x<i>``, each
Python number a ``p<j>`` (so a compiled graph serves any values), in the order the executor
passes them. Nodes map to calls, in the lazy graph's order:

- ``call``: the op, its arguments rebuilt from the template (``Slot`` -> the input's fx node,
  ``Param`` -> its placeholder); named after the op (``add``, ``add_1``, ``sum_1``). A value
  of a call whose schema returns one tensor is its array; any other call's value is the tuple
  of its outputs, flattened, read by ``operator.getitem`` nodes. An argument the op writes is
  first copied (``array_ops.copy``): the op writes the copy, and the copy's node stands for
  the written value from then on (the in-place reuse pass removes the copy when the old value
  is dead: ``ember/compiler/inplace.py``).
- ``view``: ``array_ops.view`` with the geometry;
- ``write``: a copy of the base laid out by its strides (``copy_laid_out``), then
  ``write_region_`` into it; the copy's node stands for the written base.

The output returns every output of every node the sync keeps, in graph order. Values are
ndarrays, so the graph runs on the cpu kernels (``ember/compiler/tiers.py``), never through
the dispatcher's upper keys.
"""

from __future__ import annotations

import operator
from typing import Any

from ember.compiler import array_ops
from ember.compiler.graph_meta import array_meta, single_output, tensor_meta
from ember.fx.graph import Graph
from ember.fx.graph_module import GraphModule
from ember.fx.node import Node as FxNode
from ember.fx.passes.shape_prop import TensorMetadata
from ember.lazy.ir import Node, Param, Slot


def lower(
    order: list[Node],
    input_values: list[tuple[Node, int]],
    arrays: list[Any],
    kept: tuple[bool, ...],
    donated: frozenset[int] = frozenset(),
) -> GraphModule:
    """The ``GraphModule`` of a cut lazy graph (NOTE [lowering]); ``input_values``: the
    (node, output) pairs its inputs hold, in argument order; ``arrays`` their values now;
    ``donated``: input positions whose arrays the graph may write."""
    g = Graph()
    values: dict[tuple[int, int], FxNode] = {}
    for i, ((n, k), arr) in enumerate(zip(input_values, arrays, strict=True)):
        ph = g.placeholder(f"x{i}")
        ph.meta["tensor_meta"] = array_meta(arr)
        ph.meta["input"] = i
        if i in donated:
            ph.meta["donated"] = True
        values[(id(n), k)] = ph
    params: list[FxNode] = []
    for node in order:
        for p in node.params:
            ph = g.placeholder(f"p{len(params)}")
            ph.meta["param"] = type(p)
            params.append(ph)
    q = 0
    for node in order:
        mine = params[q : q + len(node.params)]
        q += len(node.params)
        ins = [values[(id(n), k)] for n, k in node.inputs]
        if node.kind == "view":
            base_shape, base_strides, shape, dt, strides, offset = node.args
            v = g.call_function(
                array_ops.view, (ins[0], base_strides, shape, dt, strides, offset), name="view"
            )
            v.meta["tensor_meta"] = tensor_meta(*node.meta[0])
            src = ins[0].meta.get("tensor_meta")
            if src is not None:
                v.meta["base"] = (tuple(base_shape), src.dtype.np)
            values[(id(node), 0)] = v
        elif node.kind == "write":
            base_shape, base_strides, shape, dt, strides, offset = node.args
            c = g.call_function(array_ops.copy_laid_out, (ins[0], base_strides), name="copy")
            c.meta["tensor_meta"] = tensor_meta(*node.meta[0])
            g.call_function(
                array_ops.write_region_, (c, ins[1], shape, dt, strides, offset), name="write"
            )
            values[(id(node), 0)] = c
        else:
            _lower_call(g, node, ins, mine, values)
    outs: list[FxNode] = []
    for node, keep in zip(order, kept, strict=True):
        if keep:
            outs.extend(values[(id(node), k)] for k in range(node.n_out))
    g.output(tuple(outs))
    gm = GraphModule({}, g)
    gm.meta["arrays"] = True
    # the id of the recorded node each value comes from (ember.lazy.debug.lowered)
    gm.meta["recorded"] = {fx: k[0] for k, fx in values.items() if fx.op != "placeholder"}
    return gm


def _lower_call(
    g: Graph,
    node: Node,
    ins: list[FxNode],
    params: list[FxNode],
    values: dict[tuple[int, int], FxNode],
) -> None:
    op = node.op
    assert op is not None
    args_in = list(ins)
    for slot in node.written:  # the op writes a copy (NOTE [lowering])
        c = g.call_function(array_ops.copy, (ins[slot],), name="copy")
        c.meta["tensor_meta"] = ins[slot].meta.get("tensor_meta")
        c.meta["written_by"] = op
        args_in[slot] = c
    args = _fill(node.args, args_in, params)
    kwargs = _fill(node.kwargs, args_in, params)
    call = g.call_function(op, args, kwargs, name=op.overloadpacket.__name__)
    flat = node.n_out - len(node.written)
    metas = _output_metas(node, flat, args_in)
    if single_output(op) and flat == 1:
        call.meta["tensor_meta"] = metas[0]
        values[(id(node), 0)] = call
    else:
        call.meta["tensor_meta"] = tuple(metas[:flat])
        for k in range(flat):
            item = g.call_function(operator.getitem, (call, k), name="getitem")
            item.meta["tensor_meta"] = metas[k]
            values[(id(node), k)] = item
    for j, slot in enumerate(node.written):
        values[(id(node), flat + j)] = args_in[slot]


def _output_metas(node: Node, flat: int, args_in: list[FxNode]) -> list[TensorMetadata | None]:
    """Metadata of a call's flat outputs: the recorded ones when every output is fresh; an
    in-place op's result is its first argument's."""
    if len(node.meta) == flat:
        return [tensor_meta(*m) for m in node.meta]
    op = node.op
    assert op is not None
    if flat == 1 and op._schema.is_inplace and node.written:
        return [args_in[node.written[0]].meta.get("tensor_meta")]
    return [None] * flat


def _fill(x: Any, ins: list[FxNode], params: list[FxNode]) -> Any:
    if type(x) is Slot:
        return ins[x.i]
    if type(x) is Param:
        return params[x.j]
    if isinstance(x, tuple):
        return tuple(_fill(e, ins, params) for e in x)
    if isinstance(x, list):
        return [_fill(e, ins, params) for e in x]
    if isinstance(x, dict):
        return {k: _fill(v, ins, params) for k, v in x.items()}
    return x
