"""Meta rules of the indexing ops: result shapes from the index tensors' shapes
(``ember/backends/strides.py``); boolean masks give data-dependent shapes and raise."""

from __future__ import annotations

from collections.abc import Sequence

from ember._shape_only import ShapeOnlyArray
from ember._tensor import Tensor, wrap_shape_only
from ember.backends import strides as S
from ember.backends.meta.copies import meta_like
from ember.dispatch.keys import DispatchKey
from ember.library import impl
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
    d = self._data
    return wrap_shape_only(ShapeOnlyArray(shape, d.dtype, dev=d.device), self._keys)


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
