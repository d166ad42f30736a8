"""The cache of an AOT-compiled function: a signature per call, the compiled entry per
signature, and why a call missed (PyTorch's ``aot_function`` has none of these: it reuses
its first graph whatever the inputs are).

# NOTE [aot guards]
A call's signature holds, per flattened argument, what a graph was traced for: for a tensor
its class, shape, strides class (``contiguous``, or the strides), dtype, device,
requires_grad and, for a traceable wrapper subclass, its structure (classes, attribute
names, flatten ctx, inner tensors' signatures); for anything else its type and value (a
traced function bakes Python values in). Which arguments are the same tensor, which share
memory (views of one another: a trace of distinct tensors cannot see a write to one through
the other, so a traced write to either runs the call eagerly: NOTE [aliased inputs]), and
whether grad mode is on belong to it too, and the autocast region a call is in (its dtype and
whether it caches casts; None outside one), since a trace records autocast's casts. A
signature seen before reuses its entry; a new one retraces and can say why (``explain``):
the closest earlier signature and each field that differs, as
``args[0]: float32[8, 784] vs float32[16, 784]``.

>>> from ember.aot.guards import signature, describe_difference
>>> a = signature([ember.ones(8, 784)], True)
>>> b = signature([ember.ones(16, 784)], True)
>>> describe_difference(b, a)
['args[0]: float32[16, 784] vs float32[8, 784]']
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ember._tensor import Tensor, root_array
from ember.amp import _state as _autocast
from ember.dispatch.state import ACTIVE
from ember.utils._python_dispatch import is_traceable_wrapper_subclass

__all__ = [
    "autocast_signature",
    "describe_difference",
    "memory_id",
    "signature",
    "tensor_signature",
]


def autocast_signature() -> Any:
    """The autocast settings a trace bakes in: None outside an autocast region, else its
    dtype and whether it caches casts (NOTE [autocast as a dispatch key])."""
    if not ACTIVE[0] or not _autocast.cpu_enabled():
        return None
    return (_autocast.local.dtype["cpu"], _autocast.local.cache_enabled)


_ndarray = np.ndarray


def tensor_signature(t: Tensor) -> tuple[Any, ...]:
    """(class, shape, strides class, dtype, device, requires_grad, subclass structure)."""
    if is_traceable_wrapper_subclass(t):
        attrs, ctx = t.__tensor_flatten__()
        try:
            hash(ctx)
        except TypeError:
            ctx = repr(ctx)
        inner: Any = (tuple(attrs), ctx, tuple(tensor_signature(getattr(t, a)) for a in attrs))
    else:
        inner = None
    strides = "contiguous" if t.is_contiguous() else tuple(t.stride())
    return (type(t), tuple(t.shape), strides, t.dtype, str(t.device), t.requires_grad, inner)


def memory_id(t: Tensor) -> int | None:
    """An id of the memory a plain cpu tensor's data lives in (its root array), shared by
    every tensor that aliases it; None for other tensors (subclasses, fake, lazy)."""
    d = t._edata
    if type(d) is not _ndarray:
        return None
    return id(d) if d.base is None else id(root_array(d))


def signature(flat_args: Sequence[Any], grad_enabled: bool) -> tuple[Any, ...]:
    """The signature of one call (NOTE [aot guards])."""
    parts: list[Any] = []
    first: dict[int, int] = {}
    memory: dict[int, int] = {}
    for i, a in enumerate(flat_args):
        if isinstance(a, Tensor):
            j = first.setdefault(id(a), i)
            if j != i:
                parts.append(("dup", j))
                continue
            m = memory_id(a)
            k = i if m is None else memory.setdefault(m, i)
            parts.append(tensor_signature(a) if k == i else ("alias", k, tensor_signature(a)))
        else:
            try:
                hash(a)
                parts.append(("value", type(a), a))
            except TypeError:
                parts.append(("value", type(a), repr(a)))
    return (tuple(parts), grad_enabled, autocast_signature())


def _fmt_tensor(s: tuple[Any, ...]) -> str:
    cls, shape, strides, dtype, dev, rg, inner = s
    name = str(dtype).replace("ember.", "")
    text = f"{name}[{', '.join(map(str, shape))}]"
    if cls is not Tensor:
        text = f"{cls.__name__}({text})"
    if strides != "contiguous":
        text += f" strides={list(strides)}"
    if dev != "cpu":
        text += f" on {dev}"
    if rg:
        text += " requires_grad"
    return text


def _fmt(part: Any) -> str:
    if part[0] == "dup":
        return f"the same tensor as args[{part[1]}]"
    if part[0] == "value":
        return f"{part[1].__name__} {part[2]!r}"
    if part[0] == "alias":
        return f"{_fmt_tensor(part[2])} sharing memory with args[{part[1]}]"
    return _fmt_tensor(part)


def describe_difference(new: tuple[Any, ...], old: tuple[Any, ...]) -> list[str]:
    """What differs between two signatures, field by field, new first."""
    parts_new, grad_new, autocast_new = new
    parts_old, grad_old, autocast_old = old
    out = []
    if len(parts_new) != len(parts_old):
        out.append(f"number of arguments: {len(parts_new)} vs {len(parts_old)}")
    for i, (a, b) in enumerate(zip(parts_new, parts_old, strict=False)):
        if a != b:
            out.append(f"args[{i}]: {_fmt(a)} vs {_fmt(b)}")
    if grad_new != grad_old:
        out.append(f"grad mode: {'enabled' if grad_new else 'disabled'} vs "
                   f"{'enabled' if grad_old else 'disabled'}")  # fmt: skip
    if autocast_new != autocast_old:
        out.append(f"autocast: {_fmt_autocast(autocast_new)} vs {_fmt_autocast(autocast_old)}")
    return out


def _fmt_autocast(a: Any) -> str:
    if a is None:
        return "off"
    return str(a[0]).replace("ember.", "") + ("" if a[1] else " (cache off)")


def distance(new: tuple[Any, ...], old: tuple[Any, ...]) -> int:
    """How many fields differ (for finding the closest earlier signature)."""
    parts_new, grad_new, autocast_new = new
    parts_old, grad_old, autocast_old = old
    n = abs(len(parts_new) - len(parts_old)) * 8 + (grad_new != grad_old)
    n += autocast_new != autocast_old
    for a, b in zip(parts_new, parts_old, strict=False):
        if a == b:
            continue
        if len(a) == len(b) == 7 and a[0] not in ("dup", "value"):
            n += sum(x != y for x, y in zip(a, b, strict=True))
        else:
            n += 7
    return n
