"""CPU kernels of ``complex``, ``polar`` and ``view_as_complex`` (``ops/native/complex.py``)."""

from __future__ import annotations

import math

import numpy as np

from ember.backends.cpu._util import Tensor, quiet_block, wrap, wrap_view
from ember.backends.cpu.views import _address, _from_root, _root, layout
from ember.dispatch.keys import DispatchKey
from ember.library import impl
from ember.ops.native.complex import parts_plan, view_as_complex_layout
from ember.ops.registry import ops

aten = ops.aten
CPU = DispatchKey.CPU


@impl(aten.complex.default, CPU)
def complex_(real: Tensor, imag: Tensor) -> Tensor:
    """``real + i imag`` elementwise, broadcast."""
    shape, d = parts_plan(real, imag, "complex")
    out = np.empty(shape, d.np)
    out.real = real._edata
    out.imag = imag._edata
    return wrap(out)


@impl(aten.polar.default, CPU)
def polar(abs: Tensor, angle: Tensor) -> Tensor:
    """``abs * (cos(angle) + i sin(angle))`` elementwise, broadcast."""
    shape, d = parts_plan(abs, angle, "polar")
    r, t = abs._edata, angle._edata
    out = np.empty(shape, d.np)
    with quiet_block():
        out.real = r * np.cos(t)
        out.imag = r * np.sin(t)
    return wrap(out)


@impl(aten.view_as_complex.default, CPU)
def view_as_complex(self: Tensor) -> Tensor:
    """(real, imaginary) pairs along the last dim read as complex numbers, over the same
    memory (NOTE [complex views] in ``ember/ops/native/views.py``)."""
    arr = self._edata
    shape, strides, _ = layout(self)
    lay = (shape, strides, self.storage_offset())
    shape, strides, offset = view_as_complex_layout(lay, self.dtype)
    cdt = self.dtype.to_complex().np
    root = _root(arr)
    start = _address(arr) - _address(root) if math.prod(shape) else 0
    item = np.dtype(cdt).itemsize
    like = np.empty(0, cdt)
    like.flags.writeable = arr.flags.writeable
    t = wrap_view(self, _from_root(like, root, shape, tuple(s * item for s in strides), start))
    if not math.prod(shape):  # NOTE [empty views], in complex elements
        t.__dict__["_offset"] = offset
    return t
