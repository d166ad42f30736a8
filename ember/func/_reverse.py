"""What the reverse-mode transforms (``grad``, ``vjp``, ``jacrev``) share: argnums, the
inputs they differentiate, and how deeply they are nested.

# NOTE [reverse-mode transforms]
ember has one autograd tape, so a transform differentiates with ``autograd.grad`` on the
graph its function records. Each differentiated input is replaced by a fresh tensor that
requires grad: ``x.detach().requires_grad_()`` when nothing outside records ``x``'s
history, else an alias of ``x`` (``x.view_as(x)``) that keeps it, so an outer transform (or
the user's ``backward``) differentiates through this one. While any reverse-mode transform
is active (``NESTING``), the inner one's backward records its own graph
(``create_graph=True``): ``grad(grad(f))`` is a double backward. A transform inside
``vmap`` sees BatchedTensors: its fresh inputs require grad at the logical level, so
autograd records on the BatchedTensors and the backward formulas run through the batching
rules (NOTE [vmap levels] in ``ember/_batched/tensor.py``). Results that no outer level
tracks are detached.
"""

from __future__ import annotations

import threading
from typing import Any

from ember._tensor import Tensor
from ember.autograd.api import grad as autograd_grad
from ember.autograd.forward_ad._levels import copy_tangents
from ember.autograd.grad_mode import enable_grad
from ember.dispatch import marks
from ember.ops.registry import ops
from ember.utils._pytree import tree_flatten, tree_unflatten

_zeros_like = ops.aten.zeros_like.default


class _Nesting(threading.local):
    depth = 0


NESTING = _Nesting()


def wrap_argnum(argnum: Any, num_args: int) -> int:
    if not isinstance(argnum, int):
        raise RuntimeError(f"argnum must be int, got: {type(argnum)}")
    if 0 <= argnum < num_args:
        return argnum
    if -num_args <= argnum < 0:
        return argnum + num_args
    raise RuntimeError(f"Got argnum={argnum}, but only {num_args} positional inputs")


def check_argnums(argnums: Any, num_args: int) -> Any:
    """``argnums`` made non-negative, with PyTorch's errors."""
    if not isinstance(argnums, (int, tuple)):
        raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")
    if isinstance(argnums, int):
        return wrap_argnum(argnums, num_args)
    out = tuple(wrap_argnum(a, num_args) for a in argnums)
    if len(out) == 0:
        raise RuntimeError("argnums must be non-empty")
    if len(set(out)) != len(out):
        raise RuntimeError(f"argnums elements must be unique, got {argnums}")
    return out


def differentiable(x: Any) -> tuple[Any, Any]:
    """What the function gets in place of tensor ``x``, and the leaf to differentiate with
    respect to (NOTE [reverse-mode transforms]). A dual tensor (forward-mode tangents) keeps
    them: it becomes ``x + z`` for a zero leaf ``z``, so ``jacfwd(jacrev(f))`` runs the
    backward formulas on duals."""
    if not isinstance(x, Tensor):
        raise RuntimeError(f"Thing passed to transform API must be Tensor, got {type(x)}")
    if not (x.dtype.is_floating_point or x.dtype.is_complex):
        raise RuntimeError(
            "only Tensors of floating point dtype can require gradients (or complex ones; "
            f"got {x.dtype})"
        )
    if marks.is_dual(x):
        z = _zeros_like(x).requires_grad_(True)
        return x + z, z
    if x.requires_grad:
        alias = x.view_as(x)
        return alias, alias
    leaf = x.detach().requires_grad_(True)
    return leaf, leaf


def replace_args(args: tuple[Any, ...], argnums: Any) -> tuple[tuple[Any, ...], Any]:
    """``args`` with the ones at ``argnums`` (each a pytree of tensors) made differentiable,
    and the pytrees of leaves to differentiate with respect to (one, or a tuple for a tuple
    of argnums)."""
    new = list(args)
    wrt = list(args)
    nums = (argnums,) if isinstance(argnums, int) else argnums
    for i in nums:
        leaves, spec = tree_flatten(args[i])
        pairs = [differentiable(x) for x in leaves]
        new[i] = tree_unflatten([p[0] for p in pairs], spec)
        wrt[i] = tree_unflatten([p[1] for p in pairs], spec)
    diff = wrt[argnums] if isinstance(argnums, int) else tuple(wrt[i] for i in argnums)
    return tuple(new), diff


def release(x: Any, keep: bool) -> Any:
    """Every tensor of pytree ``x`` detached from this transform's graph, unless ``keep`` (an
    outer level tracks it); forward-mode tangents stay (an outer ``jvp``'s)."""
    if keep:
        return x
    leaves, spec = tree_flatten(x)
    return tree_unflatten([_detach(t) if isinstance(t, Tensor) else t for t in leaves], spec)


def _detach(t: Tensor) -> Tensor:
    out = t.detach()
    if marks.is_dual(t):
        copy_tangents(t, out)
    return out


def grads_of(
    outputs: list[Tensor], inputs: list[Tensor], cotangents: list[Any] | None, create: bool
) -> list[Tensor]:
    """``autograd.grad`` of ``outputs`` (weighted by ``cotangents``) with respect to
    ``inputs``; an input the outputs do not depend on gets zeros (PyTorch's transforms)."""
    pairs = [(o, c) for o, c in zip(outputs, cotangents or [None] * len(outputs), strict=True)]
    pairs = [(o, c) for o, c in pairs if o.requires_grad]
    if not pairs:
        return [_zeros_like(x) for x in inputs]
    with enable_grad():
        got = autograd_grad(
            [o for o, _ in pairs],
            inputs,
            [c for _, c in pairs] if cotangents is not None else None,
            retain_graph=True,
            create_graph=create,
            allow_unused=True,
        )
    return [_zeros_like(x) if g is None else g for x, g in zip(inputs, got, strict=True)]
