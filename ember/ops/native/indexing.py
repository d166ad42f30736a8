"""The indexing ops: schemas (catalogue). ``Tensor.__getitem__``/``__setitem__`` translate
Python indices into these and the view ops (``ember/_indexing.py``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ember import dtypes
from ember.ops.native._define import define
from ember.ops.registry import impl, ops
from ember.ops.shapes import broadcast_shapes, wrap_dim

if TYPE_CHECKING:
    from ember._tensor import Tensor

Shape = tuple[int, ...]

define("index.Tensor(Tensor self, Tensor?[] indices) -> Tensor", variants=(), out=True,
       out_overload="Tensor_out")  # fmt: skip
define(
    "index_put(Tensor self, Tensor?[] indices, Tensor values, bool accumulate=False) -> Tensor",
    inplace=True,  # index_put_(Tensor(a!) self, ...) -> Tensor(a!)
    out=True,
)

# reading by index: take (flat), take_along_dim (gather with broadcasting), masked_select
define("take(Tensor self, Tensor index) -> Tensor", out=True)
define("take_along_dim(Tensor self, Tensor indices, int? dim=None) -> Tensor", out=True)
define("masked_select(Tensor self, Tensor mask) -> Tensor", tags=("dynamic_output_shape",),
       out=True)  # fmt: skip
# writing by index along a dim, or by mask
define("index_add(Tensor self, int dim, Tensor index, Tensor source, *, Scalar alpha=1) -> Tensor",
       inplace=True, out=True)  # fmt: skip
define("index_copy(Tensor self, int dim, Tensor index, Tensor source) -> Tensor", inplace=True,
       out=True)  # fmt: skip
define("index_fill.int_Scalar(Tensor self, int dim, Tensor index, Scalar value) -> Tensor",
       inplace=True, out=True, out_overload="int_Scalar_out")  # fmt: skip
define("index_fill.int_Tensor(Tensor self, int dim, Tensor index, Tensor value) -> Tensor",
       inplace=True, out=True, out_overload="int_Tensor_out")  # fmt: skip
define("masked_scatter(Tensor self, Tensor mask, Tensor source) -> Tensor", inplace=True,
       out=True)  # fmt: skip


# --------------------------------------------------------------------------- shared rules
# (the checks the CPU kernels and the Meta rules both run; index values are the CPU's business)


def check_take(self: Tensor, index: Tensor) -> None:
    if index.dtype is not dtypes.int64:
        raise RuntimeError(
            f"take(): Expected a long tensor for index, but got {index.dtype._short}; convert "
            "it with index.long()"
        )


def _check_index_fill_value(value: Any, op: str) -> None:
    """``index_fill``'s ``value``: a number, or a tensor with no dims (``op`` names the op in
    the error)."""
    ndim = getattr(value, "ndim", 0)  # a tensor's; a Python number has none
    if ndim != 0:
        raise RuntimeError(
            f"{op} only supports a 0-dimensional value tensor, but got tensor with "
            f"{ndim} dimension(s)."
        )


def index_along(
    op: str,
    self: Tensor,
    dim: int,
    index: Tensor,
    source: Tensor | None,
    allowed: tuple[Any, ...],
    value: Any = None,
) -> int:
    """The checks of ``index_add_``/``index_copy_`` (given ``source``) and ``index_fill_``
    (given ``value``) (``op``), each with the exception types PyTorch raises; returns the
    wrapped dim."""
    d = wrap_dim(dim, self.ndim, op)
    if index.ndim > 1:
        if op == "index_fill_":
            raise RuntimeError(f"index_fill_(): Index has to be a vector/scalar, got shape "
                               f"{list(index.shape)}")  # fmt: skip
        raise IndexError(
            f"{op}(): Index is supposed to be a vector or a scalar, but got dim: {index.ndim} "
            f"with type: {index.dtype._short} and size: {list(index.shape)}"
        )
    if index.dtype not in allowed:
        names = "int32/int64" if len(allowed) == 2 else "int64"
        error = IndexError if op == "index_fill_" else RuntimeError
        raise error(f"{op}(): Expected dtype {names} for index but got: {index.dtype._short}")
    if source is None:  # index_fill_
        _check_index_fill_value(value, op)
        return d
    if source.dtype is not self.dtype:
        raise RuntimeError(
            f"{op}(): self ({self.dtype._short}) and source ({source.dtype._short}) must have "
            "the same scalar type; convert source with .to(self.dtype)"
        )
    (_check_index_copy if op == "index_copy_" else _check_index_add)(self, d, index, source)
    return d


def _shape_error(op: str, self: Tensor, source: Tensor) -> RuntimeError:
    return RuntimeError(
        f"{op}(): source tensor shape must match self tensor shape, excluding the specified "
        f"dimension. Got self.shape = {list(self.shape)} source.shape = {list(source.shape)}"
    )


def _check_index_add(self: Tensor, d: int, index: Tensor, source: Tensor) -> None:
    n = index.numel()
    if self.ndim == 0:
        if source.ndim != 0:
            raise _shape_error("index_add_", self, source)
        if n != 1:
            raise IndexError(f"index_add_(): a 0-dim self takes one index, got {n}")
        return
    if source.ndim == 0:
        raise _shape_error("index_add_", self, source)
    size = source.shape[d] if d < source.ndim else 1
    if size != n:
        raise RuntimeError(
            f"index_add_(): Number of indices ({n}) should be equal to source.size(dim): "
            f"({size}), for dim: {d}"
        )
    if source.ndim != self.ndim or any(
        i != d and a != b for i, (a, b) in enumerate(zip(self.shape, source.shape, strict=True))
    ):
        raise _shape_error("index_add_", self, source)


def _check_index_copy(self: Tensor, d: int, index: Tensor, source: Tensor) -> None:
    n = index.numel()
    if source.ndim == 0:
        if n != 1:
            raise IndexError(
                f"index_copy_(): When source is scalar, index should have one element (got {n})"
            )
        if self.ndim:
            raise _shape_error("index_copy_", self, source)
        return
    if self.ndim == 0:
        if source.numel() != 1 or n != 1:
            raise IndexError(
                f"index_copy_(): a 0-dim self takes one index and one value, got {n} index(es) "
                f"and source of shape {list(source.shape)}"
            )
        return
    if source.ndim != self.ndim:
        raise IndexError(
            "index_copy_(): When source and destination are not scalars, their dimensionality "
            f"must match. Source dimensionality ({source.ndim}), destination dimensionality "
            f"({self.ndim})"
        )
    if any(
        i != d and a != b for i, (a, b) in enumerate(zip(self.shape, source.shape, strict=True))
    ):
        raise _shape_error("index_copy_", self, source)
    if source.shape[d] != n:
        raise IndexError(
            f"index_copy_(): Number of indices ({n}) should be equal to source.size(dim) "
            f"({source.shape[d]})"
        )


def check_masked_scatter(self: Tensor, mask: Tensor, source: Tensor, inplace: bool) -> Shape:
    """``masked_scatter``'s checks; returns the result shape (``self`` broadcast with ``mask``
    out of place; ``self``'s own in place)."""
    if mask.dtype is not dtypes.bool_:
        raise RuntimeError(
            f"masked_scatter_ only supports boolean masks, but got mask with dtype "
            f"{mask.dtype._short}; compare it (mask != 0) to get one"
        )
    if source.dtype is not self.dtype:
        raise RuntimeError(
            f"masked_scatter: expected self and source to have same dtypes but got "
            f"{self.dtype._short} and {source.dtype._short}"
        )
    shape = broadcast_shapes(tuple(self.shape), tuple(mask.shape), op="masked_scatter")
    if inplace and shape != tuple(self.shape):
        raise RuntimeError(
            f"masked_scatter_: the mask (shape {list(mask.shape)}) must broadcast to self "
            f"(shape {list(self.shape)}) without changing it"
        )
    return shape


