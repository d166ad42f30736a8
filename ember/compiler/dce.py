"""Dead code elimination: nodes whose values nobody uses and that do nothing else.

>>> from ember.compiler.dce import eliminate_dead_code
>>> g = ember.fx.Graph(); x = g.placeholder("x")
>>> _ = g.call_function(ember.ops.aten.exp.default, (x,))
>>> _ = g.output(x)
>>> [n.name for n in eliminate_dead_code(g).nodes]
['x', 'output']
"""

from __future__ import annotations

from ember.fx.graph import Graph


def eliminate_dead_code(graph: Graph) -> Graph:
    """Remove unused nodes without effects (``Node.is_impure``: writes, random numbers,
    placeholders and the output stay)."""
    graph.eliminate_dead_code()
    return graph
