"""Meta rules of the indexing ops: result shapes from the index tensors' shapes
(``ember/ops/strides.py``); boolean masks give data-dependent shapes and raise."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ember import dtypes
from ember._shape_only import ShapeOnlyArray
from ember._tensor import Tensor, wrap_shape_only_like
from ember.backends.meta.copies import meta_like, meta_new
from ember.dispatch.keys import DispatchKey
from ember.library import impl
from ember.ops import strides as S
from ember.ops.native.indexing import (
    check_masked_scatter,
    check_masked_select,
    check_take,
    index_along,
)
from ember.ops.registry import ops

aten = ops.aten
Meta = DispatchKey.Meta
_INDEX_NAMES = {"int64": False, "int32": False, "uint8": True, "bool": True}


def entries(indices: Sequence[Tensor | None]) -> list[S.IndexEntry]:
    out: list[S.IndexEntry] = []
    for t in indices:
        if t is None:
            out.append(None)
            continue
        is_mask = _INDEX_NAMES.get(t.dtype.name)
        if is_mask is None:
            raise IndexError(f"index: {S.INDEX_DTYPE_ERROR}, got {t.dtype}")
        out.append((is_mask, tuple(t.shape)))
    return out


def _like(self: Tensor, shape: tuple[int, ...]) -> Tensor:
    d = self._edata
    return wrap_shape_only_like(ShapeOnlyArray(shape, d.dtype, dev=d.device), self)


@impl(aten.index.Tensor, Meta)
def index(self: Tensor, indices: Sequence[Tensor | None]) -> Tensor:
    return _like(self, S.index_shape(tuple(self.shape), entries(indices)))


@impl(aten.index_put.default, Meta)
def index_put(
    self: Tensor, indices: Sequence[Tensor | None], values: Tensor, accumulate: bool = False
) -> Tensor:
    S.check_put_dtypes(self.dtype, values.dtype)
    ents = entries(indices)
    S.check_indices(tuple(self.shape), ents)
    if not any(e is not None and e[0] for e in ents):  # masks: the target shape needs values
        target = S.index_shape(tuple(self.shape), ents)
        try:
            S.expand((tuple(values.shape), (0,) * values.ndim, 0), target)
        except RuntimeError:
            raise RuntimeError(
                f"index_put_: shape mismatch: value tensor of shape {list(values.shape)} cannot "
                f"be broadcast to indexing result of shape {list(target)}"
            ) from None
    return meta_like(self, op="index_put")  # laid out as self, as the cpu kernel


# --------------------------------------------------------------------------- take, masks,
# index_add/copy/fill (checks shared with the CPU kernels: ember/ops/native/indexing.py)


@impl(aten.take.default, Meta)
def take(self: Tensor, index: Tensor) -> Tensor:
    check_take(self, index)
    return _like(self, tuple(index.shape))


@impl(aten.masked_select.default, Meta)
def masked_select(self: Tensor, mask: Tensor) -> Tensor:
    """See NOTE [data-dependent shapes]."""
    check_masked_select(self, mask)
    raise NotImplementedError(
        f"masked_select: the result's length is the number of True elements of the mask "
        f"(shape {list(mask.shape)}), which a meta tensor does not have (NOTE [data-dependent "
        "shapes]); run masked_select on the cpu device"
    )


def _along(op: str, allowed: tuple[Any, ...], inplace: bool, with_source: bool) -> Any:
    def rule(self: Tensor, dim: int, index: Tensor, source: Any, **kwargs: Any) -> Tensor:
        if with_source:
            index_along(op, self, dim, index, source, allowed)
        else:  # index_fill: ``source`` is the value
            index_along(op, self, dim, index, None, allowed, value=source)
        if inplace:
            self._bump_version()
            return self
        if with_source:  # index_add and index_copy: a new contiguous tensor, as PyTorch's
            return meta_new(tuple(self.shape), self.dtype)
        return meta_like(self, op=op)  # index_fill: a clone of self

    return rule


_I32_64, _I64 = (dtypes.int64, dtypes.int32), (dtypes.int64,)
for _name, _allowed, _src in (("index_add", _I32_64, True), ("index_copy", _I64, True)):
    impl(getattr(aten, _name).default, Meta, _along(f"{_name}_", _allowed, False, _src))
    impl(getattr(aten, _name + "_").default, Meta, _along(f"{_name}_", _allowed, True, _src))
for _ov in ("int_Scalar", "int_Tensor"):
    impl(getattr(aten.index_fill, _ov), Meta, _along("index_fill_", _I64, False, False))
    impl(getattr(aten.index_fill_, _ov), Meta, _along("index_fill_", _I64, True, False))


@impl(aten.masked_scatter.default, Meta)
def masked_scatter(self: Tensor, mask: Tensor, source: Tensor) -> Tensor:
    return meta_new(check_masked_scatter(self, mask, source, inplace=False), self.dtype)


@impl(aten.masked_scatter_.default, Meta)
def masked_scatter_(self: Tensor, mask: Tensor, source: Tensor) -> Tensor:
    check_masked_scatter(self, mask, source, inplace=True)
    self._bump_version()
    return self
