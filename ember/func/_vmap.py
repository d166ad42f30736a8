"""``vmap``: a function mapped over a dimension of its inputs, run once on batched tensors.

>>> from ember.func import vmap
>>> vmap(ember.dot)(ember.ones(3, 2), ember.ones(3, 2))
tensor([2., 2., 2.])

Each call opens a vmap level and wraps the mapped inputs in BatchedTensors, whose ops run
batching rules on the FuncTorchBatched key (NOTE [vmap levels] in
``ember/_batched/tensor.py``, NOTE [batching rules] in ``ember/_batched/kernel.py``).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from ember import cat
from ember._batched import rules as _rules  # noqa: F401  (registers the batching rules)
from ember._batched.tensor import LEVELS, BatchedTensor, Level, new_level_number, wrap
from ember._tensor import Tensor
from ember.autograd.forward_ad._levels import set_tangent, tangent
from ember.dispatch import state
from ember.dispatch.keys import AUTOGRAD_BIT, VMAP_MODE_BIT
from ember.random import get_rng_state, set_rng_state
from ember.utils._pytree import TreeSpec, tree_flatten, tree_unflatten

__all__ = ["vmap"]

_RANDOMNESS = ("error", "different", "same")


def _name(func: Any) -> str:
    if hasattr(func, "__name__"):
        return str(func.__name__)
    if isinstance(func, functools.partial):
        return f"functools.partial({_name(func.func)}, ...)"
    return repr(func)


def _broadcast(prefix: Any, spec: TreeSpec) -> list[Any] | None:
    """``prefix`` (an int or None, or a tree of them matching the top of ``spec``) repeated
    over ``spec``'s leaves; None when the structures do not match."""
    if not isinstance(prefix, (tuple, list, dict)):
        return [prefix] * spec.num_leaves
    if spec.is_leaf():
        return None
    children = spec.children_specs
    if isinstance(prefix, dict):
        if spec.type is not dict or sorted(prefix) != sorted(spec.context):
            return None
        parts = [prefix[k] for k in spec.context]
    else:
        if not issubclass(spec.type, (tuple, list)) or len(prefix) != len(children):
            return None
        if isinstance(prefix, list) != issubclass(spec.type, list):
            return None
        parts = list(prefix)
    out: list[Any] = []
    for p, c in zip(parts, children, strict=True):
        got = _broadcast(p, c)
        if got is None:
            return None
        out += got
    return out


def _flat_in_dims(func: Any, in_dims: Any, args: tuple[Any, ...]) -> tuple[list, list, TreeSpec]:
    name = _name(func)
    if not isinstance(in_dims, (int, tuple)):
        raise ValueError(
            f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): expected `in_dims` to be int or a "
            f"(potentially nested) tuple matching the structure of inputs, got: {type(in_dims)}."
        )
    if len(args) == 0:
        raise ValueError(
            f"vmap({name})(<inputs>): got no inputs. Maybe you forgot to add inputs, or you "
            "are trying to vmap over a function with no inputs. The latter is unsupported."
        )
    flat_args, spec = tree_flatten(args)
    flat_dims = _broadcast(in_dims, spec)
    if flat_dims is None:
        raise ValueError(
            f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): in_dims is not compatible with "
            f"the structure of `inputs`. in_dims has structure {tree_flatten(in_dims)[1]} but "
            f"inputs has structure {spec}."
        )
    for i, (arg, d) in enumerate(zip(flat_args, flat_dims, strict=True)):
        if d is not None and not isinstance(d, int):
            raise ValueError(
                f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} for an input "
                "but in_dim must be either an integer dimension or None."
            )
        if arg is None:  # PyTorch's pytrees hold no leaf for None
            flat_dims[i] = None
            continue
        if isinstance(d, int) and not isinstance(arg, Tensor):
            raise ValueError(
                f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} for an input "
                f"but the input is of type {type(arg)}. We cannot vmap over non-Tensor "
                "arguments, please use None as the respective in_dim"
            )
        if d is not None and not -arg.dim() <= d < arg.dim():
            raise ValueError(
                f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} for some "
                f"input, but that input is a Tensor of dimensionality {arg.dim()} so expected "
                f"in_dim to satisfy -{arg.dim()} <= in_dim < {arg.dim()}."
            )
        if d is not None and d < 0:
            flat_dims[i] = d + arg.dim()
    return flat_args, flat_dims, spec


def _batch_size(flat_args: list[Any], flat_dims: list[Any]) -> int:
    sizes = [a.size(d) for a, d in zip(flat_args, flat_dims, strict=True) if d is not None]
    if not sizes:
        raise ValueError("vmap: Expected at least one Tensor to vmap over")
    if any(s != sizes[0] for s in sizes):
        raise ValueError(
            "vmap: Expected all tensors to have the same size in the mapped dimension, got "
            f"sizes {sizes} for the mapped dimension"
        )
    return int(sizes[0])


def _check_out_dims(func: Any, out_dims: Any) -> None:
    leaves = tree_flatten(out_dims)[0]
    if not all(d is None or isinstance(d, int) for d in leaves) or isinstance(out_dims, bool):
        raise ValueError(
            f"vmap({_name(func)}, ..., out_dims={out_dims}): `out_dims` must be an int, None "
            "or a python collection of ints representing where in the outputs the vmapped "
            "dimension should appear."
        )


