"""``stack_module_state``: the parameters and buffers of ``M`` models of one class, each
stacked along a new first dimension, for running the ensemble with
``vmap(functional_call)`` (PyTorch's ``torch.func.stack_module_state``).

>>> from ember.func import stack_module_state
>>> params, buffers = stack_module_state([ember.nn.Linear(3, 2) for _ in range(4)])
>>> params["weight"].shape
ember.Size([4, 2, 3])
"""

from __future__ import annotations

from collections.abc import Sequence

from ember._tensor import Tensor
from ember.nn.modules.module import Module
from ember.ops.registry import ops

__all__ = ["stack_module_state"]


def _stacked_leaf(tensors: Sequence[Tensor], name: str) -> Tensor:
    """The tensors stacked; a new leaf that requires grad if they all do (all or none)."""
    wants = [t.requires_grad for t in tensors]
    if any(wants) and not all(wants):
        raise RuntimeError(f"Expected {name} from each model to have the same .requires_grad")
    out = ops.aten.stack.default([t.detach() for t in tensors])
    return out.requires_grad_() if all(wants) else out


def stack_module_state(
    models: Sequence[Module],
) -> tuple[dict[str, Tensor], dict[str, Tensor]]:
    """``(params, buffers)``: each name's tensors of every model, stacked (the parameters
    as new leaves, optimizable on their own)."""
    models = list(models)
    if len(models) == 0:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or all(not m.training for m in models)):
        raise RuntimeError(
            "stack_module_state: Expected all models to have the same training/eval mode."
        )
    kind = type(models[0])
    if not all(type(m) is kind for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")
    params = [dict(m.named_parameters()) for m in models]
    buffers = [dict(m.named_buffers()) for m in models]
    return (
        {k: _stacked_leaf([p[k] for p in params], k) for k in params[0]},
        {k: _stacked_leaf([b[k] for b in buffers], k) for k in buffers[0]},
    )
