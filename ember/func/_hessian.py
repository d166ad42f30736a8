"""``ember.func.hessian``: second derivatives as the forward-mode Jacobian of the
reverse-mode one, ``jacfwd(jacrev(func))``, as PyTorch computes them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import ember.func
from ember._tensor import Tensor
from ember.autograd.api import grad
from ember.autograd.grad_mode import enable_grad
from ember.func._jacfwd import check_argnums, jacfwd
from ember.ops.registry import ops

aten = ops.aten


def _reverse_jacobian(func: Callable[..., Any], argnums: Any) -> Callable[..., Any]:
    """``jacrev`` for one tensor output and tensor inputs, one backward per output element
    (used while ``ember.func.jacrev`` is not there). Each input is differentiated as
    ``x + z`` for a zero leaf ``z``, so an ``x`` that is a dual keeps its tangents: the
    backward formulas run on duals, which is what makes ``jacfwd`` of it a Hessian."""

    def wrapper(*args: Any) -> Any:
        nums = check_argnums(argnums, len(args), "hessian")
        full = list(args)
        zs = []
        outer = any(isinstance(args[i], Tensor) and args[i].requires_grad for i in nums)
        with enable_grad():
            for i in nums:
                z = aten.zeros_like.default(args[i]).requires_grad_()
                full[i] = args[i] + z
                zs.append(z)
            out = func(*full)
            if not isinstance(out, Tensor):
                raise RuntimeError("hessian: expected func to return one Tensor")
            flat = out.reshape(-1)
            rows: list[list[Tensor]] = [[] for _ in zs]
            for k in range(flat.shape[0]):
                gs = grad(flat[k], zs, retain_graph=True, create_graph=outer, allow_unused=True)
                for r, g, z in zip(rows, gs, zs, strict=True):
                    r.append(g if g is not None else aten.zeros_like.default(z))
        jac = tuple(
            aten.stack.default(r).reshape(*out.shape, *z.shape)
            for r, z in zip(rows, zs, strict=True)
        )
        return jac if isinstance(argnums, tuple) else jac[0]

    return wrapper


def hessian(func: Callable[..., Any], argnums: int | tuple[int, ...] = 0) -> Callable[..., Any]:
    """A function returning the Hessian of ``func`` with respect to the arguments at
    ``argnums``: ``jacfwd(jacrev(func, argnums), argnums)``.

    >>> ember.func.hessian(lambda x: (x**3).sum())(ember.tensor([1.0, 2.0]))
    tensor([[ 6.,  0.],
            [ 0., 12.]])
    """
    jacrev = getattr(ember.func, "jacrev", None) or _reverse_jacobian
    return jacfwd(jacrev(func, argnums), argnums)
