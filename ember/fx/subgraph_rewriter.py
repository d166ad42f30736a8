"""``replace_pattern``: rewrite every occurrence of a pattern in a ``GraphModule``, as
``torch.fx.subgraph_rewriter``.

The pattern and the replacement are functions (traced with ``symbolic_trace``), graphs or
graph modules taking the same inputs. Each occurrence of the pattern
(``passes.utils.matcher_utils.SubgraphMatcher``) is replaced by a copy of the replacement
wired to the matched inputs; the module is recompiled.

>>> from ember.fx.subgraph_rewriter import replace_pattern
>>> def f(x):
...     return ember.relu(x + 1) * 2
>>> gm = ember.fx.symbolic_trace(f)
>>> _ = replace_pattern(gm, lambda a: ember.relu(a), lambda a: ember.sigmoid(a))
>>> print(gm.code.strip())
def forward(self, x):
    add = x + 1;  x = None
    sigmoid = ember.sigmoid(add);  add = None
    mul = sigmoid * 2;  sigmoid = None
    return mul
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple

from ember.fx._symbolic_trace import symbolic_trace
from ember.fx.graph import Graph
from ember.fx.graph_module import GraphModule, _copy_attr
from ember.fx.node import Node
from ember.fx.passes.utils.matcher_utils import InternalMatch, SubgraphMatcher
from ember.nn.modules.module import Module

__all__ = ["Match", "ReplacedPatterns", "replace_pattern", "replace_pattern_with_filters"]


class Match(NamedTuple):
    """One replaced occurrence: the graph node matching the pattern's (first) result, and
    the map from pattern nodes to the graph nodes they matched."""

    anchor: Node
    nodes_map: dict[Node, Node]


@dataclass
class ReplacedPatterns:
    """One replaced occurrence, with the nodes the replacement added."""

    anchor: Node
    nodes_map: dict[Node, Node]
    replacements: list[Node]


def _graph_of(x: Callable[..., Any] | Graph | GraphModule) -> Graph:
    if isinstance(x, GraphModule):
        return x.graph
    if isinstance(x, Graph):
        return x
    return symbolic_trace(x).graph


def replace_pattern(
    gm: GraphModule,
    pattern: Callable[..., Any] | GraphModule,
    replacement: Callable[..., Any] | GraphModule,
) -> list[Match]:
    """Replace each occurrence of ``pattern`` in ``gm`` by ``replacement`` (module
    docstring); returns the occurrences replaced."""
    return [
        Match(anchor=r.anchor, nodes_map=r.nodes_map)
        for r in replace_pattern_with_filters(gm, pattern, replacement)
    ]


def replace_pattern_with_filters(
    gm: GraphModule,
    pattern: Callable[..., Any] | Graph | GraphModule,
    replacement: Callable[..., Any] | Graph | GraphModule | None = None,
    match_filters: list[Callable[[InternalMatch, Graph, Graph], bool]] | None = None,
    ignore_literals: bool = False,
    replacement_callback: Callable[[InternalMatch, Graph, Graph], Graph] | None = None,
    node_name_match: str = "",
) -> list[ReplacedPatterns]:
    """``replace_pattern`` that replaces only the occurrences every ``match_filters``
    function accepts (``filter(match, original_graph, pattern_graph)``); literals may
    match any literal (``ignore_literals``); the replacement may be made per match
    (``replacement_callback``).

    >>> from ember.fx.subgraph_rewriter import replace_pattern_with_filters
    >>> gm = ember.fx.symbolic_trace(lambda x: (x * 2) + (x * 3))
    >>> only_two = lambda m, g, p: 2 in m.anchors[0].args
    >>> r = replace_pattern_with_filters(gm, lambda a: a * 2, lambda a: a + a, [only_two])
    >>> len(r), gm(ember.ones(1))
    (1, tensor([5.]))
    """
    graph = gm.graph
    pattern_graph = _graph_of(pattern)
    matcher = SubgraphMatcher(pattern_graph, ignore_literals=ignore_literals)
    matches = [
        m
        for m in matcher.match(graph, node_name_match=node_name_match)
        if all(f(m, graph, pattern_graph) for f in match_filters or ())
    ]
    common = _graph_of(replacement) if replacement is not None else None
    if common is None and replacement_callback is None:
        raise ValueError(
            "replace_pattern: give a replacement (a function, Graph or GraphModule) or a "
            "replacement_callback"
        )
    changed: dict[Node, Node] = {}  # returned nodes of earlier matches -> their replacements
    done: list[ReplacedPatterns] = []
    for m in matches:
        rgraph = replacement_callback(m, graph, pattern_graph) if replacement_callback else common
        assert rgraph is not None
        r_inputs = [n for n in rgraph.nodes if n.op == "placeholder"]
        if len(r_inputs) != len(m.placeholder_nodes):
            raise ValueError(
                f"replace_pattern: the pattern takes {len(m.placeholder_nodes)} inputs but the "
                f"replacement takes {len(r_inputs)}; give both the same parameters"
            )
        val_map: dict[Node, Any] = {}
        for rn, gn in zip(r_inputs, m.placeholder_nodes, strict=True):
            if isinstance(gn, Node) and gn in changed:
                new = changed[gn]
                for pn, v in list(m.nodes_map.items()):
                    if v is gn:
                        m.nodes_map[pn] = new
                m.placeholder_nodes[m.placeholder_nodes.index(gn)] = new
                gn = new
            val_map[rn] = gn
        insert_point = _insert_point(graph, m.returning_nodes)
        with graph.inserting_before(insert_point):
            copied = graph.graph_copy(rgraph, val_map)
        outs = (
            (copied,)
            if isinstance(copied, Node) or not isinstance(copied, (tuple, list))
            else tuple(copied)
        )
        if len(outs) != len(m.returning_nodes):
            raise ValueError(
                f"replace_pattern: the pattern returns {len(m.returning_nodes)} values but the "
                f"replacement returns {len(outs)}"
            )
        for gn, new in zip(m.returning_nodes, outs, strict=True):
            gn.replace_all_uses_with(new)
            changed[gn] = new
        for pn in reversed(list(pattern_graph.nodes)):
            if pn.op not in ("placeholder", "output"):
                graph.erase_node(m.nodes_map[pn])
        added = [v for k, v in val_map.items() if isinstance(v, Node) and k.op != "placeholder"]
        done.append(ReplacedPatterns(m.anchors[0], m.nodes_map, added))
    if isinstance(replacement, Module):
        for n in _graph_of(replacement).nodes:
            if n.op in ("get_attr", "call_module") and not _has_attr(gm, str(n.target)):
                _copy_attr(replacement, gm, str(n.target))
    gm.recompile()
    return done


def _insert_point(graph: Graph, returning: list[Node]) -> Node:
    """Where the replacement goes: before the first user of a returned node, else right
    after the last returned node."""
    users = {u for n in returning for u in n.users}
    after = None
    for n in graph.nodes:
        if n in users:
            return n
    for n in reversed(graph.nodes):
        if n in returning:
            break
        after = n
    if after is None:
        raise RuntimeError("replace_pattern: the matched nodes have no place to insert after")
    return after


def _has_attr(module: Any, qualified: str) -> bool:
    obj = module
    for part in qualified.split("."):
        if not hasattr(obj, part):
            return False
        obj = getattr(obj, part)
    return True
