"""How a module's full backward hooks see the gradients of its inputs and outputs.

# NOTE [module full backward hooks]
As PyTorch's ``torch.utils.hooks.BackwardHook``: the call passes the module's tensor
arguments through one identity ``Function`` and its tensor outputs through another. In
backward, the output identity's node runs first, with the gradients of the outputs: it
stores them, lets the backward pre-hooks replace them, and (when no input needs a gradient)
calls the full hooks with ``None`` for every input. The input identity's node runs once
every gradient of the inputs has arrived: it calls the full hooks with
``(grad_input, grad_output)``, each of which may return a new ``grad_input``. Positions of
non-tensor arguments or outputs hold ``None``; a tensor that got no gradient (or needs none)
gets zeros, as PyTorch's identity materialises them.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

from ember._tensor import Tensor
from ember.autograd.function import Function
from ember.autograd.grad_mode import is_grad_enabled

__all__ = ["BackwardHook"]


class BackwardHookFunction(Function):
    """Identity on its tensor arguments, whose backward hands the gradients to a hook."""

    @staticmethod
    def forward(
        ctx: Any, on_grads: Callable[[tuple[Any, ...]], tuple[Any, ...]], *args: Any
    ) -> Any:  # noqa: E501
        ctx.on_grads = on_grads
        outs = tuple(a.view_as(a) for a in args)
        ctx.mark_non_differentiable(
            *(o for a, o in zip(args, outs, strict=True) if not a.requires_grad)
        )  # noqa: E501
        return outs

    @staticmethod
    def backward(ctx: Any, *grads: Any) -> Any:
        return (None, *ctx.on_grads(grads))


def _pack(values: tuple[Any, ...], positions: list[int], size: int) -> tuple[Any, ...]:
    out: list[Any] = [None] * size
    for p, v in zip(positions, values, strict=True):
        out[p] = v
    return tuple(out)


def _check_count(kind: str, got: Any, expected: int) -> tuple[Any, ...]:
    if not isinstance(got, tuple):
        got = (got,)
    if len(got) != expected:
        raise RuntimeError(
            f"Backward hook returned an invalid number of {kind}, got {len(got)}, but expected "
            f"{expected}"
        )
    return got


class BackwardHook:
    """One module call's full backward hooks (NOTE [module full backward hooks])."""

    def __init__(self, module: Any, hooks: list[Any], pre_hooks: list[Any]) -> None:
        self.module, self.hooks, self.pre_hooks = module, hooks, pre_hooks
        self.grad_outputs: tuple[Any, ...] | None = None
        self.n_inputs = 0
        self.input_positions: list[int] | None = None

    def setup_input_hook(self, args: tuple[Any, ...]) -> tuple[Any, ...]:
        """``args`` with its tensors passed through the input identity."""
        self.n_inputs = len(args)
        positions = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        if not (is_grad_enabled() and any(args[i].requires_grad for i in positions)):
            return args
        self.input_positions = positions
        new = BackwardHookFunction.apply(self._on_input_grads, *(args[i] for i in positions))
        out = list(args)
        for p, t in zip(positions, new, strict=True):
            out[p] = t
        return tuple(out)

    def setup_output_hook(self, result: Any) -> Any:
        """``result`` (a tensor or a tuple) with its tensors passed through the output
        identity."""
        single = not isinstance(result, tuple)
        outs = (result,) if single else result
        positions = [i for i, o in enumerate(outs) if isinstance(o, Tensor)]
        if not (is_grad_enabled() and any(outs[i].requires_grad for i in positions)):
            return result
        self.n_outputs = len(outs)
        self.output_positions = positions
        new = BackwardHookFunction.apply(self._on_output_grads, *(outs[i] for i in positions))
        packed = list(outs)
        for p, t in zip(positions, new, strict=True):
            packed[p] = t
        return packed[0] if single else type(result)(packed)

    def _on_output_grads(self, grads: tuple[Any, ...]) -> tuple[Any, ...]:
        grad_outputs = _pack(grads, self.output_positions, self.n_outputs)
        for hook in self.pre_hooks:
            res = hook(self.module, grad_outputs)
            if res is not None:
                grad_outputs = _check_count("grad_output", res, self.n_outputs)
        self.grad_outputs = grad_outputs
        if self.input_positions is None and self.hooks:  # no input needs a gradient
            warnings.warn(
                "Full backward hook is firing when gradients are computed with respect to "
                "module outputs since no inputs require gradients. See the docs of "
                "Module.register_full_backward_hook for more details.",
                UserWarning,
                stacklevel=2,
            )
            grad_inputs = (None,) * self.n_inputs
            for hook in self.hooks:
                res = hook(self.module, grad_inputs, grad_outputs)
                if res is not None and not (isinstance(res, tuple) and all(r is None for r in res)):
                    raise RuntimeError(
                        "Backward hook for Modules where no input requires gradient should "
                        "always return None or None for all gradients."
                    )
        return tuple(grad_outputs[p] for p in self.output_positions)

    def _on_input_grads(self, grads: tuple[Any, ...]) -> tuple[Any, ...]:
        positions = self.input_positions or []
        grad_inputs = _pack(grads, positions, self.n_inputs)
        grad_outputs = self.grad_outputs
        if grad_outputs is None:  # the outputs got no gradient through this call
            grad_outputs = (None,) * getattr(self, "n_outputs", 1)
        for hook in self.hooks:
            res = hook(self.module, grad_inputs, grad_outputs)
            if res is not None:
                grad_inputs = _check_count("grad_input", res, self.n_inputs)
        return tuple(grad_inputs[p] for p in positions)
