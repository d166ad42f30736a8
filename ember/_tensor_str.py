"""Printing tensors as PyTorch does (placeholder-free minimal version; see printing issue)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ember import dtypes


def tensor_repr(t: Any) -> str:
    data = t._data
    suffix = []
    default = (dtypes.get_default_dtype(), dtypes.int64, dtypes.bool_)
    if t.dtype not in default:
        suffix.append(f"dtype={t.dtype}")
    if type(data) is not np.ndarray:
        body = "..."
        suffix.insert(0, f"size={tuple(data.shape)}")
        suffix.insert(0, f"device='{t.device}'")
        return f"tensor({body}, {', '.join(suffix)})"
    body = np.array2string(data, separator=", ", prefix="tensor(")
    return "tensor(" + body + "".join(", " + s for s in suffix) + ")"
