"""``ember.fx``: the graph IR PyTorch users know as ``torch.fx``.

``Graph`` (a list of ``Node``s: ``placeholder``, ``get_attr``, ``call_function``,
``call_method``, ``call_module``, ``output``), ``GraphModule`` (runs a graph through
generated Python source), ``Interpreter`` and ``Transformer`` (run or rewrite a graph node by
node), ``map_arg``/``map_aggregate``, ``passes.ShapeProp``, and ``operator_schemas``
(argument normalisation), ``symbolic_trace``/``Tracer``/``Proxy``/``wrap`` (tracing Python code
into a graph) and ``subgraph_rewriter``. The lazy device's compiler works on these graphs
(``ember.compiler``). See ``docs/fx.md``.

>>> from ember.fx import Graph, GraphModule
>>> g = Graph()
>>> x = g.placeholder("x")
>>> y = g.call_function(ember.ops.aten.mul.Tensor, (x, x), name="mul")
>>> _ = g.output(y)
>>> GraphModule({}, g)(ember.tensor([3.0]))
tensor([9.])
"""

from ember.fx import operator_schemas, passes, subgraph_rewriter
from ember.fx._symbolic_trace import PH, Tracer, symbolic_trace, wrap
from ember.fx.graph import Graph
from ember.fx.graph_module import GraphModule
from ember.fx.interpreter import Interpreter, Transformer
from ember.fx.node import Node, map_aggregate, map_arg
from ember.fx.proxy import Proxy
from ember.fx.subgraph_rewriter import replace_pattern

__all__ = [
    "Graph", "GraphModule", "Interpreter", "Node", "PH", "Proxy", "Tracer", "Transformer",
    "map_arg", "map_aggregate", "operator_schemas", "passes", "replace_pattern",
    "subgraph_rewriter", "symbolic_trace", "wrap",
]  # fmt: skip
