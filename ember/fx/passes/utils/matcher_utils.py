"""``SubgraphMatcher``: where a pattern graph occurs in a graph, as
``torch.fx.passes.utils.matcher_utils``.

A pattern node matches a graph node with the same op and target whose arguments match in
turn (literals by equality, unless ``ignore_literals``); a pattern placeholder matches any
node or literal (unless ``match_placeholder``). A match is kept only if its inner nodes are
used nowhere outside it (the nodes the pattern returns may be), and overlapping matches are
dropped after the first.

>>> from ember.fx.passes.utils.matcher_utils import SubgraphMatcher
>>> pattern = ember.fx.symbolic_trace(lambda x: ember.relu(x) + 1).graph
>>> graph = ember.fx.symbolic_trace(lambda a: ember.relu(a * 2) + 1).graph
>>> [m.returning_nodes for m in SubgraphMatcher(pattern).match(graph)]
[[add]]
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ember.fx.graph import Graph
from ember.fx.node import Node

__all__ = ["InternalMatch", "SubgraphMatcher"]


@dataclass
class InternalMatch:
    """One occurrence of a pattern: ``nodes_map`` from pattern nodes to graph nodes (or, for
    a placeholder, the literal it matched)."""

    anchors: list[Node]
    nodes_map: dict[Node, Any] = field(default_factory=dict)
    placeholder_nodes: list[Any] = field(default_factory=list)
    returning_nodes: list[Node] = field(default_factory=list)
    name_node_map: dict[str, Node] = field(default_factory=dict)


class SubgraphMatcher:
    """Finds the occurrences of ``pattern`` (a ``Graph``) in other graphs."""

    def __init__(
        self,
        pattern: Graph,
        match_output: bool = False,
        match_placeholder: bool = False,
        remove_overlapping_matches: bool = True,
        ignore_literals: bool = False,
    ) -> None:
        self.pattern = pattern
        self.match_output = match_output
        self.match_placeholder = match_placeholder
        self.remove_overlapping_matches = remove_overlapping_matches
        self.ignore_literals = ignore_literals
        nodes = list(pattern.nodes)
        outputs = [n for n in nodes if n.op == "output"]
        if len(outputs) != 1:
            raise ValueError("SubgraphMatcher: the pattern graph needs exactly one output node")
        self.pattern_placeholder_nodes = [n for n in nodes if n.op == "placeholder"]
        returned = outputs[0].args[0]
        self.pattern_returning_nodes: list[Node] = (
            [returned]
            if isinstance(returned, Node)
            else [a for a in returned if isinstance(a, Node)]
        )
        if match_output:
            self.pattern_anchors = outputs
        else:
            self.pattern_anchors = [
                n for n in self.pattern_returning_nodes if n.op != "placeholder"
            ]
        if not self.pattern_anchors:
            raise ValueError(
                "SubgraphMatcher: the pattern computes nothing (it returns its inputs)"
            )

    # ------------------------------------------------------------------ node tests
    def _nodes_are_equal(self, pn: Node, gn: Node, node_name_match: str = "") -> bool:
        if not self.match_placeholder and pn.op == "placeholder":
            return True
        if node_name_match and node_name_match in gn.name:
            return True
        if pn.op != gn.op:
            return False
        if pn.op in ("placeholder", "output"):
            return True
        return bool(pn.target == gn.target)

    def _match_literals(self, pa: Any, ga: Any) -> bool:
        if self.ignore_literals and not isinstance(ga, Node):
            return True
        return type(pa) is type(ga) and pa == ga

    def _match_args(self, pa: Any, ga: Any, m: InternalMatch, name_match: str) -> bool:
        if isinstance(pa, Node):
            if pa.op == "placeholder" and not self.match_placeholder:
                return self._match_placeholder(pa, ga, m)
            return isinstance(ga, Node) and self._match_nodes(pa, ga, m, name_match)
        if isinstance(ga, Node):
            return False
        if isinstance(pa, (list, tuple)):
            return (
                isinstance(ga, (list, tuple))
                and len(pa) == len(ga)
                and all(self._match_args(p, g, m, name_match) for p, g in zip(pa, ga, strict=True))
            )
        if isinstance(pa, dict):
            return (
                isinstance(ga, dict)
                and pa.keys() == ga.keys()
                and all(self._match_args(pa[k], ga[k], m, name_match) for k in pa)
            )
        return self._match_literals(pa, ga)

    def _match_placeholder(self, pn: Node, ga: Any, m: InternalMatch) -> bool:
        if pn in m.nodes_map:
            mapped = m.nodes_map[pn]
            return (
                mapped is ga
                if isinstance(ga, Node)
                else (not isinstance(mapped, Node) and type(mapped) is type(ga) and mapped == ga)
            )
        if isinstance(ga, Node) and any(v is ga for v in m.nodes_map.values()):
            return False
        m.nodes_map[pn] = ga
        return True

    def _match_nodes(self, pn: Node, gn: Node, m: InternalMatch, name_match: str = "") -> bool:
        if pn in m.nodes_map:
            return m.nodes_map[pn] is gn
        if any(v is gn for v in m.nodes_map.values()):
            return False
        if not self._nodes_are_equal(pn, gn, name_match):
            return False
        if pn.op == "placeholder" and not self.match_placeholder:
            return self._match_placeholder(pn, gn, m)
        saved = dict(m.nodes_map)
        m.nodes_map[pn] = gn
        ok = (
            len(pn.args) == len(gn.args)
            and pn.kwargs.keys() == gn.kwargs.keys()
            and all(
                self._match_args(p, g, m, name_match) for p, g in zip(pn.args, gn.args, strict=True)
            )
            and all(self._match_args(pn.kwargs[k], gn.kwargs[k], m, name_match) for k in pn.kwargs)
        )
        if not ok:
            m.nodes_map = saved
        return ok

    def _is_contained(self, nodes_map: dict[Node, Any]) -> bool:
        """Whether no inner node of the match is used outside it."""
        inside = {gn: pn for pn, gn in nodes_map.items() if pn.op != "placeholder"}
        for gn, pn in inside.items():
            if pn in self.pattern_returning_nodes:
                continue
            if any(user not in inside for user in gn.users):
                return False
        return True

    # ------------------------------------------------------------------ matching
    def match(self, graph: Graph, node_name_match: str = "") -> list[InternalMatch]:
        """Every occurrence of the pattern in ``graph``, in the graph's order."""
        nodes = list(graph.nodes)
        candidates = [
            [gn for gn in nodes if self._nodes_are_equal(a, gn, node_name_match)]
            for a in self.pattern_anchors
        ]
        found: list[InternalMatch] = []

        def extend(i: int, m: InternalMatch) -> None:
            if i == len(self.pattern_anchors):
                done = self._finish(m)
                if done is not None:
                    found.append(done)
                return
            for gn in candidates[i]:
                saved = dict(m.nodes_map)
                if self._match_nodes(self.pattern_anchors[i], gn, m, node_name_match):
                    extend(i + 1, m)
                m.nodes_map = saved

        extend(0, InternalMatch(anchors=list(self.pattern_anchors)))
        if self.remove_overlapping_matches:
            found = self._remove_overlapping(found)
        return found

    def _finish(self, m: InternalMatch) -> InternalMatch | None:
        if not self._is_contained(m.nodes_map):
            return None
        if any(p not in m.nodes_map for p in self.pattern_placeholder_nodes):
            return None  # a pattern input that the matched part does not use
        out = InternalMatch(
            anchors=[m.nodes_map[a] for a in self.pattern_anchors],
            nodes_map=dict(m.nodes_map),
            placeholder_nodes=[m.nodes_map[p] for p in self.pattern_placeholder_nodes],
            returning_nodes=[m.nodes_map[r] for r in self.pattern_returning_nodes],
        )
        return out

    def _remove_overlapping(self, matches: list[InternalMatch]) -> list[InternalMatch]:
        kept: list[InternalMatch] = []
        taken: set[Node] = set()
        for m in matches:
            inner = {
                gn for pn, gn in m.nodes_map.items()
                if pn.op not in ("placeholder", "output") and isinstance(gn, Node)
            }  # fmt: skip
            if inner & taken:
                continue
            kept.append(m)
            taken |= inner
        return kept
