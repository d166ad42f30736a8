"""CPU in-place and out= kernels, derived from the functional ones (``backends/variants.py``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ember.backends.variants import check_write, derive
from ember.dispatch.keys import DispatchKey


def write(dst: Any, result: Any, name: str, may_resize: bool, warn: bool = True) -> None:
    """Copy ``result`` into ``dst`` (resizing an out= tensor if needed); bump its version."""
    if check_write(dst, result, name, may_resize, warn):
        dst._edata = np.empty(result._edata.shape, dst._edata.dtype)
    np.copyto(dst._edata, result._edata, casting="unsafe")
    dst._bump_version()


derive(DispatchKey.CPU, write)
