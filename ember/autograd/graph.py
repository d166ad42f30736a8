"""The backward graph: ``Node`` (a ``grad_fn``), ``AccumulateGrad`` (a leaf's sink), and
saved tensors checked against in-place changes.

# NOTE [saved tensor versions]
A node remembers the version of every tensor its formula reads. If one of them is modified
in place before backward runs, the formula would read the new values and give a wrong
gradient, so unpacking raises PyTorch's "modified by an inplace operation" error instead.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

from ember._tensor import Size
from ember.dtypes import FROM_NUMPY

if TYPE_CHECKING:
    from ember._tensor import Tensor

#: (node, which of its inputs); ``(None, 0)`` where no gradient flows, as in PyTorch
Edge = tuple["Node | None", int]
NO_EDGE: Edge = (None, 0)


class SavedTensor:
    """A tensor a formula needs, with its version at save time (NOTE [saved tensor versions]):
    an input of the node (``SavedOutput``: one of its outputs)."""

    __slots__ = ("tensor", "version", "node_name")
    output_nr: int | None = None  # which output of the node it is (None: an input)

    def __init__(self, tensor: Tensor, node_name: str) -> None:
        self.tensor = tensor
        vc = tensor._vc  # the counter itself: ``_version`` is a property call
        self.version = 0 if vc is None else vc[0]
        self.node_name = node_name

    @property
    def is_output(self) -> bool:
        return self.output_nr is not None

    def unpack(self) -> Tensor:
        t = self.tensor
        if t is None:
            raise RuntimeError(
                "Trying to backward through the graph a second time (or directly access saved "
                "tensors after they have already been freed). Saved intermediate values of the "
                "graph are freed when you call .backward() or autograd.grad(). Specify "
                "retain_graph=True if you need to backward through the graph a second time or if "
                "you need to access saved tensors after calling backward."
            )
        if t._version != self.version:
            kind = (
                f"output {self.output_nr} of {self.node_name}"
                if self.is_output
                else (f"an input of {self.node_name}")
            )
            raise RuntimeError(
                "one of the variables needed for gradient computation has been modified by an "
                f"inplace operation: [ember.{t.dtype._short}Tensor {list(t.shape)}], which is "
                f"{kind}, is at version {t._version}; expected version {self.version} instead. "
                "Hint: the operation that failed was the in-place one on this tensor; clone() it "
                "before modifying, or modify a copy."
            )
        return t


class SavedOutput(SavedTensor):
    """An output of the node a formula reads (NOTE [saved outputs] in ``kernel.py``)."""

    __slots__ = ("output_nr",)

    def __init__(self, tensor: Tensor, node_name: str, output_nr: int) -> None:
        super().__init__(tensor, node_name)
        self.output_nr = output_nr


class TensorMeta:
    """What a formula reads of an input it doesn't save: ``shape``, ``ndim``, ``dtype``
    (NOTE [shape-only arguments] in ``function_table.py``)."""

    __slots__ = ("shape", "dtype")

    def __init__(self, shape: tuple[int, ...], np_dtype: Any) -> None:
        self.shape = Size(shape)
        self.dtype = FROM_NUMPY[np_dtype]

    @property
    def ndim(self) -> int:
        return len(self.shape)


class Node:
    """One recorded op of the backward graph (what ``tensor.grad_fn`` is).

    ``next_functions`` lists, per Tensor input (each element of a ``Tensor[]`` one, as in
    PyTorch), ``(node, input_nr)`` of where its gradient goes, ``(None, 0)`` for inputs that
    need none; the backward function returns one gradient per entry.
    """

    # What every recorded op sets lives in slots. What few nodes have (several outputs, a
    # saved result, hooks, user metadata) is a class-level default, set on the instance only
    # when it applies: creating this object is most of the per-op cost of recording.
    __slots__ = (
        "backward_fn", "next_functions", "input_meta", "ctx", "saved", "__dict__", "__weakref__",
    )  # fmt: skip
    #: the node's name (``MulBackward0``): each kind of node is a class of that name, as in
    #: PyTorch, so ``type(y.grad_fn).__name__`` reads it too (NOTE [node classes])
    _name = "Node"
    #: how many outputs the op had (how many gradients the node receives)
    n_outputs = 1
    #: per output, (shape, dtype) of a differentiable output, or None (set for nodes with
    #: several outputs: a single one never misses its gradient)
    out_meta: tuple[Any, ...] = ()
    #: give the backward function zeros (of ``out_meta``) for the outputs no gradient
    #: reached, rather than None: only a custom ``Function`` asks for it (its
    #: ``ctx.set_materialize_grads``); derivative formulas get None (NOTE [undefined
    #: output gradients] in ``engine.py``)
    materialize_grads = False
    #: the op's output(s), as saved for a formula that reads them (NOTE [saved outputs])
    result: Any = None
    _hooks: list[Callable[..., Any]] | tuple[()] = ()
    _pre_hooks: list[Callable[..., Any]] | tuple[()] = ()
    #: hooks, tensor hooks or retain_grad on some output: the engine's slower path
    _watched = False
    #: the formula gets a tuple of output gradients (an op with several outputs)
    _sequence = False
    #: ``{output_nr: [hook, ...]}`` of ``Tensor.register_hook`` on non-leaf outputs
    _tensor_hooks: dict[int, list[Callable[..., Any]]] | None = None
    #: ``{output_nr: weakref to the tensor}`` of ``retain_grad``
    _retain: dict[int, Any] | None = None
    #: where a saved result's history is under create_graph when it is not this node (an
    #: in-place op on a view: the view's new CopySlices history)
    _result_node: Node | None = None
    #: for an op with a ``Tensor[]`` parameter: per Tensor parameter, how many entries of
    #: ``next_functions`` it has (-1: a single Tensor), to flatten the formula's gradients
    _sizes: tuple[int, ...] | None = None

    def __init__(
        self,
        backward_fn: Callable[..., Sequence[Any]],
        next_functions: tuple[Edge, ...],
        input_meta: tuple[Any, ...] | None = None,
        ctx: Any = None,
        saved: list[SavedTensor] | tuple[()] | None = None,
    ) -> None:
        self.backward_fn = backward_fn
        self.next_functions = next_functions
        #: per entry of next_functions: (shape, NumPy dtype) to reduce a broadcast gradient
        #: to, or None to take it as it comes
        self.input_meta = (None,) * len(next_functions) if input_meta is None else input_meta
        self.ctx = ctx
        #: what the formula reads, with versions; released after backward
        self.saved: list[SavedTensor] | tuple[()] = [] if saved is None else saved

    @property
    def metadata(self) -> dict[str, Any]:
        """A dict for whatever a user (or anomaly mode) wants to keep on the node."""
        d = self.__dict__.get("_metadata")
        if d is None:
            d = self.__dict__["_metadata"] = {}
        return d

    def name(self) -> str:
        """The node's name, as PyTorch's ``Node.name()`` gives it.

        >>> (ember.ones(2, requires_grad=True) * 2).grad_fn.name()
        'MulBackward0'
        """
        return self._name

    def __repr__(self) -> str:
        return f"<{type(self).__name__} object at {hex(id(self))}>"

    def register_hook(self, fn: Callable[..., Any]) -> Any:
        self._watched = True
        if not self._hooks:
            self._hooks = []
        self._hooks.append(fn)  # type: ignore[union-attr]
        return _Handle(self._hooks, fn)  # type: ignore[arg-type]

    def register_prehook(self, fn: Callable[..., Any]) -> Any:
        self._watched = True
        if not self._pre_hooks:
            self._pre_hooks = []
        self._pre_hooks.append(fn)  # type: ignore[union-attr]
        return _Handle(self._pre_hooks, fn)  # type: ignore[arg-type]

    def release(self) -> None:
        """Free saved tensors after backward (unless the graph is retained); a formula that
        reads one afterwards raises the second-backward error. Nodes that saved nothing can
        run again, as in PyTorch."""
        saved = self.saved
        if saved:
            for s in saved:
                s.tensor = None  # type: ignore[assignment]
            self.ctx = None
            if self.result is not None:
                self.result = None

    def apply(self, grads: Sequence[Any]) -> Sequence[Any]:
        """Run the backward function (the engine calls ``backward_fn`` itself)."""
        return self.backward_fn(self, grads)


# NOTE [node classes]
# PyTorch generates one C++ class per derivative entry (``MulBackward0``) and prints nodes by
# it: ``type(y.grad_fn).__name__``, ``repr`` and ``name()`` all say ``MulBackward0``. ember
# makes one subclass of ``Node`` per name, once (the derivative table asks for its entries'
# classes when they are registered), holding the name as a class attribute: recording a node
# sets one field fewer than storing the name on it would. Nodes PyTorch names by their C++
# qualified name in ``name()`` (``torch::autograd::AccumulateGrad``, ``CopySlices``) keep that
# string there literally, so code comparing it ports unchanged; their class is still named
# ``AccumulateGrad`` / ``CopySlices``.
_NODE_CLASSES: dict[str, type[Node]] = {}


def node_class(name: str) -> type[Node]:
    """The ``Node`` subclass named ``name`` (made on first use; NOTE [node classes])."""
    cls = _NODE_CLASSES.get(name)
    if cls is None:
        label = _QUALIFIED.get(name, name)
        cls = _NODE_CLASSES.setdefault(name, type(name, (Node,), {"__slots__": (), "_name": label}))
    return cls


#: the nodes whose ``name()`` is PyTorch's C++ qualified name (AccumulateGrad's own class
#: says it itself)
_QUALIFIED = {
    "CopySlices": "torch::autograd::CopySlices",
    "NotImplemented": "torch::autograd::NotImplemented",
}


def make_node(name: str, backward_fn: Callable[..., Sequence[Any]], *args: Any, **kw: Any) -> Node:
    """A node of the class named ``name``: ``Node.__init__``'s arguments after the name."""
    return node_class(name)(backward_fn, *args, **kw)


