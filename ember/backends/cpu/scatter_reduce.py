"""CPU kernels of ``scatter_reduce``, ``index_reduce`` and ``put`` (NOTE [scatter
reductions] in ``ember/ops/native/scatter_reduce.py``): NumPy's unbuffered ``ufunc.at``
reduces repeated indices in place."""

from __future__ import annotations

from typing import Any

import numpy as np

from ember.backends.cpu._util import Tensor, quiet_block, wrap
from ember.backends.cpu.copies import _check_bounds, _full_index
from ember.backends.meta.copies import check_scatter
from ember.dispatch.keys import DispatchKey
from ember.library import impl
from ember.ops.native.scatter_reduce import check_index_reduce, check_put, check_scatter_reduce
from ember.ops.registry import ops

aten = ops.aten
CPU = DispatchKey.CPU

_UFUNC = {"sum": np.add, "mean": np.add, "prod": np.multiply, "amax": np.fmax, "amin": np.fmin}


def _identity(reduce: str, dt: np.dtype) -> Any:
    if reduce in ("sum", "mean"):
        return 0
    if reduce == "prod":
        return 1
    if dt.kind == "f" or dt.kind == "c":
        return -np.inf if reduce == "amax" else np.inf
    if dt.kind == "b":
        return reduce == "amin"
    info = np.iinfo(dt)
    return info.min if reduce == "amax" else info.max


def _reduce_into(
    out: np.ndarray, where: tuple[Any, ...], values: np.ndarray, reduce: str, include_self: bool
) -> None:
    """Reduce ``values`` into ``out[where]`` in place (NOTE [scatter reductions]); half
    precision accumulates in float32, as PyTorch's."""
    if out.dtype.itemsize == 2 and out.dtype.kind not in "iu":  # float16, bfloat16
        wide = out.astype(np.float32)
        _reduce_into(wide, where, values.astype(np.float32), reduce, include_self)
        out[...] = wide.astype(out.dtype)
        return
    if not include_self:
        out[where] = _identity(reduce, out.dtype)
    with quiet_block():
        if reduce in ("amax", "amin"):
            # fmax/fmin skip NaN; PyTorch's propagate it: take the extremes, then mark NaNs
            (np.maximum if reduce == "amax" else np.minimum).at(out, where, values)
        else:
            _UFUNC[reduce].at(out, where, values)
        if reduce == "mean":
            count = np.zeros(out.shape, dtype=np.int64)
            np.add.at(count, where, 1)
            if include_self:
                count += 1
            else:
                count = np.maximum(count, 1)
            if out.dtype.kind in "iub":
                out[...] = np.floor_divide(out, count).astype(out.dtype)
            else:
                out[...] = out / count


@impl(aten.scatter_reduce.two, CPU)
def scatter_reduce(
    self: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str, *, include_self: bool = True
) -> Tensor:
    reduce = check_scatter_reduce(reduce)
    d = check_scatter(self, dim, index, src, "scatter_reduce")
    out = np.array(self._edata, order="C")
    idx = index._edata
    if idx.size == 0:
        return wrap(out)
    flat = out.reshape(1) if out.ndim == 0 else out
    _check_bounds(idx, flat.shape[d], d, "scatter_reduce")
    where = _full_index(idx.reshape(1) if idx.ndim == 0 else idx, d)
    s = src._edata.reshape(1) if src._edata.ndim == 0 else src._edata
    _reduce_into(flat, where, s[tuple(slice(0, n) for n in where[d].shape)], reduce, include_self)
    return wrap(out)


@impl(aten.index_reduce.default, CPU)
def index_reduce(
    self: Tensor,
    dim: int,
    index: Tensor,
    source: Tensor,
    reduce: str,
    *,
    include_self: bool = True,
) -> Tensor:
    d = check_index_reduce(self, dim, index, source, reduce)
    out = np.array(self._edata, order="C")
    flat = out.reshape(1) if out.ndim == 0 else out
    src = source._edata.reshape(1) if source._edata.ndim == 0 else source._edata
    idx = index._edata.reshape(-1).astype(np.int64)
    size = flat.shape[d]
    if idx.size and (idx.min() < 0 or idx.max() >= size):  # negative too, as PyTorch
        bad = idx[(idx < 0) | (idx >= size)][0]
        raise IndexError(
            f"index_reduce(): index out of range in self: index {bad} for dimension {d} "
            f"with size {size} (indices must be in [0, {size}))"
        )
    shape = [1] * src.ndim
    shape[d] = idx.size
    where = _full_index(np.broadcast_to(idx.reshape(shape), src.shape), d)
    _reduce_into(flat, where, src, reduce, include_self)
    return wrap(out)


@impl(aten.put.default, CPU)
def put(self: Tensor, index: Tensor, source: Tensor, accumulate: bool = False) -> Tensor:
    """``self`` with ``source`` written (or added) at flat, row-major ``index`` positions."""
    check_put(self, index, source)
    out = np.array(self._edata, order="C")
    flat = out.reshape(-1)
    idx = index._edata.reshape(-1)
    n = flat.size
    if idx.size and (idx.min() < -n or idx.max() >= n):
        bad = idx[(idx < -n) | (idx >= n)][0]
        raise IndexError(f"out of range: tried to access index {bad} on a tensor of {n} elements.")
    values = source._edata.reshape(-1)
    if accumulate:
        with quiet_block():
            np.add.at(flat, idx, values)
    else:
        flat[idx] = values
    return wrap(out)
