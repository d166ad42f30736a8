"""``vjp``: a function's value and its vector-Jacobian product as a function (NOTE
[reverse-mode transforms] in ``_reverse.py``).

>>> from ember.func import vjp
>>> out, vjp_fn = vjp(lambda x: x * x, ember.tensor([1.0, 2.0]))
>>> vjp_fn(ember.ones(2))
(tensor([2., 4.]),)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ember._tensor import Tensor
from ember.autograd.grad_mode import enable_grad, is_grad_enabled
from ember.func._aux import split_aux
from ember.func._reverse import grads_of, release, replace_args, tracked_outside
from ember.utils._pytree import tree_flatten, tree_unflatten

__all__ = ["vjp"]


def _check_outputs(flat: list[Any]) -> None:
    if not flat:
        raise RuntimeError(
            "vjp(f, *primals): Expected f to be a function that has non-empty output (got "
            "output = [])"
        )
    for o in flat:
        if not isinstance(o, Tensor):
            raise RuntimeError(
                f"vjp(f, *primals): expected f(*primals) to return only tensors, got "
                f"unsupported type {type(o)}"
            )
        if not (o.dtype.is_floating_point or o.dtype.is_complex):
            raise RuntimeError(
                "vjp(f, ...): All outputs of f must be floating-point or complex Tensors, got "
                f"Tensor with dtype {o.dtype}"
            )


def vjp(func: Callable[..., Any], *primals: Any, has_aux: bool = False) -> Any:
    """``(func(*primals), vjp_fn)``, where ``vjp_fn(cotangents)`` is the tuple of the
    cotangents' products with the Jacobian, one per primal (PyTorch's ``torch.func.vjp``);
    with ``has_aux``, ``func`` returns ``(output, aux)`` and ``aux`` comes third."""
    tracking = is_grad_enabled()
    with enable_grad():
        argnums = tuple(range(len(primals)))
        new, diff = replace_args(primals, argnums) if primals else ((), ())
        output = func(*new)
        aux = None
        if has_aux:
            output, aux = split_aux(output, "vjp(f, *primals)")
        flat_out, out_spec = tree_flatten(output)
        _check_outputs(flat_out)
        flat_in, in_spec = tree_flatten(diff)
    own = {id(d) for d in flat_in}
    #: whether an enclosing level tracks the output (NOTE [reverse-mode transforms])
    out_tracked = tracking and tracked_outside(flat_out, own)

    def vjp_fn(cotangents: Any, retain_graph: bool = True, create_graph: Any = None) -> Any:
        flat_ct, ct_spec = tree_flatten(cotangents)
        if ct_spec != out_spec:
            raise RuntimeError(
                "Expected pytree structure of cotangents to be the same as pytree structure "
                f"of outputs to the function. cotangents: {ct_spec}, primal output: {out_spec}"
            )
        if create_graph is None:
            create = out_tracked or any(isinstance(c, Tensor) and c.requires_grad for c in flat_ct)
        else:
            create = bool(create_graph)
        create = create and is_grad_enabled()
        got = grads_of(flat_out, flat_in, flat_ct, create=create)
        return release(tree_unflatten(got, in_spec), own, create)

    value = release(output, own, tracking)
    if has_aux:
        return value, vjp_fn, release(aux, own, tracking)
    return value, vjp_fn