def _accumulate(node: Node, grads: Sequence[Any]) -> Sequence[Any]:
    raise AssertionError("the engine accumulates leaf gradients itself")


class AccumulateGrad(Node):
    """The sink of a leaf tensor: adds incoming gradients into ``leaf.grad``.

    A leaf holds its accumulator weakly, so one is made again for every graph that uses a
    leaf after the last one died (a training step's parameters, every step): what is the
    same for all of them is a class attribute, standing in for Node's slots, and creating
    one sets a single field.
    """

    __slots__ = ("variable",)
    _name = "torch::autograd::AccumulateGrad"  # PyTorch's name() (NOTE [node classes])
    backward_fn = staticmethod(_accumulate)
    next_functions: tuple[Edge, ...] = ()
    input_meta: tuple[Any, ...] = ()
    ctx = None
    saved: tuple[()] = ()

    def __init__(self, variable: Tensor) -> None:
        self.variable = variable


_NODE_CLASSES["AccumulateGrad"] = AccumulateGrad


class _Handle:
    """What ``register_hook`` returns: ``handle.remove()`` unregisters the hook."""

    def __init__(self, hooks: list[Any], fn: Any) -> None:
        self._hooks, self._fn = hooks, fn

    def remove(self) -> None:
        if self._fn in self._hooks:
            self._hooks.remove(self._fn)


