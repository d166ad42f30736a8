"""Reducing values into positions of a tensor: ``scatter_reduce`` (``sum``, ``prod``,
``mean``, ``amax``, ``amin``, with or without ``self``'s own values), ``index_reduce``
(the same along one dim, by a vector of indices; ``prod``, ``mean``, ``amax``, ``amin``) and
``put`` (writing or adding at flat indices): schemas and the checks the CPU kernels and Meta
rules share.

# NOTE [scatter reductions]
``include_self=False`` reduces only the scattered values at each position that receives any
(positions that receive none keep ``self``'s value); ``mean`` divides by the number of values
reduced (``self``'s counting as one when included), rounding down for integers, as PyTorch.
``amax``/``amin`` propagate NaN. The gradients are PyTorch's ``scatter_reduce_backward``:
``amax``/``amin`` share the gradient evenly among the values equal to the result.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ember import dtypes
from ember.ops.native._define import define
from ember.ops.shapes import wrap_dim

if TYPE_CHECKING:
    from ember._tensor import Tensor

define("scatter_reduce.two(Tensor self, int dim, Tensor index, Tensor src, str reduce, *, "
       "bool include_self=True) -> Tensor",
       inplace=True, out=True, out_overload="two_out")  # fmt: skip
define("index_reduce(Tensor self, int dim, Tensor index, Tensor source, str reduce, *, "
       "bool include_self=True) -> Tensor", inplace=True, out=True)  # fmt: skip
define("put(Tensor self, Tensor index, Tensor source, bool accumulate=False) -> Tensor",
       inplace=True)  # fmt: skip

SCATTER_REDUCES = ("sum", "prod", "mean", "amax", "amin")
INDEX_REDUCES = ("prod", "mean", "amax", "amin")


def check_scatter_reduce(reduce: str) -> str:
    """The reduction's name (``max``/``min`` are accepted for ``amax``/``amin``, as PyTorch)."""
    reduce = {"max": "amax", "min": "amin"}.get(reduce, reduce)
    if reduce not in SCATTER_REDUCES:
        raise RuntimeError(
            f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce} "
            "(scatter_reduce)"
        )
    return reduce


def check_index_reduce(self: Tensor, dim: int, index: Tensor, source: Tensor, reduce: str) -> int:
    """``index_reduce``'s checks; returns the wrapped dim."""
    if reduce not in INDEX_REDUCES:
        raise RuntimeError(
            "index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got "
            f"{reduce}."
        )
    d = wrap_dim(dim, max(self.ndim, 1), "index_reduce")
    if index.ndim > 1:
        raise IndexError(
            f"index_reduce_(): Index is supposed to be a vector, got shape {list(index.shape)}"
        )
    if index.dtype not in (dtypes.int64, dtypes.int32):
        raise RuntimeError(
            f"index_reduce_(): Expected dtype int32/int64 for index but got {index.dtype._short}"
        )
    if self.dtype is not source.dtype:
        raise RuntimeError(
            f"index_reduce_(): self ({self.dtype._short}) and source ({source.dtype._short}) "
            "must have the same scalar type"
        )
    n = index.numel()
    if (
        source.ndim
        and self.ndim
        and (
            source.ndim != self.ndim
            or any(k != d and self.shape[k] != source.shape[k] for k in range(self.ndim))
        )
    ):
        raise RuntimeError(
            "source tensor shape must match self tensor shape, excluding the specified "
            f"dimension. Got self.shape = {list(self.shape)} source.shape = {list(source.shape)}"
        )
    size = source.shape[d] if source.ndim else 1
    if n != size:
        raise RuntimeError(
            f"index_reduce_(): Number of indices ({n}) should be equal to source.size(dim) ({size})"
        )
    return d


def check_put(self: Tensor, index: Tensor, source: Tensor) -> None:
    if index.dtype is not dtypes.int64:
        raise RuntimeError(
            f"put_(): Expected a long tensor for index, but got {index.dtype._short}"
        )
    if self.dtype is not source.dtype:
        raise RuntimeError(
            "put_(): self and source expected to have the same dtype, but got self.dtype = "
            f"{self.dtype._short} and source.dtype = {source.dtype._short}"
        )
    if index.numel() != source.numel():
        raise IndexError(
            "put_(): Expected source and index to have the same number of elements, but got "
            f"source.numel() = {source.numel()}, index.numel() = {index.numel()}"
        )
