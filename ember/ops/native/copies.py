"""The copies ops: schemas (catalogue).

Ops that make a new tensor from an existing one (``clone``, ``_to_copy``, ``cat``, ``flip``,
``gather``, ...) or write one tensor's values into another (``copy_``, ``fill_``,
``scatter_``, ``masked_fill_``). Schemas and overload names are PyTorch's; the functional
forms PyTorch keeps out of ``torch.*`` (``copy``, ``zero``) get no public function here either.

The memory formats their schemas name live in ``ember/_memory_format.py`` (NOTE [memory
formats]).
"""

from __future__ import annotations

from typing import Any

from ember import dtypes
from ember._memory_format import (
    MEMORY_FORMATS,
    channels_last,
    channels_last_3d,
    contiguous_format,
    memory_format,
    preserve_format,
)
from ember.device import as_device, check_backend
from ember.ops.native._define import FUNCTIONAL_OF, VARIANTS_OF, define
from ember.ops.registry import OpOverload, define_op, ops

__all__ = [  # the memory formats, re-exported where ember's layers have imported them from
    "MEMORY_FORMATS", "channels_last", "channels_last_3d", "contiguous_format", "memory_format",
    "preserve_format",
]  # fmt: skip


def _inplace_public(op: OpOverload, *variants: str) -> None:
    """Give ``op``'s in-place overload the bindings PyTorch gives it (``ember.fill_``)."""
    ip = VARIANTS_OF[op][0]
    assert ip is not None
    ip.overloadpacket._variants.update(variants)


METHOD = ("method",)
FUNCTION = ("function",)

# copies of one tensor
define("clone(Tensor self, *, MemoryFormat? memory_format=None) -> Tensor", out=True)
define(
    "contiguous(Tensor(a) self, *, MemoryFormat memory_format=contiguous_format) -> Tensor(a)",
    variants=METHOD,
)
define(
    "_to_copy(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
    "bool? pin_memory=None, bool non_blocking=False, MemoryFormat? memory_format=None) -> Tensor",
    variants=(),
)
# PyTorch's _to_copy.out drops the dtype/device arguments: the out tensor carries them
FUNCTIONAL_OF[
    define_op(
        "_to_copy.out(Tensor self, *, bool non_blocking=False, MemoryFormat? memory_format=None, "
        "Tensor(a!) out) -> Tensor(a!)"
    )
] = ops.aten._to_copy.default
define(
    "to.dtype_layout(Tensor(a) self, *, ScalarType? dtype=None, Layout? layout=None, "
    "Device? device=None, bool? pin_memory=None, bool non_blocking=False, bool copy=False, "
    "MemoryFormat? memory_format=None) -> Tensor(a)",
    variants=METHOD,
)
define(
    "to.device(Tensor(a) self, Device device, ScalarType dtype, bool non_blocking=False, "
    "bool copy=False, MemoryFormat? memory_format=None) -> Tensor(a)",
    variants=METHOD,
)
define(
    "to.dtype(Tensor(a) self, ScalarType dtype, bool non_blocking=False, bool copy=False, "
    "MemoryFormat? memory_format=None) -> Tensor(a)",
    variants=METHOD,
)
define(
    "to.other(Tensor(a) self, Tensor other, bool non_blocking=False, bool copy=False, "
    "MemoryFormat? memory_format=None) -> Tensor(a)",
    variants=METHOD,
)
define("detach(Tensor(a) self) -> Tensor(a)")
define("detach_(Tensor(a!) self) -> Tensor(a!)")
# set_: Tensor.set_ (ember/_tensor_set.py) picks the overload, as PyTorch's binding does
define("set_.source_Tensor(Tensor(a!) self, Tensor source) -> Tensor(a!)", variants=())
define("set_(Tensor(a!) self) -> Tensor(a!)", variants=())
define("set_.source_Storage(Tensor(a!) self, Storage source) -> Tensor(a!)", variants=())
define(
    "set_.source_Storage_storage_offset(Tensor(a!) self, Storage source, SymInt "
    "storage_offset, SymInt[] size, SymInt[] stride=[]) -> Tensor(a!)",
    variants=(),
)
define(
    "set_.source_Tensor_storage_offset(Tensor(a!) self, Tensor source, SymInt "
    "storage_offset, SymInt[] size, SymInt[] stride=[]) -> Tensor(a!)",
    variants=(),
)
define("lift_fresh(Tensor(a) self) -> Tensor(a)", variants=())
define("lift_fresh_copy(Tensor self) -> Tensor", variants=(), out=True)

