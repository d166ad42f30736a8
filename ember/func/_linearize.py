"""``ember.func.linearize``: a function's output and its Jacobian-vector product as a function.

# NOTE [linearize]
As PyTorch's: ``func`` runs once for the output, and once more under ``make_fx`` inside a
``jvp`` whose tangents are the graph's inputs. Every node of that graph that does not
depend on the tangents (the primal computation, and whatever the tangent formulas read of
it) is folded into a constant of the module (``ember.compiler.constant_folding``), so each
call of the returned function runs only the tangent computation: ``func`` is not called
again.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ember._tensor import Tensor
from ember.compiler.constant_folding import fold_constants
from ember.func._jvp import jvp
from ember.fx.experimental.proxy_tensor import make_fx
from ember.utils._pytree import tree_flatten, tree_unflatten


def linearize(func: Callable[..., Any], *primals: Any) -> tuple[Any, Callable[..., Any]]:
    """``(func(*primals), jvp_fn)``, where ``jvp_fn(*tangents)`` is the Jacobian-vector
    product of ``func`` at ``primals`` (tangents of the primals' structure, shapes and
    dtypes), computed without running ``func`` again (NOTE [linearize]).

    >>> out, jvp_fn = ember.func.linearize(ember.sin, ember.tensor([0.0]))
    >>> jvp_fn(ember.tensor([2.0]))
    tensor([2.])
    """
    flat_p, spec_p = tree_flatten(primals)
    for p in flat_p:
        if not isinstance(p, Tensor):
            raise RuntimeError(
                f"linearize(func, *primals): expected primals to only contain Tensors, got "
                f"{type(p).__name__}"
            )
    out = func(*primals)
    _, spec_out = tree_flatten(out)

    def tangents_of(*flat_t: Tensor) -> list[Any]:
        _, t_out = jvp(func, primals, tree_unflatten(list(flat_t), spec_p))
        return tree_flatten(t_out)[0]

    graph = make_fx(tangents_of)(*[p.new_zeros(p.shape) for p in flat_p])
    fold_constants(graph.graph)
    graph.recompile()
    meta = [(tuple(p.shape), p.device, p.dtype) for p in flat_p]

    def jvp_fn(*tangents: Any) -> Any:
        flat_t, spec_t = tree_flatten(tangents)
        if spec_t != spec_p:
            raise RuntimeError(
                f"Expected the tangents {spec_t} to have the same argspec as the primals {spec_p}"
            )
        for i, (t, (shape, device, dtype)) in enumerate(zip(flat_t, meta, strict=True)):
            for what, got, want in (
                ("shape", tuple(t.shape), shape), ("device", t.device, device),
                ("dtype", t.dtype, dtype),
            ):  # fmt: skip
                if got != want:
                    raise RuntimeError(
                        f"tangent:{i} with {what} {got} in flattened pytree doesn't match the "
                        f"{what} {want} of the corresponding primal."
                    )
        return tree_unflatten(list(graph(*flat_t)), spec_out)

    return out, jvp_fn
