"""``run_pass``: run one named pass over a graph, count what it did, show the graph after it.

``EMBER_COMPILER_DEBUG=1`` prints the graph after every pass (to stderr), with the pass's
name and what it changed.

>>> from ember.compiler.pass_manager import run_pass
>>> g = ember.fx.Graph(); x = g.placeholder("x")
>>> _ = g.call_function(ember.ops.aten.neg.default, (x,))  # nobody uses it
>>> _ = g.output(x)
>>> from ember.compiler.dce import eliminate_dead_code
>>> g = run_pass(g, eliminate_dead_code)
>>> len(g.nodes)
2
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

from ember.compiler import metrics
from ember.fx.graph import Graph

Pass = Callable[[Graph], Graph]


def debug_enabled() -> bool:
    return os.environ.get("EMBER_COMPILER_DEBUG", "") not in ("", "0")


def run_pass(graph: Graph, fn: Pass) -> Graph:
    """``fn(graph)`` (a pass edits the graph and returns it), then lint it; counts the
    nodes it removed in ``removed_by::<name>`` and prints the graph when debugging."""
    before = len(graph.nodes)
    graph = fn(graph)
    graph.lint()
    removed = before - len(graph.nodes)
    name = fn.__name__
    if removed > 0:
        metrics.count(f"removed_by::{name}", removed)
    if debug_enabled():
        print(f"[ember.compiler] after {name} ({removed:+d} nodes):\n{graph}", file=sys.stderr)
    return graph
