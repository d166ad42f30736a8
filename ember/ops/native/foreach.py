"""The foreach ops: one op over lists of tensors (``_foreach_add_``, ``_foreach_lerp_``, ...),
what PyTorch's multi-tensor optimizers call.

# NOTE [foreach ops]
A foreach op is its element op applied to each position of its lists: ``_foreach_add.List
(self, other, alpha=a)`` is ``[add(s, o, alpha=a) for s, o in zip(self, other)]``. Each is
declared here by PyTorch's schema beside that element op (``FOREACH``), and every layer
derives from it (``ember/backends/foreach.py``): a backend runs the element op's own kernel
per position (one dispatch for the whole list, which is the point: in ember a dispatch
costs more than a small update); autograd, when an element requires grad, dispatches the
element ops one by one so each records its own node, as PyTorch's foreach derivatives do.
In-place forms return nothing (``-> ()``) and write through the element op's in-place
form, or its functional form then ``copy_`` where there is none (``_foreach_maximum_``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ember.ops.native import copies, pointwise  # noqa: F401  (declare the element ops)
from ember.ops.native._define import FUNCTIONAL_OF, VARIANTS_OF
from ember.ops.registry import OpOverload, define_op, ops

aten = ops.aten


@dataclass(frozen=True)
class Foreach:
    """How a foreach op maps onto its element op. The arguments at one position go to the
    element op by position, the extra ones to its keyword-only parameters, in order
    (``ember/backends/foreach.py`` reads that off the two schemas)."""

    element: OpOverload  # the functional element op (add.Tensor)
    inplace_element: OpOverload | None  # its in-place form (add_.Tensor); None: copy_ after
    lists: tuple[int, ...]  # positions of the Tensor[] and Scalar[] arguments
    inplace: bool  # this overload writes its first list and returns nothing


FOREACH: dict[OpOverload, Foreach] = {}


def _define(name: str, params: str, element: OpOverload, returns: str = "Tensor[]") -> None:
    """Declare ``_foreach_<name>(params) -> Tensor[]`` and ``_foreach_<name>_(...) -> ()``
    over ``element`` (whose in-place form, if it has one, the in-place overload writes
    through)."""
    base, _, overload = name.partition(".")
    suffix = f".{overload}" if overload else ""
    fn = define_op(f"_foreach_{base}{suffix}({params}) -> {returns}", "aten", (), ("function",))
    ip_params = params.replace("Tensor[] self", "Tensor(a!)[] self", 1)
    ip = define_op(f"_foreach_{base}_{suffix}({ip_params}) -> ()", "aten", (), ("function",))
    ip_el = VARIANTS_OF.get(element, (None, None))[0]
    lists = tuple(
        i for i, a in enumerate(fn._schema.positional) if a.type.is_list and a.type.base != "int"
    )
    FOREACH[fn] = Foreach(element, ip_el, lists, False)
    FOREACH[ip] = Foreach(element, ip_el, lists, True)
    FUNCTIONAL_OF[ip] = fn  # the in-place form shares the functional one's samples


# binary: a list of tensors with a scalar, a list of scalars, or a list of tensors
for _name in ("add", "sub", "mul", "div"):
    _el = getattr(aten, _name).Tensor
    _alpha = ", *, Scalar alpha=1" if _name in ("add", "sub") else ""
    _define(f"{_name}.Scalar", "Tensor[] self, Scalar scalar", _el)
    _define(f"{_name}.List", f"Tensor[] self, Tensor[] other{_alpha}", _el)
    _define(f"{_name}.ScalarList", "Tensor[] self, Scalar[] scalars", _el)
_define("maximum.List", "Tensor[] self, Tensor[] other", aten.maximum.default)
_define("minimum.List", "Tensor[] self, Tensor[] other", aten.minimum.default)

# unary
for _name in ("neg", "sqrt", "abs", "exp"):
    _define(_name, "Tensor[] self", getattr(aten, _name).default)
_define("zero", "Tensor[] self", aten.zero.default, returns="Tensor[] self_out")

# ternary: lerp toward a list with a scalar weight; addcmul/addcdiv with one or a list
_define("lerp.Scalar", "Tensor[] self, Tensor[] tensors1, Scalar weight", aten.lerp.Scalar)
for _name in ("addcmul", "addcdiv"):
    _el = getattr(aten, _name).default
    _define(f"{_name}.Scalar", "Tensor[] self, Tensor[] tensor1, Tensor[] tensor2, Scalar value=1",
            _el)  # fmt: skip
    _define(f"{_name}.ScalarList",
            "Tensor[] self, Tensor[] tensor1, Tensor[] tensor2, Scalar[] scalars", _el)  # fmt: skip


def check_lists(op: OpOverload, spec: Foreach, args: tuple[Any, ...]) -> int:
    """The common length of the op's lists, or PyTorch's error: an empty ``self``, lists of
    different lengths, a scalar list of another length."""
    n = len(args[0]) if args else 0
    if n == 0:
        raise RuntimeError(
            f"{op.overloadpacket.__name__}: Tensor list must have at least one tensor."
        )
    schema = op._schema.positional
    for i in spec.lists[1:]:
        if i >= len(args):
            continue
        m = len(args[i])
        if m != n:
            if schema[i].type.base == "Scalar":
                raise RuntimeError(
                    f"{op.overloadpacket.__name__}: Tensor list must have same number of "
                    f"elements as scalar list, got {n} and {m}."
                )
            raise RuntimeError(
                f"{op.overloadpacket.__name__}: Tensor lists must have the same number of "
                f"tensors, got {n} and {m}"
            )
    return n