def _unbatch(name: str, x: Any, level: Level, out_dim: int | None) -> Any:
    if out_dim is None:
        if type(x) is BatchedTensor and x._level == level.level:
            raise ValueError(
                f"vmap({name}, ...): `{name}` can not return a BatchedTensor when out_dim is None"
            )
        return x
    if not isinstance(x, Tensor):
        raise ValueError(
            f"vmap({name}, ...): `{name}` must only return Tensors, got type {type(x)}. Did "
            "you mean to set out_dims= to None for output?"
        )
    if type(x) is BatchedTensor and x._level == level.level:
        v = _physical_dual(x, level)  # NOTE [tangents leaving vmap]
        return v if out_dim in (0, -v.dim()) else v.movedim(0, out_dim)
    n = x.dim() + 1
    d = out_dim + n if out_dim < 0 else out_dim
    return x.unsqueeze(d).expand(*x.shape[:d], level.size, *x.shape[d:])


def _physical_dual(x: BatchedTensor, level: Level) -> Tensor:
    """``x``'s physical tensor, with ``x``'s tangents moved onto it.

    # NOTE [tangents leaving vmap]
    Forward AD's key is above the batching key, so a dual made inside ``vmap`` (``jacfwd``
    is ``vmap`` of ``jvp``) carries its tangents on the BatchedTensor, and so do the
    tangents of a dual level opened outside ``vmap`` that reach ops on batched values
    (``jacfwd(jacfwd(f))``). When the BatchedTensor leaves ``vmap`` its tangents move to
    the physical tensor, each turned physical the same way (batched at this level: its
    value; not batched: expanded), so the outer level still sees them.
    """
    v = x._value
    grads = x.__dict__.get("_fw_grads")
    if grads:
        for lv, t in list(grads.items()):
            if tangent(v, lv) is None:
                pt = (
                    _physical_dual(t, level)
                    if type(t) is BatchedTensor and (t._level == level.level)
                    else t.unsqueeze(0).expand(level.size, *t.shape)
                )
                set_tangent(v, lv, pt)
    return v


def _run(
    func: Callable[..., Any],
    flat_args: list[Any],
    flat_dims: list[Any],
    spec: TreeSpec,
    size: int,
    out_dims: Any,
    randomness: str,
    kwargs: dict[str, Any],
) -> Any:
    excluded = bool(state.local.exclude & AUTOGRAD_BIT)
    level = Level(new_level_number(), size, randomness, excluded)
    LEVELS.stack.append(level)
    LEVELS.by_number[level.level] = level
    mode = state.KeyGuard(include=VMAP_MODE_BIT)  # random factories (ember/_batched/random.py)
    mode.__enter__()
    try:
        batched = [
            a if d is None else wrap(a if d == 0 else a.movedim(d, 0), level.level)
            for a, d in zip(flat_args, flat_dims, strict=True)
        ]
        out = func(*tree_unflatten(batched, spec), **kwargs)
        flat_out, out_spec = tree_flatten(out)
        flat_out_dims = _broadcast(out_dims, out_spec)
        if flat_out_dims is None:
            raise ValueError(
                f"vmap({_name(func)}, ..., out_dims={out_dims})(<inputs>): out_dims is not "
                "compatible with the structure of `outputs`. out_dims has structure "
                f"{tree_flatten(out_dims)[1]} but outputs has structure {out_spec}."
            )
        name = _name(func)
        return tree_unflatten(
            [_unbatch(name, x, level, d) for x, d in zip(flat_out, flat_out_dims, strict=True)],
            out_spec,
        )
    finally:
        mode.__exit__()
        LEVELS.stack.pop()
        del LEVELS.by_number[level.level]


def _chunks(flat_args: list[Any], flat_dims: list[Any], size: int, chunk: int) -> list[list]:
    out = []
    for start in range(0, size, chunk):
        n = min(chunk, size - start)
        out.append(
            [
                a if d is None else a.narrow(d, start, n)
                for a, d in zip(flat_args, flat_dims, strict=True)
            ]
        )
    return out


def vmap(
    func: Callable[..., Any],
    in_dims: Any = 0,
    out_dims: Any = 0,
    randomness: str = "error",
    *,
    chunk_size: int | None = None,
) -> Callable[..., Any]:
    """``func`` mapped over dimension ``in_dims`` of its inputs, its outputs stacked along
    ``out_dims`` (PyTorch's ``torch.func.vmap``).

    >>> ember.vmap(lambda x: x.sum(), in_dims=1)(ember.ones(2, 3))
    tensor([2., 2., 2.])
    """
    if randomness not in _RANDOMNESS:
        raise RuntimeError(
            "Only allowed values for randomness are 'error', 'different', or 'same'. Got "
            f"{randomness}"
        )
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size <= 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")

    @functools.wraps(func)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        _check_out_dims(func, out_dims)
        flat_args, flat_dims, spec = _flat_in_dims(func, in_dims, args)
        size = _batch_size(flat_args, flat_dims)
        if chunk_size is None or chunk_size >= size:
            return _run(func, flat_args, flat_dims, spec, size, out_dims, randomness, kwargs)
        if randomness == "same":
            rng = get_rng_state()
        parts = []
        for chunk in _chunks(flat_args, flat_dims, size, chunk_size):
            if randomness == "same":
                set_rng_state(rng)
            n = next(a.size(d) for a, d in zip(chunk, flat_dims, strict=True) if d is not None)
            parts.append(_run(func, chunk, flat_dims, spec, n, out_dims, randomness, kwargs))
        return _concat(parts, out_dims)

    return wrapped


def _concat(parts: list[Any], out_dims: Any) -> Any:
    flats = [tree_flatten(p) for p in parts]
    spec = flats[0][1]
    dims = _broadcast(out_dims, spec) or [0] * spec.num_leaves
    leaves = []
    for i, d in enumerate(dims):
        items = [f[0][i] for f in flats]
        leaves.append(items[0] if d is None else cat(items, d))
    return tree_unflatten(leaves, spec)
