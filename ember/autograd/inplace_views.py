"""The Autograd key's kernels of the in-place view ops (NOTE [in-place view ops] in
``ember/ops/native/inplace_views.py``): the functional view is recorded, the op runs below
this key, and ``self`` takes the view's history."""

from __future__ import annotations

from typing import Any

from ember._tensor import Tensor
from ember.dispatch import dispatcher, state
from ember.dispatch.dispatcher import KIND_KEYSET
from ember.dispatch.keys import DispatchKey, below
from ember.ops.native.inplace_views import VIEW_OF, view_args
from ember.ops.registry import OpOverload

BELOW = below(DispatchKey.Autograd)


def _kernel(op: OpOverload, view: OpOverload) -> Any:
    name = op.overloadpacket.__name__

    def kernel(ks: int, self: Tensor, *args: Any) -> Tensor:
        if not (state.local.grad_enabled and self.requires_grad):
            return op.redispatch(ks & BELOW, self, *args)  # type: ignore[no-any-return]
        if self.grad_fn is None:
            what = "a view of a leaf Variable" if self._base is not None else "a leaf Variable"
            raise RuntimeError(
                f"{name}: {what} that requires grad is being used in an in-place operation. "
                "Do it inside ember.no_grad(), or on a clone()."
            )
        viewed = view(self, *view_args(args))  # recorded: its node's edge is self's history
        op.redispatch(ks & BELOW, self, *args)
        self.grad_fn = viewed.grad_fn
        self._output_nr = viewed._output_nr
        return self

    return kernel


def install() -> None:
    for op, view in VIEW_OF.items():
        dispatcher.set_kernel(op, DispatchKey.Autograd, _kernel(op, view), KIND_KEYSET)
