"""SparseCPU in-place and ``out=`` kernels, derived from the functional ones
(``backends/variants.py``): a sparse destination takes the result's indices and values, a
dense one (``dense.add_(sparse)``) its values."""

from __future__ import annotations

from typing import Any

import numpy as np

from ember.backends.sparse.coo import SparseCOO
from ember.backends.variants import check_write, derive
from ember.dispatch.keys import DispatchKey


def write(dst: Any, result: Any, name: str, may_resize: bool, warn: bool = True) -> None:
    resize = check_write(dst, result, name, may_resize, warn)
    dense_dst = type(dst._edata) is not SparseCOO
    if dense_dst != (type(result._edata) is not SparseCOO):
        raise RuntimeError(
            f"{name}: the result's layout ({result.layout}) differs from the destination's "
            f"({dst.layout}); write into a tensor of the result's layout"
        )
    if dense_dst:
        if resize:
            dst._edata = np.empty(result._edata.shape, dst._edata.dtype)
        np.copyto(dst._edata, result._edata, casting="unsafe")
    else:
        r = result._edata
        values = r.values.astype(dst._edata.dtype, copy=False)
        dst._edata = SparseCOO(r.indices, values, r.shape, r.coalesced)
    dst._bump_version()


def register_variants() -> int:
    return derive(DispatchKey.SparseCPU, write)
