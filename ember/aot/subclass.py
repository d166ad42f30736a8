"""Tensor subclasses in AOTAutograd: flattened into their dense tensors for tracing,
rebuilt with ``__tensor_unflatten__`` at run time (PyTorch's ``subclass_utils``).

# NOTE [subclass flattening]
A traceable wrapper subclass (``__tensor_flatten__`` / ``__tensor_unflatten__``,
``is_traceable_wrapper_subclass``) is replaced by its inner tensors, depth first (an inner
tensor that is itself such a subclass is flattened in its turn), in argument order: each
argument takes the positions ``start .. start + count`` of the dense list. The creation
metadata (``SubclassMeta``: class, attribute names, flatten ctx, outer size and stride, the
inner tensors' metadata) rebuilds the subclass from dense tensors: the traced function
rebuilds its inputs from the graph's dense placeholders, and the runtime wrapper rebuilds the
dense graph outputs (and gradients, and tangents) into the user's subclasses. The compilers
only ever see dense tensors.

>>> from ember.testing._internal.two_tensor import TwoTensor
>>> from ember.aot.subclass import flatten, unflatten
>>> t = TwoTensor(ember.ones(2), ember.zeros(2))
>>> dense, metas = flatten([t, ember.ones(1)])
>>> len(dense), metas[0].count, metas[1]
(3, 2, None)
>>> type(unflatten(dense, metas)[0]).__name__
'TwoTensor'
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ember._tensor import Tensor
from ember.utils._python_dispatch import is_traceable_wrapper_subclass

__all__ = ["SubclassMeta", "flatten", "flatten_one", "unflatten", "unflatten_one", "structure"]


class SubclassMeta:
    """How to rebuild one subclass from ``count`` dense tensors starting at ``start``."""

    __slots__ = ("cls", "attrs", "ctx", "outer_size", "outer_stride", "inner", "start", "count")

    def __init__(
        self,
        cls: type,
        attrs: list[str],
        ctx: Any,
        outer_size: tuple[int, ...],
        outer_stride: tuple[int, ...],
        inner: list[SubclassMeta | None],
        start: int,
        count: int,
    ) -> None:
        self.cls = cls
        self.attrs = attrs
        self.ctx = ctx
        self.outer_size = outer_size
        self.outer_stride = outer_stride
        self.inner = inner
        self.start = start
        self.count = count

    def __repr__(self) -> str:
        return (
            f"SubclassMeta({self.cls.__name__}, attrs={self.attrs}, start={self.start}, "
            f"count={self.count}, outer_size={list(self.outer_size)})"
        )


def flatten_one(t: Any, dense: list[Tensor]) -> SubclassMeta | None:
    """Append ``t``'s dense tensors to ``dense``; its metadata (None for a dense tensor)."""
    if not is_traceable_wrapper_subclass(t):
        dense.append(t)
        return None
    start = len(dense)
    attrs, ctx = t.__tensor_flatten__()
    inner = [flatten_one(getattr(t, a), dense) for a in attrs]
    return SubclassMeta(
        type(t), list(attrs), ctx, tuple(t.shape), tuple(t.stride()), inner, start,
        len(dense) - start,
    )  # fmt: skip


def flatten(tensors: Sequence[Any]) -> tuple[list[Tensor], list[SubclassMeta | None]]:
    """The dense tensors of ``tensors`` (NOTE [subclass flattening]) and each one's metadata."""
    dense: list[Tensor] = []
    metas = [flatten_one(t, dense) for t in tensors]
    return dense, metas


def unflatten_one(dense: Sequence[Any], meta: SubclassMeta | None, pos: int) -> tuple[Any, int]:
    """The tensor rebuilt from ``dense`` at ``pos``, and the next position."""
    if meta is None:
        return dense[pos], pos + 1
    inner = {}
    for name, m in zip(meta.attrs, meta.inner, strict=True):
        inner[name], pos = unflatten_one(dense, m, pos)
    return meta.cls.__tensor_unflatten__(inner, meta.ctx, meta.outer_size, meta.outer_stride), pos


def unflatten(dense: Sequence[Any], metas: Sequence[SubclassMeta | None]) -> list[Any]:
    """The tensors ``flatten`` took apart, rebuilt from (new) dense tensors."""
    out = []
    pos = 0
    for m in metas:
        t, pos = unflatten_one(dense, m, pos)
        out.append(t)
    return out


def structure(meta: SubclassMeta | None) -> Any:
    """A hashable description of a subclass's structure (for guards): class, attributes, ctx
    and the inner tensors' structures; None for a dense tensor."""
    if meta is None:
        return None
    ctx = meta.ctx
    try:
        hash(ctx)
    except TypeError:
        ctx = repr(ctx)
    return (meta.cls, tuple(meta.attrs), ctx, tuple(structure(m) for m in meta.inner))
