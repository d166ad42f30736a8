"""CPU in-place and out= kernels, derived from the functional ones (``backends/variants.py``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ember.backends.variants import check_write, derive
from ember.dispatch.keys import DispatchKey


def write(dst: Any, result: Any, name: str, may_resize: bool, warn: bool = True) -> None:
    """Copy ``result`` into ``dst`` (resizing an out= tensor if needed); bump its version."""
    if check_write(dst, result, name, may_resize, warn):
        dst._data = np.empty(result._data.shape, dst._data.dtype)
    np.copyto(dst._data, result._data, casting="unsafe")
    dst._bump_version()


derive(DispatchKey.CPU, write)
