"""``ember.func.jvp``: a function's output and its Jacobian-vector product, by forward mode.

Each call opens its own dual level (NOTE [nested dual levels] in
``ember/autograd/forward_ad/_kernel.py``), so ``jvp`` nests with itself and composes with
the other transforms.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ember._tensor import Tensor
from ember.autograd import forward_ad as fwAD
from ember.func._aux import split_aux
from ember.utils._pytree import tree_flatten, tree_map, tree_unflatten


def _check_pair(primals: Any, tangents: Any) -> tuple[list[Tensor], list[Tensor], Any]:
    for what, x in (("primals", primals), ("tangents", tangents)):
        if not isinstance(x, tuple):
            raise RuntimeError(
                f"jvp(f, primals, tangents): Expected {what} to be a tuple. E.g. it should be "
                "valid to call f(*primals)."
            )
    flat_p, spec_p = tree_flatten(primals)
    flat_t, spec_t = tree_flatten(tangents)
    if spec_p != spec_t:
        raise RuntimeError(
            "jvp(f, primals, tangents): Expected primals and tangents to have the same python "
            f"structure. For example, if primals is a tuple of 3 tensors, tangents also must "
            f"be. Got primals with structure {spec_p} and tangents with structure {spec_t}"
        )
    for p, t in zip(flat_p, flat_t, strict=True):
        if not isinstance(p, Tensor) or not isinstance(t, Tensor):
            raise RuntimeError(
                "jvp(f, primals, tangents): Expected primals and tangents to only contain "
                f"Tensors, got {type(p).__name__} and {type(t).__name__}"
            )
        if tuple(p.shape) != tuple(t.shape):
            raise RuntimeError(
                "jvp(f, primals, tangents): Expected primals and tangents to have the same "
                f"shape, got a primal of shape {tuple(p.shape)} and a tangent of shape "
                f"{tuple(t.shape)}"
            )
    return flat_p, flat_t, spec_p


def _unpack_outputs(out: Any, level: int, what: str) -> tuple[Any, Any]:
    """(primals, tangents) of ``out``'s leaves at ``level``, zeros where none."""
    flat, spec = tree_flatten(out)
    primals, tangents = [], []
    for o in flat:
        if not isinstance(o, Tensor):
            raise RuntimeError(
                f"{what}: Expected f(*primals) to return only tensors, got unsupported type "
                f"{type(o).__name__}"
            )
        p, t = fwAD.unpack_dual(o, level=level)
        primals.append(p)
        tangents.append(t if t is not None else p.new_zeros(p.shape))
    return tree_unflatten(primals, spec), tree_unflatten(tangents, spec)


def jvp(
    func: Callable[..., Any],
    primals: Any,
    tangents: Any,
    *,
    strict: bool = False,
    has_aux: bool = False,
) -> Any:
    """``(func(*primals), J @ tangents)``, and ``aux`` when ``has_aux``: ``func`` then
    returns ``(output, aux)``. ``primals`` and ``tangents`` are tuples of pytrees of tensors
    of the same structure and shapes.

    >>> x = ember.tensor([0.0, 1.0])
    >>> ember.func.jvp(ember.sin, (x,), (ember.ones(2),))
    (tensor([0.0000, 0.8415]), tensor([1.0000, 0.5403]))
    """
    if strict:
        raise RuntimeError("jvp(f, primals, tangents, strict=True): strict is not supported")
    flat_p, flat_t, spec = _check_pair(primals, tangents)
    with fwAD.dual_level() as level:
        duals = [fwAD.make_dual(p, t, level=level) for p, t in zip(flat_p, flat_t, strict=True)]
        out = func(*tree_unflatten(duals, spec))
        aux = None
        if has_aux:
            out, aux = split_aux(out, "jvp(f, primals, tangents, has_aux=True)")
            aux = tree_map(
                lambda a: fwAD.unpack_dual(a, level=level).primal if isinstance(a, Tensor) else a,
                aux,
            )
        primals_out, tangents_out = _unpack_outputs(out, level, "jvp(f, primals, tangents)")
    if has_aux:
        return primals_out, tangents_out, aux
    return primals_out, tangents_out
