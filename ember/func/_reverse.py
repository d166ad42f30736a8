"""What the reverse-mode transforms (``grad``, ``vjp``, ``jacrev``) share: argnums, the
inputs they differentiate, and how deeply they are nested.

# NOTE [reverse-mode transforms]
ember has one autograd tape, so a transform differentiates with ``autograd.grad`` on the
graph its function records. Each differentiated input is replaced by a fresh tensor that
requires grad: ``x.detach().requires_grad_()`` when nothing outside records ``x``'s
history, else an alias of ``x`` (``x.view_as(x)``) that keeps it.

PyTorch's transforms are levels, and ordinary autograd is the lowest one: whatever the
transform's function computes from tensors an enclosing level tracks (an outer
transform's inputs, a captured parameter that requires grad, an input that requires grad)
stays tracked by that level. ember asks the tape the same question: after the function
ran, does its output's graph reach a leaf other than the transform's own fresh ones
(``tracked_outside``)? If so, the backward records its own graph (``create_graph=True``)
so that the enclosing level differentiates through the gradient: ``grad(grad(f))`` is a
double backward, and ``w - lr * grad(loss)(w)`` followed by ``backward()`` is MAML's
second-order step. Each result is then released the same way: kept with its history when
it reaches an outer leaf, detached when it depends on the transform's own inputs only (or
when grad mode was off where the transform was called), so ``requires_grad`` and
``grad_fn`` come out as PyTorch's. A transform inside ``vmap`` sees BatchedTensors: its
fresh inputs require grad at the logical level, so autograd records on the BatchedTensors
and the backward formulas run through the batching rules (NOTE [vmap levels] in
``ember/_batched/tensor.py``).
"""

from __future__ import annotations

from typing import Any

from ember._graph_walk import each_once
from ember._tensor import Tensor
from ember.autograd.api import grad as autograd_grad
from ember.autograd.forward_ad._levels import copy_tangents
from ember.autograd.grad_mode import enable_grad
from ember.autograd.graph import AccumulateGrad
from ember.dispatch import marks
from ember.ops.registry import ops
from ember.utils._pytree import tree_flatten, tree_unflatten

_zeros_like = ops.aten.zeros_like.default


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


def tracked_outside(tensors: list[Any], own: set[int]) -> bool:
    """Whether the graph of any of ``tensors`` reaches a leaf that requires grad other than
    the transform's own inputs (ids in ``own``): an enclosing level tracks it (NOTE
    [reverse-mode transforms]). Stops at the first such leaf."""
    stack = []
    for t in tensors:
        if not (isinstance(t, Tensor) and t.requires_grad):
            continue
        node = t.grad_fn
        if node is None:
            if id(t) not in own:
                return True
        else:
            stack.append(node)
    for node in each_once(stack):
        if type(node) is AccumulateGrad:
            if id(node.variable) not in own:
                return True
            continue
        for nxt, _ in node.next_functions:
            if nxt is not None:
                stack.append(nxt)
    return False


def release(x: Any, own: set[int], tracking: bool) -> Any:
    """Pytree ``x`` with each tensor detached from this transform's graph unless an
    enclosing level tracks it (``tracking``: grad mode was on where the transform was
    called, and its graph reaches a leaf outside ``own``); forward-mode tangents stay (an
    outer ``jvp``'s)."""
    leaves, spec = tree_flatten(x)
    out = [
        t if not isinstance(t, Tensor) or (tracking and tracked_outside([t], own)) else _detach(t)
        for t in leaves
    ]
    return tree_unflatten(out, spec)


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