def check_masked_select(self: Tensor, mask: Tensor) -> Shape:
    if mask.dtype is not dtypes.bool_:
        raise RuntimeError(
            f"masked_select: expected BoolTensor for mask, got {mask.dtype._short}; compare it "
            "(mask != 0) to get one"
        )
    return broadcast_shapes(tuple(self.shape), tuple(mask.shape), op="masked_select")


# --------------------------------------------------------------------------- compositions

aten = ops.aten


@impl(aten.take_along_dim.default, "CompositeImplicitAutograd")
def take_along_dim(self: Tensor, indices: Tensor, dim: int | None = None) -> Tensor:
    """``gather`` with ``self`` and ``indices`` broadcast against each other outside ``dim``
    (negative indices count from the end); flat ``take`` semantics without ``dim``."""
    if dim is None:
        return aten.gather.default(
            aten.view.default(self, [-1]), 0, aten.view.default(indices, [-1])
        )
    if self.ndim != indices.ndim:
        raise RuntimeError(
            "torch.take_along_dim(): input and indices should have the same number of "
            f"dimensions, but got {self.ndim} dimensions for input, and {indices.ndim} "
            "dimensions for indices"
        )
    if indices.dtype is not dtypes.int64:
        raise RuntimeError(
            f"torch.take_along_dim(): dtype of indices should be Long but got "
            f"{indices.dtype._short}"
        )
    d = wrap_dim(dim, self.ndim, "take_along_dim")
    if self.ndim == 0:
        return aten.gather.default(self, 0, indices)
    sizes = list(self.shape)
    sizes[d] = indices.shape[d]
    idx = aten.broadcast_to.default(indices, list(broadcast_shapes(sizes, tuple(indices.shape))))
    sizes = list(indices.shape)
    sizes[d] = self.shape[d]
    src = aten.broadcast_to.default(self, list(broadcast_shapes(sizes, tuple(self.shape))))
    if src.shape[d]:
        idx = aten.remainder.Scalar(idx, src.shape[d])
    return aten.gather.default(src, d, idx)
