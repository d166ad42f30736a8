"""The stored metadata of a wrapper subclass whose handler answers for its sizes, strides,
device or layout (``_make_wrapper_subclass(..., dispatch_sizes_strides_policy=...,
dispatch_device=True, dispatch_layout=True)``).

# NOTE [custom metadata]
PyTorch lets a wrapper subclass compute its own metadata: with
``dispatch_sizes_strides_policy="sizes"`` the members ``size()``/``shape``, ``dim()``/``ndim``/
``len()``, ``numel()``, ``stride()``, ``storage_offset()`` and ``is_contiguous()`` send
``aten.sym_size.default``, ``aten.dim.default`` (``size(d)`` and ``len()`` send ``dim`` then
``sym_size``), ``aten.sym_numel.default``, ``aten.sym_stride.default``,
``aten.sym_storage_offset.default`` and ``aten.is_contiguous.default`` (``.memory_format``
for a format other than contiguous) through the dispatcher, so modes and the subclass's
``__torch_dispatch__`` answer; ``"strides"`` sends only the stride and contiguity ones;
``dispatch_device`` sends ``prim.device.default`` for ``device``, ``is_cpu``, ``is_meta`` and
``get_device()``; ``dispatch_layout`` sends ``prim.layout.default`` for ``layout``.

A handler that returns None gets the stored value (what ``_make_wrapper_subclass`` was
given) for sizes, strides, ``numel``, the storage offset and contiguity; ``dim``, the device
and the layout must be answered, as in PyTorch; a handler returning
NotImplemented fails as for any op. Results are checked as PyTorch checks them (sizes and
strides a list or tuple, ``is_contiguous`` a bool, a layout a ``layout``).

ember's own code reads the stored metadata (``_edata``), never the handler: PyTorch's C++
asks the handler for internal reads too (so its log of ``(w * 2).sum().backward()`` has
dozens of ``sym_size``/``prim.device`` calls from autograd), ember only for the members
above (docs/fidelity.md).
"""

from __future__ import annotations

from typing import Any

import numpy as np

import ember.ops.native.metadata  # noqa: F401 - defines the ops sent below
from ember._layout import layout
from ember._shape_only import ShapeOnlyArray
from ember._tensor import Size, Tensor, _wrap_dim, contiguous_of, strides_of
from ember.device import device
from ember.ops.registry import ops

#: dispatch_sizes_strides_policy -> ShapeOnlyArray.sizes_policy
POLICIES = {None: 0, "strides": 1, "sizes": 2}

_aten = ops.aten
_sym_size = _aten.sym_size.default
_sym_stride = _aten.sym_stride.default
_dim = _aten.dim.default
_sym_numel = _aten.sym_numel.default
_sym_offset = _aten.sym_storage_offset.default
_contiguous = _aten.is_contiguous.default
_contiguous_mf = _aten.is_contiguous.memory_format
_device = ops.prim.device.default
_layout = ops.prim.layout.default


def _ints(r: Any, what: str) -> tuple[int, ...]:
    if not isinstance(r, (list, tuple)):
        raise RuntimeError(
            f"{what} must be a list or a tuple (the wrapper subclass's __torch_dispatch__ "
            f"returned {type(r).__name__})"
        )
    return tuple(int(n) for n in r)


def _typed(r: Any, kind: type, what: str, expected: str) -> Any:
    if not isinstance(r, kind) or (kind is int and isinstance(r, bool)):
        raise RuntimeError(
            f"{what} returned invalid type {type(r).__name__}, expected {expected} (the "
            "wrapper subclass's __torch_dispatch__ answers it)"
        )
    return r


class CustomMetadataArray(ShapeOnlyArray):
    """A wrapper subclass's stored metadata plus which of it the handler answers for."""

    __slots__ = ("sizes_policy", "custom_device", "custom_layout", "stored_layout")

    def __init__(
        self,
        shape: tuple[int, ...],
        dtype: np.dtype[Any],
        strides: tuple[int, ...] | None,
        offset: int,
        dev: device,
        sizes_policy: int,
        custom_device: bool,
        custom_layout: bool,
        stored_layout: layout,
    ) -> None:
        super().__init__(shape, dtype, strides, offset, dev)
        self.sizes_policy = sizes_policy
        self.custom_device = custom_device
        self.custom_layout = custom_layout
        self.stored_layout = stored_layout

    # ------------------------------------------------------------------ sizes policy
    def ask_sizes(self, t: Tensor) -> Size:
        r = _sym_size(t)
        return Size(self.shape if r is None else _ints(r, "sym_size"))

    def ask_dim(self, t: Tensor) -> int:
        return int(_typed(_dim(t), int, "dim", "int"))

    def ask_size(self, t: Tensor, dim: int | None) -> Any:
        if dim is None:
            return self.ask_sizes(t)
        d = _wrap_dim(dim, self.ask_dim(t), "size")
        return self.ask_sizes(t)[d]

    def ask_len(self, t: Tensor) -> int:
        if not self.ask_dim(t):
            raise TypeError("len() of a 0-d tensor")
        return int(self.ask_sizes(t)[0])

    def ask_numel(self, t: Tensor) -> int:
        r = _sym_numel(t)
        return int(self.size if r is None else _typed(r, int, "sym_numel", "int"))

    def ask_offset(self, t: Tensor) -> int:
        r = _sym_offset(t)
        return int(self.offset if r is None else _typed(r, int, "sym_storage_offset", "int"))

    # ------------------------------------------------------------------ both policies
    def ask_strides(self, t: Tensor) -> tuple[int, ...]:
        r = _sym_stride(t)
        return strides_of(t) if r is None else _ints(r, "sym_strides")

    def ask_contiguous(self, t: Tensor, memory_format: Any) -> bool:
        if memory_format is None or getattr(memory_format, "name", None) == "contiguous_format":
            r = _contiguous(t)
        else:
            r = _contiguous_mf(t, memory_format)
        if r is None:
            return contiguous_of(t, memory_format)
        return bool(_typed(r, bool, "is_contiguous", "bool"))

    # ------------------------------------------------------------------ device, layout
    def ask_device(self, t: Tensor) -> device:
        r = _device(t)
        if isinstance(r, device):
            return r
        return device(_typed(r, str, "device", "Device"))

    def ask_layout(self, t: Tensor) -> layout:
        return _typed(_layout(t), layout, "layout", "Layout")  # type: ignore[no-any-return]