# writing values into a tensor
define("copy(Tensor self, Tensor src, bool non_blocking=False) -> Tensor", variants=(),
       inplace=True, out=True)  # fmt: skip
_fill = define("fill.Scalar(Tensor self, Scalar value) -> Tensor", variants=FUNCTION,
               inplace=True, out=True, out_overload="Scalar_out")  # fmt: skip
define("fill.Tensor(Tensor self, Tensor value) -> Tensor", variants=FUNCTION, inplace=True,
       out=True, out_overload="Tensor_out")  # fmt: skip
_inplace_public(_fill, "function")
_inplace_public(define("zero(Tensor self) -> Tensor", variants=(), inplace=True, out=True),
                "function")  # fmt: skip
define("masked_fill.Scalar(Tensor self, Tensor mask, Scalar value) -> Tensor", inplace=True,
       out=True, out_overload="Scalar_out")  # fmt: skip
define("masked_fill.Tensor(Tensor self, Tensor mask, Tensor value) -> Tensor", inplace=True,
       out=True, out_overload="Tensor_out")  # fmt: skip
define("scatter.src(Tensor self, int dim, Tensor index, Tensor src) -> Tensor", inplace=True,
       out=True, out_overload="src_out")  # fmt: skip
define("scatter.value(Tensor self, int dim, Tensor index, Scalar value) -> Tensor",
       inplace=True, out=True, out_overload="value_out")  # fmt: skip
define("scatter.reduce(Tensor self, int dim, Tensor index, Tensor src, *, str reduce) -> Tensor",
       inplace=True, out=True, out_overload="reduce_out")  # fmt: skip
define("scatter.value_reduce(Tensor self, int dim, Tensor index, Scalar value, *, str reduce) "
       "-> Tensor", inplace=True, out=True, out_overload="value_reduce_out")  # fmt: skip
define("scatter_add(Tensor self, int dim, Tensor index, Tensor src) -> Tensor", inplace=True,
       out=True)  # fmt: skip

# new tensors from one or more
define("cat(Tensor[] tensors, int dim=0) -> Tensor", variants=FUNCTION, out=True)
define("stack(Tensor[] tensors, int dim=0) -> Tensor", variants=FUNCTION, out=True)
define("flip(Tensor self, int[] dims) -> Tensor", out=True)
define("roll(Tensor self, SymInt[1] shifts, int[1] dims=[]) -> Tensor", out=True)
define("repeat(Tensor self, SymInt[] repeats) -> Tensor", variants=METHOD, out=True)
define("tril(Tensor self, SymInt diagonal=0) -> Tensor", inplace=True, out=True)
define("triu(Tensor self, SymInt diagonal=0) -> Tensor", inplace=True, out=True)
define("gather(Tensor self, int dim, Tensor index, *, bool sparse_grad=False) -> Tensor",
       out=True)  # fmt: skip
define("index_select(Tensor self, int dim, Tensor index) -> Tensor", out=True)
define("nonzero(Tensor self) -> Tensor", tags=("dynamic_output_shape",), out=True)
define("nonzero_numpy(Tensor self) -> Tensor[]", tags=("dynamic_output_shape",), variants=FUNCTION)
define("where(Tensor condition) -> Tensor[]", tags=("dynamic_output_shape",), variants=FUNCTION)
define("tile(Tensor self, SymInt[] dims) -> Tensor")
define("fill_diagonal_(Tensor(a!) self, Scalar fill_value, bool wrap=False) -> Tensor(a!)",
       variants=METHOD)  # fmt: skip
define("row_stack(Tensor[] tensors) -> Tensor", variants=FUNCTION, out=True)
# joining, with the shapes NumPy's helpers give (compositions: ember/ops/native/copies_composite.py)
for _name in ("concat", "concatenate"):
    define(f"{_name}(Tensor[] tensors, int dim=0) -> Tensor", variants=FUNCTION, out=True)