# PyTorch's torch.autograd.graph has these too (NOTE [packed saved tensors])
from ember.autograd.saved_hooks import (  # noqa: E402
    disable_saved_tensors_hooks,
    save_on_cpu,
    saved_tensors_hooks,
)


class GradientEdge(NamedTuple):
    """One place in the backward graph a gradient goes: ``node`` (a ``grad_fn`` or a leaf's
    accumulator) and which of its inputs, ``output_nr``, as PyTorch's. ``autograd.grad``
    and ``backward`` take one wherever they take an input tensor (or, given its gradient,
    an output), so a gradient can be asked for after the tensor itself is gone.

    >>> x = ember.ones(2, requires_grad=True)
    >>> edge = ember.autograd.graph.get_gradient_edge(x)
    >>> ember.autograd.grad((x * 3).sum(), edge)
    (tensor([3., 3.]),)
    """

    node: Node
    output_nr: int
    #: what keeps the graph alive where ``node`` would not (PyTorch needs one for a Python
    #: node; an ember node holds its graph itself, so this stays None)
    ownership_token: Node | None = None


def _node_of(tensor: Tensor) -> Node:
    """The node a gradient of ``tensor`` goes to: its grad_fn, or its leaf's accumulator."""
    from ember.autograd.kernel import gradient_edge  # cycle: kernel imports this module

    node = gradient_edge(tensor)[0]
    if node is None:  # a view made under no_grad
        raise RuntimeError(
            "It is not possible to get the gradient edge for a view created in no_grad mode "
            f"(shape {list(tensor.shape)}): it has no grad_fn and no accumulator of its own"
        )
    return node


def get_gradient_edge(tensor: Tensor) -> GradientEdge:
    """The edge where the gradient of ``tensor`` is computed: ``autograd.grad(loss,
    get_gradient_edge(x))`` is ``autograd.grad(loss, x)``. A leaf's edge holds its
    accumulator, so later graphs through the leaf use the same one.

    >>> y = ember.ones(2, requires_grad=True) * 2
    >>> e = ember.autograd.graph.get_gradient_edge(y)
    >>> e.node is y.grad_fn, e.output_nr
    (True, 0)
    """
    if not tensor.requires_grad:
        raise RuntimeError(
            "It is not possible to get the gradient edge for a Tensor that does not require "
            "gradients"
        )
    node = _node_of(tensor)
    if tensor.grad_fn is None:
        return GradientEdge(node, 0)
    # what backward() from this edge starts from when no gradient is given: ones of the
    # tensor's shape, which a node does not otherwise keep for its outputs
    node.__dict__.setdefault("_edge_meta", {})[tensor._output_nr] = (
        tuple(tensor.shape),
        tensor.dtype,
    )
    return GradientEdge(node, tensor._output_nr)


