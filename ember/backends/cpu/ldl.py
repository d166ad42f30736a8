"""CPU kernels of the LDL factorisation (NOTE [LDL factors] in ``ember/ops/native/ldl.py``):
LAPACK's sytrf/hetrf and sytrs/hetrs through SciPy, one matrix at a time over the batch."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ember.backends.cpu._util import Tensor, quiet_block, wrap
from ember.backends.cpu.lapack import _matrices
from ember.dispatch.keys import DispatchKey
from ember.library import impl
from ember.ops.native.ldl import check_ldl_factor, ldl_solve_shape
from ember.ops.registry import ops
from ember.return_types import linalg_ldl_factor_ex as ldl_factor_ex_t

aten = ops.aten
CPU = DispatchKey.CPU


def _routine(kind: str, dt: np.dtype[Any], hermitian: bool) -> Any:
    """LAPACK's ``sy<kind>`` or, for complex hermitian matrices, ``he<kind>``."""
    from scipy.linalg import lapack  # deferred: see ember/backends/cpu/lapack.py

    name = ("he" if hermitian and dt.kind == "c" else "sy") + kind
    try:
        return lapack.get_lapack_funcs(name, dtype=dt)
    except ValueError as e:  # an older SciPy without the wrapper
        raise RuntimeError(
            f"linalg.ldl: this SciPy has no LAPACK {name} wrapper ({e}); ember needs SciPy 1.15 "
            "or newer: pip install -U scipy"
        ) from None


def _column_major(mats: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """``(batch, n, k)`` matrices reshaped to ``shape``, each laid out column-major."""
    t = np.empty((*shape[:-2], shape[-1], shape[-2]), mats.dtype)
    t[...] = np.swapaxes(mats.reshape(shape), -1, -2)
    return np.swapaxes(t, -1, -2)  # (a reshape here would re-lay size-1 dims row-major)


def _raise_for(info: np.ndarray, api: str, is_matrix: bool) -> None:
    flat = info.reshape(-1)
    if not (flat > 0).any():
        return
    i = int(np.flatnonzero(flat > 0)[0])
    where = "" if is_matrix else f"(Batch element {i}): "
    raise RuntimeError(
        f"{api}: {where}The factorization could not be completed: D[{flat[i]}, {flat[i]}] "
        "is exactly zero (the matrix is singular); ldl_factor_ex returns the factors and info "
        "without raising"
    )


@impl(aten.linalg_ldl_factor_ex.default, CPU)
def linalg_ldl_factor_ex(
    self: Tensor, *, hermitian: bool = False, check_errors: bool = False
) -> ldl_factor_ex_t:
    """sytrf (hetrf) of each matrix's lower triangle: compact factors, 1-based pivots, info."""
    check_ldl_factor(self)
    a = self._edata
    n = a.shape[-1]
    mats = _matrices(a)
    ld = np.zeros(mats.shape, a.dtype)
    piv = np.broadcast_to(np.arange(1, n + 1, dtype=np.int32), (len(mats), n)).copy()
    info = np.zeros(len(mats), np.int32)
    if a.size:
        trf = _routine("trf", a.dtype, hermitian)
        with quiet_block():
            for i, m in enumerate(mats):
                f, p, info[i] = trf(m, lower=1)
                ld[i] = np.tril(f)
                piv[i] = p
    if check_errors:
        _raise_for(info, "torch.linalg.ldl_factor", a.ndim == 2)
    return ldl_factor_ex_t(
        wrap(_column_major(ld, a.shape)),
        wrap(piv.reshape(a.shape[:-1])),
        wrap(info.reshape(a.shape[:-2])),
    )


@impl(aten.linalg_ldl_solve.default, CPU)
def linalg_ldl_solve(LD: Tensor, pivots: Tensor, B: Tensor, *, hermitian: bool = False) -> Tensor:
    """sytrs (hetrs) with the factors of each (broadcast) batch element."""
    shape = ldl_solve_shape(LD, pivots, B)
    batch = shape[:-2]
    n, k = shape[-2:]
    count = math.prod(batch)
    ld = np.broadcast_to(LD._edata, (*batch, n, n)).reshape(count, n, n)
    piv = np.broadcast_to(pivots._edata, (*batch, n)).reshape(count, n).astype(np.int32)
    b = np.broadcast_to(B._edata, shape).reshape(count, n, k)
    out = np.zeros(b.shape, B._edata.dtype)
    if out.size:
        trs = _routine("trs", LD._edata.dtype, hermitian)
        with quiet_block():
            for i in range(len(b)):
                out[i], _ = trs(ld[i], piv[i], b[i], lower=1)
    return wrap(_column_major(out, shape))
