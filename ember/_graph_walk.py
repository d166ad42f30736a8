"""``each_once``: a depth-first walk of a graph's nodes, each node once (by identity): the
walks of ``ember.func``'s reverse-mode transforms over the autograd graph, of the lazy
executor over its IR, and of aot_autograd over the gradient edges."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TypeVar

T = TypeVar("T")

__all__ = ["each_once"]


def each_once(stack: list[T]) -> Iterator[T]:
    """Pop ``stack`` until it is empty, yielding each node the first time it comes off it;
    the caller pushes a node's neighbours onto ``stack`` as it gets the node.

    >>> from ember._graph_walk import each_once
    >>> edges = {"a": ["b", "c"], "b": ["c"], "c": []}
    >>> stack, order = ["a"], []
    >>> for node in each_once(stack):
    ...     order.append(node)
    ...     stack.extend(edges[node])
    >>> order
    ['a', 'c', 'b']
    """
    seen: set[int] = set()
    while stack:
        node = stack.pop()
        if id(node) not in seen:
            seen.add(id(node))
            yield node
