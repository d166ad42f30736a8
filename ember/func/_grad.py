"""``grad`` and ``grad_and_value``: the gradient of a function returning a scalar, as a
function (NOTE [reverse-mode transforms] in ``_reverse.py``).

>>> from ember.func import grad
>>> grad(lambda x: (x * x).sum())(ember.tensor([1.0, 2.0]))
tensor([2., 4.])
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from ember._tensor import Tensor
from ember.autograd.grad_mode import enable_grad, is_grad_enabled
from ember.func._aux import split_aux
from ember.func._reverse import (
    check_argnums,
    grads_of,
    release,
    replace_args,
    tracked_outside,
)
from ember.utils._pytree import tree_flatten, tree_unflatten

__all__ = ["grad", "grad_and_value"]


def _grad_and_value(
    func: Callable[..., Any], argnums: Any, has_aux: bool, args: tuple[Any, ...], kwargs: Any
) -> tuple[Any, Any]:
    argnums = check_argnums(argnums, len(args))
    tracking = is_grad_enabled()
    with enable_grad():
        args, diff = replace_args(args, argnums)
        output = func(*args, **kwargs)
        aux = None
        if has_aux:
            output, aux = split_aux(output, "grad_and_value(f)(*args)")
        if not isinstance(output, Tensor):
            raise RuntimeError(
                "grad_and_value(f)(*args): Expected f(*args) to return a Tensor, got "
                f"{type(output)}"
            )
        if output.dim() != 0:
            raise RuntimeError(
                "grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, "
                f"got tensor with {output.dim()} dims. Maybe you wanted to use the vjp or "
                "jacrev APIs instead?"
            )
        flat, spec = tree_flatten(diff)
        own = {id(d) for d in flat}
        create = tracking and tracked_outside([output], own)
        grads = grads_of([output], flat, None, create=create)
        result = release(tree_unflatten(grads, spec), own, create)
    value = release(output, own, tracking)
    if has_aux:
        return result, (value, release(aux, own, tracking))
    return result, value


def grad_and_value(
    func: Callable[..., Any], argnums: int | tuple[int, ...] = 0, has_aux: bool = False
) -> Callable[..., Any]:
    """``func``'s gradient with respect to the arguments ``argnums`` and its value
    (PyTorch's ``torch.func.grad_and_value``).

    >>> from ember.func import grad_and_value
    >>> grad_and_value(lambda x: (x * x).sum())(ember.tensor([3.0]))
    (tensor([6.]), tensor(9.))
    """

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        return _grad_and_value(func, argnums, has_aux, args, kwargs)

    return wrapper


def grad(
    func: Callable[..., Any], argnums: int | tuple[int, ...] = 0, has_aux: bool = False
) -> Callable[..., Any]:
    """``func``'s gradient with respect to the arguments ``argnums`` (PyTorch's
    ``torch.func.grad``); with ``has_aux``, ``func`` returns ``(output, aux)`` and the
    result is ``(gradient, aux)``.

    >>> f = ember.func.grad(lambda x, y: (x * y).sum(), argnums=(0, 1))
    >>> f(ember.ones(2), ember.ones(2) * 3)
    (tensor([3., 3.]), tensor([1., 1.]))
    """

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        g, value = _grad_and_value(func, argnums, has_aux, args, kwargs)
        return (g, value[1]) if has_aux else g

    return wrapper
