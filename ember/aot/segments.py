"""A graph break split into compiled pieces: ``ember.compile`` of a function that reads a
traced value (``if x.sum() > 0:``, ``float(loss)``) runs the graph before the read and the
graph after it, each compiled ahead of time, with the value read as a guard.

# NOTE [graph break segments]
On a signature whose trace reads a value, the function is traced once more with real
tensors (clones of the arguments, so nothing the user holds is written): each scalar read
(``item()``, ``bool()``, ``float()``, ``int()``) is recorded as a ``_local_scalar_dense``
node and the Python code goes on with the value, so the trace follows the path that value
chose. The trace is cut after each read into pieces, in program order; piece ``i`` takes
the arguments and earlier pieces' values it uses and returns the tensor read at its end
and the values later pieces (or the outputs) use. Each piece is compiled by
``aot_function`` with the backend's compilers, so it has its own forward and backward
graphs, and autograd flows from piece to piece through the tensors they pass.

A call runs piece 0, reads the value, and runs the piece compiled for that value (a tree
of pieces keyed by the values read: ``bool`` reads have two branches). A value not seen
before traces the function again on the call's arguments and grafts the new path on; a
piece whose new branch needs more of its values is recompiled to return them, and the
call starts over (pieces write nothing the user holds and draw no random numbers, so
running them again changes nothing). Past ``config.cache_size_limit`` paths, or for a
function this cannot split (it writes a tensor, draws random numbers, reads values other
than scalars, makes a tensor whose shape depends on values, or its Python code traces
differently for the same values), the signature runs on the lazy device instead
(``fallback``), as before.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ember import empty_strided
from ember._graph_break import GraphBreak
from ember._tensor import Tensor
from ember.autograd.grad_mode import no_grad
from ember.fx.experimental.proxy_tensor import _LOCAL_SCALAR, _trace, _Tracker
from ember.fx.graph import Graph
from ember.fx.graph_module import GraphModule
from ember.fx.node import Node, target_is_impure
from ember.nn.parameter import Parameter
from ember.ops.registry import OpOverload
from ember.utils._pytree import tree_flatten, tree_unflatten

__all__ = ["SegmentedFunction", "Unsplittable"]


class Unsplittable(Exception):
    """The function cannot run as pieces (NOTE [graph break segments])."""


class _Piece:
    """One compiled piece: the nodes of a trace between two reads."""

    def __init__(self, gm: GraphModule, nodes: list[Node], read: Node | None) -> None:
        self.gm = gm  # the trace the nodes belong to (its constants)
        self.nodes = nodes
        self.ops = [(n.target, n.name) for n in nodes]
        self.read = read  # the _local_scalar_dense node ending it
        self.value: Any = read.meta.get("read_value") if read is not None else None
        self.inputs: list[str] = []
        self.outputs: list[str] = []
        self.compiled: Callable[..., Any] | None = None
        self.children: dict[Any, _Piece] = {}


def _is_write(n: Node) -> bool:
    t = n.target
    return isinstance(t, OpOverload) and t._schema.is_mutable


def _split(gm: GraphModule, reads: list[Any]) -> tuple[list[_Piece], Any]:
    """The pieces of one trace and its output (a tree of nodes and constants)."""
    pieces: list[_Piece] = []
    current: list[Node] = []
    k = 0
    out: Any = None
    for n in gm.graph.nodes:
        if n.op == "placeholder":
            continue
        if n.op == "output":
            out = n.args[0]
            break
        if (
            n.op == "call_function"
            and n.target is not _LOCAL_SCALAR
            and (_is_write(n) or target_is_impure(n.target))
        ):
            raise Unsplittable(f"{n.target} writes a tensor or draws random numbers")
        if n.op == "call_function" and n.target is _LOCAL_SCALAR:
            n.meta["read_value"] = reads[k]
            k += 1
            pieces.append(_Piece(gm, current, n))
            current = []
            continue
        current.append(n)
    pieces.append(_Piece(gm, current, None))
    return pieces, out


def _needs(pieces: list[_Piece], out: Any) -> None:
    """Each piece's inputs (names of values made elsewhere) and the values it returns: the
    tensor it reads, then those later pieces or the outputs use."""
    owner: dict[str, int] = {}
    for i, p in enumerate(pieces):
        for n in p.nodes:
            owner[n.name] = i
    used_later: list[set[str]] = [set() for _ in pieces]
    for i, p in enumerate(pieces):
        inputs: list[str] = []
        uses = [a for n in p.nodes for a in n.all_input_nodes]
        if p.read is not None:
            uses.append(p.read.args[0])
        for a in uses:
            if a.op == "get_attr":
                continue
            j = owner.get(a.name)
            if j == i:
                continue
            if a.name not in inputs:
                inputs.append(a.name)
            if j is not None:
                used_later[j].add(a.name)
        p.inputs = inputs
    leaves, _ = tree_flatten(out)
    for leaf in leaves:
        if isinstance(leaf, Node) and leaf.name in owner:
            used_later[owner[leaf.name]].add(leaf.name)
    for i, p in enumerate(pieces):
        read = [p.read.args[0].name] if p.read is not None else []
        order = [n.name for n in p.nodes if n.name in used_later[i]]
        if read and read[0] in order:
            order.remove(read[0])
        p.outputs = read + order


def _piece_module(p: _Piece) -> GraphModule:
    g = Graph()
    env: dict[str, Node] = {}
    by_name = {n.name: n for n in p.gm.graph.nodes}
    for name in p.inputs:
        ph = g.placeholder(name)
        ph.meta.update(by_name[name].meta)
        env[name] = ph

    def arg(a: Node) -> Node:
        if a.name not in env and a.op == "get_attr":  # a constant an earlier piece made
            env[a.name] = g.node_copy(a)
        return env[a.name]

    for n in p.nodes:
        env[n.name] = g.node_copy(n, arg)
    if p.read is not None and p.read.args[0].name not in env:
        env[p.read.args[0].name] = g.placeholder(p.read.args[0].name)
    g.output(tuple(env[name] for name in p.outputs))
    return GraphModule(p.gm, g)


class SegmentedFunction:
    """A signature of a function with scalar reads, run as compiled pieces (NOTE [graph
    break segments]); ``compile_piece(gm)`` compiles one (an ``aot_function``)."""

    def __init__(
        self,
        fn: Callable[..., Any],
        compile_piece: Callable[[GraphModule], Callable[..., Any]],
        fallback: Callable[..., Any],
        limit: int,
        eager: Callable[..., Any] | None = None,
    ) -> None:
        self.fn = fn
        self.compile_piece = compile_piece
        self.fallback = fallback
        #: what runs instead when the function has a side effect (NOTE [compile side
        #: effects]): the lazy device would run it too, but eagerly it runs as written
        self.eager = eager if eager is not None else fallback
        self.limit = limit
        self.root: _Piece | None = None
        self.out: dict[int, Any] = {}  # id(last piece) -> its path's output tree
        self.paths = 0
        self.broken: str | None = None  # why it runs on the lazy device instead

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.broken is not None:
            return self.fallback(*args, **kwargs)
        try:
            if self.root is None:
                self._graft(args, kwargs, None, [])
            for _ in range(self.limit + 2):
                result = self._run(args, kwargs)
                if result is not _RETRY:
                    return result
            raise Unsplittable("the pieces kept changing")
        except GraphBreak as e:
            self.broken = str(e)
            self.fallback = self.eager
            return self.fallback(*args, **kwargs)
        except Unsplittable as e:
            self.broken = str(e)
            return self.fallback(*args, **kwargs)

    def _run(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        flat, _ = tree_flatten((args, kwargs))
        env: dict[str, Any] = {f"arg{i}_1": a for i, a in enumerate(flat)}
        piece = self.root
        assert piece is not None
        path: list[Any] = []
        while True:
            assert piece.compiled is not None
            outs = piece.compiled(*[env[name] for name in piece.inputs])
            outs = outs if isinstance(outs, (tuple, list)) else (outs,)
            env.update(zip(piece.outputs, outs, strict=True))
            if piece.read is None:
                return _rebuild(self.out[id(piece)], env)
            with no_grad():
                value = outs[0].item()
            path.append(value)
            nxt = piece.children.get(value)
            if nxt is None:
                if self.paths >= self.limit:
                    raise Unsplittable(f"more than {self.limit} paths of scalar reads")
                self._graft(args, kwargs, self.root, path)
                return _RETRY
            piece = nxt

    def _graft(
        self, args: tuple[Any, ...], kwargs: dict[str, Any], root: _Piece | None, path: list[Any]
    ) -> None:
        """Trace the path these arguments take and add it to the tree."""
        gm, reads = _trace_reads(self.fn, args, kwargs)
        pieces, out = _split(gm, reads)
        _needs(pieces, out)
        self.paths += 1
        if root is None:
            for p in pieces:
                self._compile(p)
            for a, b in zip(pieces, pieces[1:], strict=False):
                a.children[a.value] = b
            self.root = pieces[0]
            self.out[id(pieces[-1])] = out
            return
        old = root
        for depth, new in enumerate(pieces):
            if old.ops != new.ops:
                raise Unsplittable("the function traced differently for the same values")
            missing = [name for name in new.outputs if name not in old.outputs]
            if missing:  # a new branch needs more of this piece's values
                old.outputs = old.outputs + missing
                self._compile(old)
            if depth + 1 >= len(pieces) or new.value not in old.children:
                break
            old = old.children[new.value]
        rest = pieces[depth + 1 :]
        for p in rest:
            self._compile(p)
        if rest:
            old.children[new.value] = rest[0]
            for a, b in zip(rest, rest[1:], strict=False):
                a.children[a.value] = b
            self.out[id(rest[-1])] = out

    def _compile(self, p: _Piece) -> None:
        p.compiled = self.compile_piece(_piece_module(p))


class _Retry:
    pass


_RETRY = _Retry()


def _rebuild(out: Any, env: dict[str, Any]) -> Any:
    leaves, spec = tree_flatten(out)
    return tree_unflatten([env[x.name] if isinstance(x, Node) else x for x in leaves], spec)


def _trace_reads(
    fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[GraphModule, list[Any]]:
    """``fn`` traced with real clones of its tensor arguments, scalar reads recorded."""
    flat, spec = tree_flatten((args, kwargs))
    clones = []
    for a in flat:
        if isinstance(a, Tensor):
            if type(a) is not Tensor and not _is_parameter(a):
                raise Unsplittable(f"a {type(a).__name__} argument")
            with no_grad():
                c = empty_strided(tuple(a.shape), tuple(a.stride()), dtype=a.dtype).copy_(a)
            if a.requires_grad:
                c.requires_grad_(True)
            clones.append(c)
        else:
            clones.append(a)

    def run(*xs: Any) -> Any:
        a, k = tree_unflatten(list(xs), spec)
        return fn(*a, **k)

    tracker = _Tracker({}, functionalize=False)
    tracker.allow_reads = True
    try:
        gm, _, _ = _trace(run, tuple(clones), tracker, "real", True)
    except (Unsplittable, GraphBreak):
        raise
    except Exception as e:  # noqa: BLE001 - any other reason this trace fails
        raise Unsplittable(f"{type(e).__name__}: {e}") from e
    return gm, list(tracker.read_values)


def _is_parameter(a: Any) -> bool:
    return type(a) is Parameter
