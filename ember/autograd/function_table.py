"""The derivative table's machinery: ``defvjp`` entries and the names of their nodes.

An entry is one line: ``defvjp(aten.mul.Tensor, lambda g, self, other: (g * other, g * self))``.
The formula gets the output gradient ``g`` (a tuple for ops with several outputs), then the
op's own arguments, and, if it names a ``result`` parameter, the op's output. It returns one
gradient per Tensor parameter of the schema, in order (``None`` where none flows; a list for
a ``Tensor[]`` parameter). Gradients may have the broadcast shape or a wider dtype: the
engine reduces them to each input's shape and dtype.

Which arguments a formula reads is read off its bytecode once, on first use, so only
those are saved and version-checked (NOTE [saved tensor versions] in ``graph.py``):
``a + b`` followed by ``a.add_(1)`` can still backward, as in PyTorch.
"""

from __future__ import annotations

import dis
import functools
import inspect
from collections.abc import Callable
from typing import Any

from ember.autograd.graph import Node, node_class
from ember.ops.registry import OpOverload


class VJP:
    """One derivative entry. What the formula reads (from its bytecode) and the class of its
    nodes are worked out on first use, when the op's Autograd kernel is made, not when the
    table is imported (NOTE [lazy entries])."""

    # NOTE [lazy entries]
    # Reading ~400 formulas' bytecode and making their node classes cost a noticeable part
    # of ``import ember``; most programs use a few dozen of them. The entry keeps the
    # formula and computes each derived field once, on first access (``cached_property``).

    __slots__ = ("op", "formula", "name", "outputs", "__dict__")

    def __init__(
        self,
        op: OpOverload,
        formula: Callable[..., Any],
        name: str,
        outputs: tuple[bool, ...] | None = None,
    ) -> None:
        self.op = op
        self.formula = formula
        self.name = name  # grad_fn name, e.g. "AddBackward0"
        #: per output, whether it carries a gradient (None: every floating output does), as
        #: derivatives.yaml's ``output_differentiability`` (layer_norm's mean and rstd do not)
        self.outputs = outputs

    def __repr__(self) -> str:
        return f"VJP({self.op}, {self.name})"

    @functools.cached_property
    def _params(self) -> Any:
        return inspect.signature(self.formula).parameters

    @functools.cached_property
    def wants_result(self) -> bool:
        """The formula names a ``result`` parameter: it gets the op's output."""
        return "result" in self._params

    @functools.cached_property
    def wants_needs(self) -> bool:
        """The formula names a ``needs`` parameter: it gets one flag per Tensor parameter
        saying whether that input wants a gradient, to skip the work for those that don't (as
        PyTorch's ``grad_input_mask``); formulas without it compute every gradient."""
        return "needs" in self._params

    @functools.cached_property
    def _meta_only(self) -> frozenset[str]:
        return _shape_only_reads(self.formula, self.op)

    @functools.cached_property
    def reads(self) -> frozenset[str]:
        """Parameter names the formula reads (saved and version-checked)."""
        return _reads(self.formula) - {"needs"} - self._meta_only

    @functools.cached_property
    def meta_args(self) -> tuple[tuple[int, int], ...]:
        """(argument position, Tensor-parameter index) of the tensors the formula reads only
        the ``shape``/``ndim``/``dtype`` of: neither saved nor version-checked; the formula
        gets a ``TensorMeta`` of the input instead (NOTE [shape-only arguments])."""
        return _meta_args(self.op, self._meta_only)

    @functools.cached_property
    def result_reads(self) -> frozenset[int] | None:
        """For an op with several outputs, the ones the formula reads as ``result[i]`` (only
        those are kept); None when it reads ``result`` some other way (all are kept)."""
        return _result_reads(self.formula)

    @functools.cached_property
    def cls(self) -> type[Node]:
        """The class of the entry's nodes, named ``name`` (NOTE [node classes])."""
        return node_class(self.name)


DERIVATIVES: dict[OpOverload, VJP] = {}
#: ops whose outputs never carry a gradient (``detach``, ``zeros_like``, ...): they run below
#: the Autograd key and their results do not require grad, as PyTorch's
#: ``output_differentiability: [False]`` says
NONDIFFERENTIABLE: set[OpOverload] = set()


def _camel(name: str) -> str:
    """PyTorch's CamelCase of an op name: each word title-cased, so a letter after a digit
    is a capital too (``log1p`` → ``Log1P``, ``max_pool2d`` → ``MaxPool2D``)."""
    return "".join(part.title() for part in name.strip("_").split("_") if part)


