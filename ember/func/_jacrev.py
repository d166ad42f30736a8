"""``jacrev``: the Jacobian by reverse mode, one ``vjp`` per output element, batched with
``vmap`` over the rows of an identity (PyTorch's ``torch.func.jacrev``).

>>> from ember.func import jacrev
>>> jacrev(lambda x: x * x)(ember.tensor([1.0, 2.0]))
tensor([[2., 0.],
        [0., 4.]])
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from ember.func._reverse import check_argnums
from ember.func._vjp import vjp
from ember.func._vmap import vmap
from ember.ops.registry import ops
from ember.utils._pytree import tree_flatten, tree_unflatten

__all__ = ["jacrev"]

aten = ops.aten


def _basis(flat_out: list[Any]) -> list[Any]:
    """One cotangent per output, together the rows of an identity over all output elements:
    output ``i``'s is ``[total, *shape_i]``."""
    numels = [o.numel() for o in flat_out]
    total = sum(numels)
    out, start = [], 0
    for o, n in zip(flat_out, numels, strict=True):
        eye = aten.zeros.default([total, n], dtype=o.dtype, device=o.device)
        if n:
            eye[start : start + n].copy_(aten.eye.default(n, dtype=o.dtype, device=o.device))
        out.append(eye.view(total, *o.shape))
        start += n
    return out


def jacrev(
    func: Callable[..., Any],
    argnums: int | tuple[int, ...] = 0,
    *,
    has_aux: bool = False,
    chunk_size: int | None = None,
    _preallocate_and_copy: bool = False,
) -> Callable[..., Any]:
    """The Jacobian of ``func`` with respect to the arguments ``argnums``, by reverse mode:
    for each output, a tensor of shape ``output.shape + input.shape`` (a tuple over
    ``argnums`` when it is a tuple; pytrees as the outputs and inputs are)."""
    if chunk_size is not None and not (isinstance(chunk_size, int) and chunk_size > 0):
        raise ValueError("jacrev: `chunk_size` should be greater than 0.")

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        nums = check_argnums(argnums, len(args))
        picked = (nums,) if isinstance(nums, int) else nums

        def of_diff(*diff: Any) -> Any:
            new = list(args)
            for i, d in zip(picked, diff, strict=True):
                new[i] = d
            return func(*new, **kwargs)

        got = vjp(of_diff, *(args[i] for i in picked), has_aux=has_aux)
        out, vjp_fn = got[0], got[1]
        flat_out, out_spec = tree_flatten(out)
        basis = _basis(flat_out)
        rows = vmap(vjp_fn, chunk_size=chunk_size)(tree_unflatten(basis, out_spec))
        flat_rows, rows_spec = tree_flatten(rows)
        jac = []
        start = 0
        for o in flat_out:
            n = o.numel()
            parts = [r[start : start + n].view(*o.shape, *r.shape[1:]) for r in flat_rows]
            per_output = tree_unflatten(parts, rows_spec)
            jac.append(per_output[0] if isinstance(nums, int) else per_output)
            start += n
        result = tree_unflatten(jac, out_spec)
        return (result, got[2]) if has_aux else result

    return wrapper
