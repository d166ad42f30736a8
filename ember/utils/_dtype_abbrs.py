"""``dtype_abbrs``: each dtype's short name in printed graphs and op logs (``f32``,
``i64``, ``b8``), as PyTorch's ``torch.utils._dtype_abbrs``.

>>> from ember.utils._dtype_abbrs import dtype_abbrs
>>> dtype_abbrs[ember.float32], dtype_abbrs[ember.bool]
('f32', 'b8')
"""

from __future__ import annotations

from ember import dtypes

dtype_abbrs: dict[dtypes.dtype, str] = {
    dtypes.uint8: "u8", dtypes.int8: "i8", dtypes.int16: "i16", dtypes.int32: "i32",
    dtypes.int64: "i64", dtypes.float16: "f16", dtypes.float32: "f32", dtypes.float64: "f64",
    dtypes.complex64: "c64", dtypes.complex128: "c128", dtypes.bool_: "b8",
}  # fmt: skip
if hasattr(dtypes, "bfloat16"):  # with the optional ml_dtypes package
    dtype_abbrs[dtypes.bfloat16] = "bf16"