def node_name(op: OpOverload) -> str:
    """PyTorch's grad_fn name: CamelCase of the op + ``Backward`` + the overload's index
    among the packet's overloads (``add.Tensor`` → ``AddBackward0``). PyTorch numbers them in
    derivatives.yaml's order, which the catalogue's need not follow: entries where the two
    differ pass ``name=`` (``tests/test_autograd.py`` compares every name with PyTorch's)."""
    base = op.overloadpacket.__name__.rstrip("_")
    functional = [o for o in op.overloadpacket._overloads.values() if not o._schema.is_out]
    idx = functional.index(op) if op in functional else 0
    return f"{_camel(base)}Backward{idx}"


def _reads(fn: Callable[..., Any]) -> frozenset[str]:
    params = set(inspect.signature(fn).parameters)
    used = set()
    for ins in dis.get_instructions(fn):
        if ins.opname in ("LOAD_FAST", "LOAD_DEREF", "LOAD_CLOSURE", "LOAD_FAST_CHECK"):
            used.add(ins.argval)
    if any(p.kind == p.VAR_POSITIONAL for p in inspect.signature(fn).parameters.values()):
        return frozenset(params)  # passes everything on: assume it reads everything
    return frozenset(used & params)


def _result_reads(fn: Callable[..., Any]) -> frozenset[int] | None:
    """The constant indices ``i`` of every ``result[i]`` in ``fn``, or None if ``result`` is
    used any other way (or not a parameter)."""
    if "result" not in inspect.signature(fn).parameters:
        return None
    ins = list(dis.get_instructions(fn))
    found: set[int] = set()
    for i, x in enumerate(ins):
        if x.opname.startswith("LOAD_") and x.argval == "result" and x.opname != "LOAD_CONST":
            nxt = ins[i + 1 : i + 3]
            if (
                len(nxt) == 2
                and nxt[0].opname == "LOAD_CONST"
                and type(nxt[0].argval) is int
                and nxt[1].opname == "BINARY_SUBSCR"
            ):
                found.add(nxt[0].argval)
            else:
                return None
    return frozenset(found)


def defvjp(
    op: OpOverload,
    formula: Callable[..., Any],
    *,
    name: str | None = None,
    outputs: tuple[bool, ...] | None = None,
) -> None:
    """Register the backward formula of ``op`` (see this module's docstring); ``outputs``
    marks which outputs are differentiable when not all floating ones are."""
    if op in DERIVATIVES:
        raise ValueError(f"{op} already has a derivative formula")
    DERIVATIVES[op] = VJP(op, formula, name or node_name(op), outputs)
    op.invalidate()  # its Autograd kernel is made from the entry (NOTE [generated recorders])


_META_ATTRS = frozenset({"shape", "ndim", "dtype"})


def _shape_only_reads(fn: Callable[..., Any], op: OpOverload) -> frozenset[str]:
    """The (non-list) Tensor parameters ``fn`` reads only as ``p.shape``/``p.ndim``/``p.dtype``.

    # NOTE [shape-only arguments]
    A view's or a reduction's gradient needs its input's sizes, not its values
    (``g.reshape(self.shape)``). Saving the tensor for that would keep it alive and make any
    later in-place write to it (or to its base) fail the version check at backward, where
    PyTorch saves only the sizes. So such parameters are found in the formula's bytecode
    (every load followed by one of those attributes), left out of the saved tensors, and
    given to the formula as a ``TensorMeta`` built from the node's input metadata.
    """
    if any(p.kind == p.VAR_POSITIONAL for p in inspect.signature(fn).parameters.values()):
        return frozenset()
    tensors = {
        a.name for a in op._schema.arguments if a.type.base == "Tensor" and not a.type.is_list
    }
    ins = list(dis.get_instructions(fn))
    meta: set[str] = set()
    other: set[str] = set()
    for i, ins_ in enumerate(ins):
        if ins_.opname in ("LOAD_FAST", "LOAD_DEREF", "LOAD_CLOSURE", "LOAD_FAST_CHECK"):
            name = ins_.argval
            nxt = ins[i + 1] if i + 1 < len(ins) else None
            if nxt is not None and nxt.opname == "LOAD_ATTR" and nxt.argval in _META_ATTRS:
                meta.add(name)
            else:
                other.add(name)
    return frozenset((meta - other) & tensors)


def _meta_args(op: OpOverload, names: frozenset[str]) -> tuple[tuple[int, int], ...]:
    out = []
    pos = tidx = 0
    for a in op._schema.arguments:
        if a.type.base == "Tensor":
            if a.name in names and not a.kwarg_only:
                out.append((pos, tidx))
            tidx += 1
        if not a.kwarg_only:
            pos += 1
    return tuple(out)


def nondifferentiable(*overloads: OpOverload) -> None:
    """Declare ops whose outputs never require grad, whatever their inputs."""
    NONDIFFERENTIABLE.update(overloads)
    for op in overloads:
        op.invalidate()
