"""Small pieces every CPU kernel uses: unwrap arguments, wrap results."""

from __future__ import annotations

from typing import Any

import numpy as np

from ember._tensor import Tensor, wrap, wrap_view

__all__ = ["data", "wrap", "wrap_view", "as_array", "Tensor"]

_ndarray = np.ndarray


def data(x: Any) -> Any:
    """The ndarray of a tensor, or a Python number unchanged."""
    if isinstance(x, Tensor):
        d = x._data
        if type(d) is not _ndarray:
            raise RuntimeError(
                f"expected a cpu tensor with data, got one on '{x.device}'; move it with .to('cpu')"
            )
        return d
    return x


def as_array(r: Any) -> np.ndarray:
    """NumPy returns scalars for 0-d results; make them 0-d arrays again."""
    return r if type(r) is _ndarray else np.asarray(r)
