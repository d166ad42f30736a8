"""The in-place view ops: ``unsqueeze_``, ``squeeze_`` (its three overloads), ``t_``,
``transpose_``, ``swapaxes_`` and ``swapdims_`` change the shape and strides of ``self``
itself, over the same storage, and return it.

# NOTE [in-place view ops]
Below autograd (one kernel for CPU and Meta) each runs its functional view (``unsqueeze``,
``transpose``...), so every check and every geometry is that op's, gives ``self`` the
view's array and bumps the version counter, as PyTorch's do. The lazy device runs them
eagerly (NOTE [lazy mutation]): a CompositeExplicitAutograd kernel would serve the Lazy key
too, and give a lazy tensor a view's array without its base. The Autograd key's kernel
(``ember/autograd/inplace_views.py``) records the functional view first and gives ``self``
its history: ``self.grad_fn`` becomes the view's ``UnsqueezeBackward0``..., whose edge is
``self``'s old history, as PyTorch rebases it (PyTorch names the node ``UnsqueezeBackward1``,
its in-place overload's). A view keeps its base, and its region of the base is read off
its new strides, so a later write through it reaches the base.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ember.ops.native import views as _views  # noqa: F401  (declares the views composed here)
from ember.ops.registry import OpOverload, define_op, impl, ops

if TYPE_CHECKING:
    from ember._tensor import Tensor

aten = ops.aten
M = ("method",)

define_op("unsqueeze_(Tensor(a!) self, int dim) -> Tensor(a!)", "aten", (), M)
define_op("squeeze_(Tensor(a!) self) -> Tensor(a!)", "aten", (), M)
define_op("squeeze_.dim(Tensor(a!) self, int dim) -> Tensor(a!)", "aten", (), M)
define_op("squeeze_.dims(Tensor(a!) self, int[] dim) -> Tensor(a!)", "aten", (), M)
define_op("t_(Tensor(a!) self) -> Tensor(a!)", "aten", (), M)
define_op("transpose_(Tensor(a!) self, int dim0, int dim1) -> Tensor(a!)", "aten", (), M)
define_op("swapaxes_(Tensor(a!) self, int axis0, int axis1) -> Tensor(a!)", "aten", (), M)
define_op("swapdims_(Tensor(a!) self, int dim0, int dim1) -> Tensor(a!)", "aten", (), M)

#: each in-place view op -> the functional view whose geometry (and history) it takes
VIEW_OF: dict[OpOverload, OpOverload] = {
    aten.unsqueeze_.default: aten.unsqueeze.default,
    aten.squeeze_.default: aten.squeeze.default,
    aten.squeeze_.dim: aten.squeeze.dim,
    aten.squeeze_.dims: aten.squeeze.dims,
    aten.t_.default: aten.t.default,
    aten.transpose_.default: aten.transpose.int,
    aten.swapaxes_.default: aten.transpose.int,
    aten.swapdims_.default: aten.transpose.int,
}


def view_args(args: tuple[Any, ...]) -> tuple[Any, ...]:
    """The functional view's arguments (``squeeze_.dims`` takes any sequence of dims)."""
    return tuple(list(a) if isinstance(a, Sequence) else a for a in args)


def _kernel(view: OpOverload) -> Any:
    def kernel(self: Tensor, *args: Any) -> Tensor:
        viewed = view(self, *view_args(args))
        if viewed.shape != self.shape or viewed.stride() != self.stride():
            self._edata = viewed._edata  # (an unchanged geometry keeps self's own array)
        self._bump_version()
        return self

    return kernel


for _op, _view in VIEW_OF.items():  # CPU and Meta, not every backend: NOTE [in-place view ops]
    impl(_op, ("CPU", "Meta"), _kernel(_view))
