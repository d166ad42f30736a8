"""Complex numbers from real parts (issue 18): ``complex(real, imag)``, ``polar(abs, angle)``
and ``view_as_complex``, the inverse view of ``view_as_real`` (NOTE [complex views] in
``views.py``).

The checks live here, shared by the CPU kernels and the Meta rules."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ember import dtypes
from ember.ops import strides as S
from ember.ops.native._define import define
from ember.ops.shapes import broadcast_shapes

if TYPE_CHECKING:
    from ember._tensor import Tensor

_F = ("function",)
define("complex(Tensor real, Tensor imag) -> Tensor", variants=_F, out=True)
define("polar(Tensor abs, Tensor angle) -> Tensor", variants=_F, out=True)
define("view_as_complex(Tensor(a) self) -> Tensor(a)", variants=_F)


def parts_plan(a: Tensor, b: Tensor, op: str) -> tuple[tuple[int, ...], dtypes.dtype]:
    """The shape and complex dtype of ``complex(a, b)`` / ``polar(a, b)``: both float32 or
    both float64 (half would make complex32, which ember does not have), broadcast."""
    if a.dtype.category != dtypes.FLOATING or b.dtype.category != dtypes.FLOATING:
        raise RuntimeError(
            f"{op}: Expected both inputs to be Half, Float or Double tensors but got "
            f"{a.dtype._short} and {b.dtype._short}"
        )
    if a.dtype != b.dtype:
        raise RuntimeError(
            f"{op}: Expected object of scalar type {a.dtype._short} but got scalar type "
            f"{b.dtype._short} for second argument (convert one with .to(dtype))"
        )
    if a.dtype == dtypes.float16:
        raise RuntimeError(
            f"{op}: float16 parts would make a complex32 tensor, which ember does not have; "
            "convert the parts to float32 first"
        )
    return broadcast_shapes(a.shape, b.shape, op=op), a.dtype.to_complex()


def view_as_complex_layout(layout: S.Layout, dtype: Any) -> S.Layout:
    """Layout of ``view_as_complex`` in complex elements (shared by the CPU kernel and the
    Meta rule): the last dim of 2 with stride 1 dropped, the other strides and the offset
    halved; PyTorch's checks and messages."""
    shape, strides, offset = layout
    if dtype not in (dtypes.float32, dtypes.float64):
        if dtype == dtypes.float16:
            raise RuntimeError(
                "view_as_complex: a float16 tensor would view as complex32, which ember does "
                "not have; convert it to float32 first"
            )
        raise RuntimeError(
            "view_as_complex is only supported for half, float and double tensors, but got a "
            f"tensor of scalar type: {dtype._short}"
        )
    if not shape:
        raise RuntimeError("Input tensor must have one or more dimensions")
    if shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    if strides[-1] != 1:
        raise RuntimeError("Tensor must have a last dimension with stride 1")
    if any(s % 2 for s in strides[:-1]):
        raise RuntimeError("Tensor must have a stride divisible by 2 for all but last dimension")
    if offset % 2:
        raise RuntimeError("Tensor must have a storage_offset divisible by 2")
    return tuple(shape[:-1]), tuple(s // 2 for s in strides[:-1]), offset // 2
