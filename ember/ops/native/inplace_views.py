"""The in-place view ops: ``unsqueeze_``, ``squeeze_`` (its three overloads), ``t_``,
``transpose_``, ``swapaxes_`` and ``swapdims_`` change the shape and strides of ``self``
itself, over the same storage, and return it.

# NOTE [in-place view ops]
Each runs its functional view (``unsqueeze``, ``transpose``...), so every check, the Meta
result and the gradient are that op's, then gives ``self`` the view's geometry (its array)
and, when autograd recorded the view, its history: ``self.grad_fn`` becomes the view's
``UnsqueezeBackward0``..., whose edge is ``self``'s old history, as PyTorch's in-place view
ops rebase it (PyTorch names the node ``UnsqueezeBackward1``, its in-place overload's). A
view keeps its base and its region of it is read off its new strides, so a later write
through it reaches the base. Values do not change; the version counter is bumped, as
PyTorch's. A leaf that requires grad refuses, as for any in-place op.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from ember.dispatch import state
from ember.library import impl
from ember.ops.native import views as _views  # noqa: F401  (declares the views composed here)
from ember.ops.registry import define_op, ops

if TYPE_CHECKING:
    from ember._tensor import Tensor

aten = ops.aten
CIA = "CompositeImplicitAutograd"
M = ("method",)

define_op("unsqueeze_(Tensor(a!) self, int dim) -> Tensor(a!)", "aten", (), M)
define_op("squeeze_(Tensor(a!) self) -> Tensor(a!)", "aten", (), M)
define_op("squeeze_.dim(Tensor(a!) self, int dim) -> Tensor(a!)", "aten", (), M)
define_op("squeeze_.dims(Tensor(a!) self, int[] dim) -> Tensor(a!)", "aten", (), M)
define_op("t_(Tensor(a!) self) -> Tensor(a!)", "aten", (), M)
define_op("transpose_(Tensor(a!) self, int dim0, int dim1) -> Tensor(a!)", "aten", (), M)
define_op("swapaxes_(Tensor(a!) self, int axis0, int axis1) -> Tensor(a!)", "aten", (), M)
define_op("swapdims_(Tensor(a!) self, int dim0, int dim1) -> Tensor(a!)", "aten", (), M)


def _become(self: Tensor, view: Tensor, name: str) -> Tensor:
    """Give ``self`` the geometry and history of ``view`` (NOTE [in-place view ops])."""
    if state.local.grad_enabled and self.requires_grad and self.grad_fn is None:
        what = "a view of a leaf Variable" if self._base is not None else "a leaf Variable"
        raise RuntimeError(
            f"{name}: {what} that requires grad is being used in an in-place operation. Do it "
            "inside ember.no_grad(), or on a clone()."
        )
    self._data = view._data
    if view.grad_fn is not None:
        self.grad_fn = view.grad_fn
        self._output_nr = view._output_nr
    self._bump_version()
    return self


def _inplace(functional: Any, name: str) -> Callable[..., Tensor]:
    def kernel(self: Tensor, *args: Any) -> Tensor:
        return _become(self, functional(self, *args), name)

    kernel.__name__ = name
    return kernel


for _name, _ov, _functional in (
    ("unsqueeze_", "default", aten.unsqueeze.default),
    ("squeeze_", "default", aten.squeeze.default),
    ("squeeze_", "dim", aten.squeeze.dim),
    ("t_", "default", aten.t.default),
    ("transpose_", "default", aten.transpose.int),
    ("swapaxes_", "default", aten.transpose.int),
    ("swapdims_", "default", aten.transpose.int),
):
    impl(getattr(getattr(aten, _name), _ov), CIA, _inplace(_functional, _name))


@impl(aten.squeeze_.dims, CIA)
def squeeze_dims_(self: Tensor, dim: Sequence[int]) -> Tensor:
    return _become(self, aten.squeeze.dims(self, list(dim)), "squeeze_")
