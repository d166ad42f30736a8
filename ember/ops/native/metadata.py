"""The metadata ops: what a wrapper subclass made with ``dispatch_sizes_strides_policy``,
``dispatch_device`` or ``dispatch_layout`` is asked instead of its stored sizes, strides,
device and layout (NOTE [custom metadata] in ``ember/_wrapper_metadata.py``), with PyTorch's
schemas. They have no public function: ``Tensor.size()`` and the other members send them.
Their kernel (CompositeExplicitAutograd: every backend) reads the stored metadata, which is
what a handler that runs ``func`` on the tensor it wraps gets.

>>> ember.ops.aten.sym_size.default(ember.zeros(2, 3))
[2, 3]
"""

from __future__ import annotations

from typing import Any

from ember._layout import layout
from ember._shape_only import ShapeOnlyArray
from ember._tensor import Tensor, contiguous_of, strides_of
from ember.device import device
from ember.ops.native._define import define
from ember.ops.registry import define_op, impl, ops

_NO = ()  # no public function or method: Tensor's own members send these ops
define("sym_size(Tensor self) -> SymInt[]", variants=_NO)
define("sym_size.int(Tensor self, int dim) -> SymInt", variants=_NO)
define("sym_stride(Tensor self) -> SymInt[]", variants=_NO)
define("sym_stride.int(Tensor self, int dim) -> SymInt", variants=_NO)
define("dim(Tensor self) -> int", variants=_NO)
define("sym_numel(Tensor self) -> SymInt", variants=_NO)
define("sym_storage_offset(Tensor self) -> SymInt", variants=_NO)
define("is_contiguous(Tensor self) -> bool", variants=_NO)
define("is_contiguous.memory_format(Tensor self, MemoryFormat memory_format) -> bool", variants=_NO)
define_op("device(Tensor a) -> Device", "prim")
define_op("layout(Tensor a) -> Layout", "prim")

aten = ops.aten
_CEA = "CompositeExplicitAutograd"


@impl(aten.sym_size.default, _CEA)
def sym_size(self: Tensor) -> list[int]:
    return list(self._edata.shape)


@impl(aten.sym_size.int, _CEA)
def sym_size_int(self: Tensor, dim: int) -> int:
    return int(self._edata.shape[dim])


@impl(aten.sym_stride.default, _CEA)
def sym_stride(self: Tensor) -> list[int]:
    return list(strides_of(self))


@impl(aten.sym_stride.int, _CEA)
def sym_stride_int(self: Tensor, dim: int) -> int:
    return strides_of(self)[dim]


@impl(aten.dim.default, _CEA)
def dim(self: Tensor) -> int:
    return int(self._edata.ndim)


@impl(aten.sym_numel.default, _CEA)
def sym_numel(self: Tensor) -> int:
    return int(self._edata.size)


@impl(aten.sym_storage_offset.default, _CEA)
def sym_storage_offset(self: Tensor) -> int:
    return Tensor.storage_offset(self)  # type: ignore[no-any-return]


@impl(aten.is_contiguous.default, _CEA)
def is_contiguous(self: Tensor) -> bool:
    return contiguous_of(self, None)


@impl(aten.is_contiguous.memory_format, _CEA)
def is_contiguous_memory_format(self: Tensor, memory_format: Any) -> bool:
    return contiguous_of(self, memory_format)


@impl(ops.prim.device.default, _CEA)
def prim_device(a: Tensor) -> device:
    data = a._edata
    return data.device if isinstance(data, ShapeOnlyArray) else a.device  # type: ignore[no-any-return]


@impl(ops.prim.layout.default, _CEA)
def prim_layout(a: Tensor) -> layout:
    stored = getattr(a._edata, "stored_layout", None)  # a wrapper's: NOTE [custom metadata]
    return stored if stored is not None else a.layout  # type: ignore[no-any-return]