class _MultiHandle:
    """What ``register_multi_grad_hook`` returns: ``remove()`` removes all its hooks."""

    def __init__(self, handles: tuple[Any, ...]) -> None:
        self.handles = handles

    def remove(self) -> None:
        for h in self.handles:
            h.remove()

    def __enter__(self) -> _MultiHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()


def register_multi_grad_hook(
    tensors: Sequence[Tensor],
    fn: Callable[..., None],
    *,
    mode: Literal["all", "any"] = "all",
) -> _MultiHandle:
    """Call ``fn`` once per backward pass that computes gradients of ``tensors``.

    ``mode="all"``: once every tensor of ``tensors`` whose gradient this pass computes has
    it, with the list of them (None for the tensors the pass leaves out: not in the graph,
    or on no path to its ``inputs=``). ``mode="any"``: with the first gradient of one of
    them the pass computes. ``fn`` must not modify the gradients. As PyTorch's.

    >>> a = ember.ones(2, requires_grad=True); b = ember.ones(2, requires_grad=True)
    >>> c, d = a * b, a * b
    >>> h = ember.autograd.graph.register_multi_grad_hook(
    ...     (a, b, c, d), lambda gs: print([g is not None for g in gs]))
    >>> c.sum().backward(retain_graph=True)
    [True, True, True, False]
    >>> c.sum().backward(inputs=(a,))
    [True, False, True, False]
    """
    from ember.autograd import engine  # cycle: engine imports this module

    if mode not in ("all", "any"):
        raise ValueError(f"Expects mode to be one of ('all', 'any') but got {mode}")
    lock = threading.Lock()
    if mode == "any":
        seen: set[int] = set()

        def first(grad: Tensor) -> None:
            task = _task_id(engine)
            with lock:
                if task in seen:
                    return
                seen.add(task)
            fn(grad)

        return _MultiHandle(tuple(t.register_hook(first) for t in tensors if t.requires_grad))

    tensors = tuple(tensors)
    for i, t in enumerate(tensors):
        if not t.requires_grad:  # (PyTorch fails an internal assertion here)
            raise RuntimeError(
                f"register_multi_grad_hook(mode='all'): tensor {i} (shape {list(t.shape)}) "
                "does not require grad, so no backward pass computes its gradient"
            )
    nodes = [_node_of(t) for t in tensors]  # (held: a leaf's accumulator stays the same)
    #: per backward pass: how many hooks it will call, and the gradients so far
    passes: dict[int, tuple[int, list[Any]]] = {}
    got: dict[int, int] = {}

    def hook_for(i: int) -> Callable[[Tensor], None]:
        def hook(grad: Tensor) -> None:
            task = _task_id(engine)
            with lock:
                if task not in passes:
                    expected = sum(engine.will_execute(n) for n in nodes)
                    passes[task] = (expected, [None] * len(tensors))
                expected, grads = passes[task]
                grads[i] = grad
                got[task] = got.get(task, 0) + 1
                if got[task] < expected:
                    return
                del passes[task], got[task]
            fn(grads)

        return hook

    return _MultiHandle(tuple(t.register_hook(hook_for(i)) for i, t in enumerate(tensors)))


def _task_id(engine: Any) -> int:
    task = engine.current_graph_task_id()
    if task == -1:
        raise AssertionError("expected this hook to be called inside a backward call")
    return task


def increment_version(tensor: Any) -> None:
    """Bump the version counters of ``tensor`` (or of each tensor of a list), as an in-place
    write would: PyTorch's way for code that writes a tensor's memory behind autograd's
    back, so that a backward needing the old values raises instead of using the new ones.

    >>> x = ember.ones(2); v = x._version; ember.autograd.graph.increment_version(x)
    >>> x._version - v
    1
    """
    for t in tensor if isinstance(tensor, (list, tuple)) else (tensor,):
        t._bump_version()


__all__ = [
    "GradientEdge",
    "Node",
    "get_gradient_edge",
    "register_multi_grad_hook",
    "increment_version",
    "disable_saved_tensors_hooks",
    "save_on_cpu",
    "saved_tensors_hooks",
]
