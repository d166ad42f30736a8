"""``ember.func.hessian``: second derivatives as the forward-mode Jacobian of the
reverse-mode one, ``jacfwd(jacrev(func))``, as PyTorch computes them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ember.func._jacfwd import jacfwd


def hessian(func: Callable[..., Any], argnums: int | tuple[int, ...] = 0) -> Callable[..., Any]:
    """A function returning the Hessian of ``func`` (a scalar function) with respect to the
    arguments at ``argnums``: ``jacfwd(jacrev(func, argnums), argnums)``.

    >>> ember.func.hessian(lambda x: (x**3).sum())(ember.tensor([1.0, 2.0]))
    tensor([[ 6.,  0.],
            [ 0., 12.]])
    """
    import ember.func

    jacrev = getattr(ember.func, "jacrev", None)
    if jacrev is None:
        raise RuntimeError("hessian: ember.func.jacrev is not available yet")
    return jacfwd(jacrev(func, argnums), argnums)
