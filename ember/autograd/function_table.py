"""The derivative table's machinery: ``defvjp`` entries and the names of their nodes.

An entry is one line: ``defvjp(aten.mul.Tensor, lambda g, self, other: (g * other, g * self))``.
The formula gets the output gradient ``g`` (a tuple for ops with several outputs), then the
op's own arguments, and, if it names a ``result`` parameter, the op's output. It returns one
gradient per Tensor parameter of the schema, in order (``None`` where none flows; a list for
a ``Tensor[]`` parameter). Gradients may have the broadcast shape or a wider dtype: the
engine reduces them to each input's shape and dtype.

Which arguments a formula reads is read off its bytecode once, at registration, so only
those are saved and version-checked (NOTE [saved tensor versions] in ``graph.py``):
``a + b`` followed by ``a.add_(1)`` can still backward, as in PyTorch.
"""

from __future__ import annotations

import dis
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ember.ops.registry import OpOverload


@dataclass(frozen=True)
class VJP:
    op: OpOverload
    formula: Callable[..., Any]
    name: str  # grad_fn name, e.g. "AddBackward0"
    reads: frozenset[str]  # parameter names the formula reads (saved and version-checked)
    wants_result: bool
    #: per output, whether it carries a gradient (None: every floating output does), as
    #: derivatives.yaml's ``output_differentiability`` (layer_norm's mean and rstd do not)
    outputs: tuple[bool, ...] | None = None
    #: the formula names a ``needs`` parameter: it gets one flag per Tensor parameter saying
    #: whether that input wants a gradient, to skip the work for those that don't (as
    #: PyTorch's ``grad_input_mask``); formulas without it compute every gradient
    wants_needs: bool = False


DERIVATIVES: dict[OpOverload, VJP] = {}
#: ops whose outputs never carry a gradient (``detach``, ``zeros_like``, ...): they run below
#: the Autograd key and their results do not require grad, as PyTorch's
#: ``output_differentiability: [False]`` says
NONDIFFERENTIABLE: set[OpOverload] = set()


def _camel(name: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in name.strip("_").split("_") if part)


def node_name(op: OpOverload) -> str:
    """PyTorch's grad_fn name: CamelCase of the op + ``Backward`` + the overload's index
    among the packet's overloads (``add.Tensor`` → ``AddBackward0``)."""
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
    params = inspect.signature(formula).parameters
    DERIVATIVES[op] = VJP(
        op, formula, name or node_name(op), _reads(formula) - {"needs"}, "result" in params,
        outputs, "needs" in params,
    )  # fmt: skip


def nondifferentiable(*overloads: OpOverload) -> None:
    """Declare ops whose outputs never require grad, whatever their inputs."""
    NONDIFFERENTIABLE.update(overloads)
