"""The lazy device's IR: nodes recorded by the Lazy key, cut into graphs at a sync.

A ``Node`` is one step of a computation; a ``Value`` is ``(node, output index)``. Kinds:

- ``data``: a graph input, an ndarray already computed (a cpu tensor moved to the device,
  a 0-dim cpu tensor mixed into an op, a tensor synced earlier);
- ``call``: an op of the registry, run on the cpu kernels with its tensor arguments taken
  from ``inputs``; the arguments it writes are copied first and their new values are its
  last outputs (NOTE [lazy mutation] in ``recorder.py``);
- ``view``: a view (shape, strides, offset) of a base's storage;
- ``write``: a base's storage with a view of it replaced by new values.

Python numbers in ``Scalar`` and ``float`` arguments are graph *parameters*: they are kept
in ``params``, not in the node's key, so a learning rate that changes every step reuses the
compiled graph. ``key`` is everything else the code depends on: kind, op, the arguments'
structure, the inputs' dtypes and ranks (NOTE [graph keys] in ``executor.py``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ember.ops.registry import OpOverload


class Slot:
    """Where a call's ``i``-th tensor input goes in its arguments."""

    __slots__ = ("i",)

    def __init__(self, i: int) -> None:
        self.i = i

    def __repr__(self) -> str:
        return f"%{self.i}"


class Param:
    """Where a call's ``j``-th parameter (a Python number) goes in its arguments."""

    __slots__ = ("j",)

    def __init__(self, j: int) -> None:
        self.j = j

    def __repr__(self) -> str:
        return f"${self.j}"


class Node:
    """One recorded step. ``value`` holds its outputs once computed (nothing runs twice)."""

    __slots__ = (
        "kind", "op", "args", "kwargs", "inputs", "params", "written", "n_out", "key",
        "value", "size", "meta", "__weakref__",
    )  # fmt: skip

    def __init__(
        self,
        kind: str,
        op: OpOverload | None,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        inputs: tuple[Value, ...],
        params: tuple[Any, ...],
        written: tuple[int, ...],
        n_out: int,
        meta: tuple[Any, ...] = (),
    ) -> None:
        self.kind = kind
        self.op = op
        self.args = args
        self.kwargs = kwargs
        self.inputs = inputs
        self.params = params
        self.written = written  # input slots the op writes (copied before the call)
        self.n_out = n_out
        self.meta = meta  # per output: (shape, strides in elements, numpy dtype)
        self.value: list[Any] | None = None
        if op is None:  # view, write: the arguments are a geometry, already hashable
            self.key = (kind, None, args, (), (), written, n_out)
        else:
            self.key = (
                kind,
                op,
                _structure(args),
                _structure(kwargs),
                tuple(type(p).__name__ for p in params),
                written,
                n_out,
            )
        # nodes not yet computed that this one needs (an over-count where paths join),
        # to cut a graph that grows without a sync (NOTE [graph size])
        self.size = 1 + sum(n.size for n, _ in inputs if n.value is None and n.kind != "data")


Value = tuple[Node, int]


def data_node(array: np.ndarray) -> Node:
    """A graph input holding ``array``."""
    item = array.itemsize
    node = Node.__new__(Node)  # no structure to describe: built directly, once per input
    node.kind, node.op, node.args, node.kwargs, node.inputs = "data", None, (), {}, ()
    node.params, node.written, node.n_out, node.size = (), (), 1, 1
    node.meta = ((array.shape, tuple(s // item for s in array.strides), array.dtype),)
    node.value = [array]
    node.key = ("data", array.dtype.str, array.ndim)
    return node


def _structure(x: Any) -> Any:
    """A hashable description of arguments, for keys (lists become tuples)."""
    if isinstance(x, (Slot, Param)):
        return (type(x).__name__, x.i if isinstance(x, Slot) else x.j)
    if isinstance(x, (list, tuple)):
        return tuple(_structure(e) for e in x)
    if isinstance(x, dict):
        return tuple((k, _structure(v)) for k, v in x.items())
    try:
        hash(x)
    except TypeError:
        return repr(x)
    return x


def describe(node: Node) -> str:
    """One line of text for a node (for ``dump_ir``)."""
    if node.kind == "data":
        shape, _, dt = node.meta[0]
        return f"data {list(shape)} {dt}"
    if node.kind in ("view", "write"):
        return f"{node.kind} {node.args}"
    parts = [repr(a) for a in node.args] + [f"{k}={v!r}" for k, v in node.kwargs.items()]
    params = f" params={list(node.params)}" if node.params else ""
    return f"{node.op}({', '.join(parts)}){params}"
