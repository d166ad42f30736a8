"""Meta in-place and out= rules, derived from the functional ones (``backends/variants.py``)."""

from __future__ import annotations

from typing import Any

from ember._shape_only import ShapeOnlyArray
from ember.backends.variants import check_write, derive
from ember.dispatch.keys import DispatchKey


def write(dst: Any, result: Any, name: str, may_resize: bool, warn: bool = True) -> None:
    """Check as the CPU writer does; resize an out= tensor; bump the version. No data moves."""
    if check_write(dst, result, name, may_resize, warn):
        dst._edata = ShapeOnlyArray(result.shape, dst._edata.dtype, dev=dst._edata.device)
    dst._bump_version()


derive(DispatchKey.Meta, write)
