"""``ember.func.jacfwd``: the Jacobian of a function by forward mode, one ``jvp`` per input
element (the columns of the Jacobian), batched with ``vmap`` when it is available.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

import ember
import ember.func
from ember._tensor import Tensor
from ember.func._jvp import jvp
from ember.ops.registry import ops
from ember.utils._pytree import tree_flatten, tree_unflatten

aten = ops.aten


def check_argnums(argnums: Any, n: int, what: str) -> tuple[int, ...]:
    """``argnums`` (an int or a tuple of ints) as a tuple of valid positions of ``n``
    positional arguments, with PyTorch's errors."""
    many = isinstance(argnums, tuple)
    nums = argnums if many else (argnums,)
    if many and not nums:
        raise RuntimeError(f"{what}: argnums must be non-empty")
    for a in nums:
        if not isinstance(a, int):
            raise RuntimeError(
                f"{what}: argnums must be int or Tuple[int, ...], got: {type(argnums)}"
            )
        if not -n <= a < n:
            raise RuntimeError(
                f"{what}: Got argnums={a}, but only {n} positional inputs were given"
            )
    if len({a % n for a in nums}) != len(nums):
        raise RuntimeError(f"{what}: argnums must be unique, got {argnums}")
    return tuple(a % n for a in nums)


def basis(flat: list[Tensor]) -> list[Tensor]:
    """For inputs with ``N`` elements in all, one ``(N, *x.shape)`` tensor per input ``x``:
    row ``j`` is input ``x``'s part of the ``j``-th standard basis vector."""
    sizes = [x.numel() for x in flat]
    total = sum(sizes)
    out = []
    offset = 0
    for x, n in zip(flat, sizes, strict=True):
        eye = np.zeros((total, n), dtype=x.dtype.np)
        eye[np.arange(offset, offset + n), np.arange(n)] = 1
        offset += n
        out.append(aten.lift_fresh.default(_from_numpy(eye.reshape(total, *x.shape), x)))
    return out


def _from_numpy(a: np.ndarray, like: Tensor) -> Tensor:
    return ember.from_numpy(a).to(like.device)


def columns(fn: Callable[..., list[Tensor]], rows: list[Tensor], randomness: str) -> list[Tensor]:
    """``fn`` (tangents -> flat output tangents) mapped over the rows of ``rows``, each
    result stacked along a new first dimension: with ``ember.func.vmap`` when present, else
    a loop."""
    vmap = _vmap()
    if vmap is not None:
        return list(vmap(fn, randomness=randomness)(*rows))
    n = rows[0].shape[0] if rows else 0
    per_row = [fn(*[r[j] for r in rows]) for j in range(n)]
    return [aten.stack.default([c[k] for c in per_row]) for k in range(len(per_row[0]))]


def _vmap() -> Callable[..., Any] | None:
    return getattr(ember.func, "vmap", None)


def jacfwd(
    func: Callable[..., Any],
    argnums: int | tuple[int, ...] = 0,
    has_aux: bool = False,
    *,
    randomness: str = "error",
) -> Callable[..., Any]:
    """A function returning the Jacobian of ``func`` with respect to the arguments at
    ``argnums``, computed in forward mode: for each output leaf of shape ``o``, and input
    of shape ``i``, a tensor of shape ``o + i`` (a tuple over inputs when ``argnums`` is a
    tuple; the inputs' own structure when one is a pytree). With ``has_aux``, ``func``
    returns ``(output, aux)`` and the function returns ``(jacobian, aux)``.

    >>> ember.func.jacfwd(ember.sin)(ember.tensor([0.0, 1.0]))
    tensor([[1.0000, 0.0000],
            [0.0000, 0.5403]])
    """

    def wrapper(*args: Any) -> Any:
        nums = check_argnums(argnums, len(args), "jacfwd")
        diff = tuple(args[i] for i in nums)
        flat, spec = tree_flatten(diff)
        for x in flat:
            if not isinstance(x, Tensor):
                raise RuntimeError(
                    f"jacfwd: expected the arguments at argnums={argnums} to be Tensors or "
                    f"pytrees of Tensors, got {type(x).__name__}"
                )

        def restricted(*flat_x: Tensor) -> Any:
            full = list(args)
            for i, a in zip(nums, tree_unflatten(list(flat_x), spec), strict=True):
                full[i] = a
            return func(*full)

        primals = tuple(flat)
        found: dict[str, Any] = {}

        def push(*tangents: Tensor) -> list[Tensor]:
            res = jvp(restricted, primals, tuple(tangents), has_aux=has_aux)
            flat_tan, found["spec"] = tree_flatten(res[1])
            if has_aux and "aux" not in found and not batched[0]:
                found["aux"] = res[2]
            return flat_tan

        rows = basis(flat)
        if sum(x.numel() for x in flat) == 0:
            raise RuntimeError("jacfwd: the inputs have no elements to differentiate")
        batched = [_vmap() is not None]
        cols = columns(push, rows, randomness)
        jacs = []
        for col in cols:
            per_input = []
            offset = 0
            out_shape = tuple(col.shape[1:])
            moved = aten.movedim.int(col, 0, -1)
            for x in flat:
                n = x.numel()
                part = moved[..., offset : offset + n]
                per_input.append(part.reshape(*out_shape, *x.shape))
                offset += n
            tree = tree_unflatten(per_input, spec)
            jacs.append(tree if isinstance(argnums, tuple) else tree[0])
        jac = tree_unflatten(jacs, found["spec"])
        if has_aux:
            if "aux" not in found:  # vmap ran func on batched tensors: its aux once more
                found["aux"] = func(*args)[1]
            return jac, found["aux"]
        return jac

    return wrapper
