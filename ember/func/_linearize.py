"""``ember.func.linearize``: a function's output and its Jacobian-vector product as a function."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ember._tensor import Tensor
from ember.func._jvp import jvp
from ember.utils._pytree import tree_flatten


def linearize(func: Callable[..., Any], *primals: Any) -> tuple[Any, Callable[..., Any]]:
    """``(func(*primals), jvp_fn)``, where ``jvp_fn(*tangents)`` is the Jacobian-vector
    product of ``func`` at ``primals`` (tangents of the primals' structure and shapes).

    ``jvp_fn`` runs ``jvp`` at the saved primals, so each call computes the primal output
    again; PyTorch traces the tangent computation once instead (still to come here).

    >>> out, jvp_fn = ember.func.linearize(ember.sin, ember.tensor([0.0]))
    >>> jvp_fn(ember.tensor([2.0]))
    tensor([2.])
    """
    flat, _ = tree_flatten(primals)
    for p in flat:
        if not isinstance(p, Tensor):
            raise RuntimeError(
                f"linearize(func, *primals): expected primals to only contain Tensors, got "
                f"{type(p).__name__}"
            )
    saved = tuple(primals)
    out = func(*saved)

    def jvp_fn(*tangents: Any) -> Any:
        return jvp(func, saved, tuple(tangents))[1]

    return out, jvp_fn