for _name in ("hstack", "vstack", "dstack", "column_stack"):
    define(f"{_name}(Tensor[] tensors) -> Tensor", variants=FUNCTION, out=True)
define("block_diag(Tensor[] tensors) -> Tensor", variants=FUNCTION, out=True)
define("cartesian_prod(Tensor[] tensors) -> Tensor", variants=FUNCTION)
define("combinations(Tensor self, int r=2, bool with_replacement=False) -> Tensor",
       variants=FUNCTION)  # fmt: skip
define("meshgrid(Tensor[] tensors) -> Tensor[]", variants=FUNCTION)
define("meshgrid.indexing(Tensor[] tensors, *, str indexing) -> Tensor[]", variants=FUNCTION)
# diagonals, rotations, repeats, differences
define("diag(Tensor self, int diagonal=0) -> Tensor", out=True)
define("diag_embed(Tensor self, int offset=0, int dim1=-2, int dim2=-1) -> Tensor", out=True)
define("diagflat(Tensor self, int offset=0) -> Tensor")
define("argwhere(Tensor self) -> Tensor", tags=("dynamic_output_shape",))
define("rot90(Tensor self, int k=1, int[] dims=[0,1]) -> Tensor", out=True)
define("repeat_interleave.Tensor(Tensor repeats, *, SymInt? output_size=None) -> Tensor",
       tags=("dynamic_output_shape",), out=True, out_overload="Tensor_out")  # fmt: skip
# (tagged here, not in PyTorch: its length is the sum of the repeats' values, so Meta cannot
# give it, and FakeTensorMode raises for the repeat_interleave.Tensor it decomposes into)
define("repeat_interleave.self_Tensor(Tensor self, Tensor repeats, int? dim=None, *, "
       "SymInt? output_size=None) -> Tensor", tags=("dynamic_output_shape",))  # fmt: skip
define("repeat_interleave.self_int(Tensor self, SymInt repeats, int? dim=None, *, "
       "SymInt? output_size=None) -> Tensor")  # fmt: skip
define("diff(Tensor self, int n=1, int dim=-1, Tensor? prepend=None, Tensor? append=None) "
       "-> Tensor", out=True)  # fmt: skip
define("fliplr(Tensor self) -> Tensor")
define("flipud(Tensor self) -> Tensor")
define("narrow_copy(Tensor self, int dim, SymInt start, SymInt length) -> Tensor", out=True)
# the out-of-place writes into a view (NOTE [scatter into a view])
define("slice_scatter(Tensor self, Tensor src, int dim=0, SymInt? start=None, SymInt? end=None, "
       "SymInt step=1) -> Tensor", out=True)  # fmt: skip
define("select_scatter(Tensor self, Tensor src, int dim, SymInt index) -> Tensor", out=True)
define("diagonal_scatter(Tensor self, Tensor src, int offset=0, int dim1=0, int dim2=1) -> "
       "Tensor", out=True)  # fmt: skip
define("as_strided_scatter(Tensor self, Tensor src, SymInt[] size, SymInt[] stride, "
       "SymInt? storage_offset=None) -> Tensor", out=True)  # fmt: skip


# --------------------------------------------------------------------------- shared rules


def check_layout(layout: Any, op: str) -> None:
    """Only strided tensors exist in ember."""
    if layout is not None and str(layout).rpartition(".")[2] != "strided":
        raise RuntimeError(f"{op}: only the strided layout is supported, got {layout!r}")


def to_copy_options(
    dtype: dtypes.dtype | None = None,
    layout: Any = None,
    device: Any = None,
    pin_memory: bool | None = None,
    non_blocking: bool = False,
    memory_format: Any = None,
) -> tuple[dtypes.dtype | None, str | None, Any]:
    """``_to_copy``'s keywords, checked, as (dtype, target device type or None, memory_format).

    >>> from ember.ops.native.copies import to_copy_options
    >>> to_copy_options(device="meta")
    (None, 'meta', None)
    """
    check_layout(layout, "_to_copy")
    if device is None:
        return dtype, None, memory_format
    kind = as_device(device).type
    check_backend(kind)  # NOTE [unavailable devices]
    return dtype, kind, memory_format
