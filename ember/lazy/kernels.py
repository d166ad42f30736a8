"""Lazy kernels of the few ops the boxed fallback cannot serve: copies off the device, a
value read (``item()``), and ``*_like`` results made on another device."""

from __future__ import annotations

from typing import Any

from ember._tensor import Tensor, wrap
from ember.device import as_device
from ember.dispatch.keys import CPU_BIT, LAZY_BIT, DispatchKey
from ember.lazy.executor import values_of
from ember.lazy.recipes import Recorder
from ember.lazy.recorder import eager, is_lazy, lazy_fallback, to_lazy
from ember.library import impl
from ember.ops.native.copies import to_copy_options
from ember.ops.native.creation import PLANS
from ember.ops.registry import ops

aten = ops.aten


@impl(aten._to_copy.default, DispatchKey.Lazy)
def _to_copy(self: Tensor, **options: Any) -> Tensor:
    """To the cpu (or meta) device: compute and copy; on the device: record."""
    dtype, kind, memory_format = to_copy_options(**options)
    if not is_lazy(self):  # a cpu tensor moving to the device
        cpu = aten._to_copy.default.redispatch(
            CPU_BIT, self, dtype=dtype, memory_format=memory_format
        )
        return to_lazy(cpu)
    if kind is not None and kind != "lazy":
        cpu = wrap(values_of(self._edata, "to"))
        rest = {k: v for k, v in options.items() if k != "device"}
        return aten._to_copy.default.redispatch(
            CPU_BIT, cpu, **{**rest, "device": options["device"]} if kind == "meta" else rest
        )
    return lazy_fallback(aten._to_copy.default, LAZY_BIT, (self,), options)


@impl(aten._linalg_check_errors.default, DispatchKey.Lazy)
def _linalg_check_errors(info: Tensor, api_name: str, *, is_matrix: bool) -> None:
    """Reads ``info``'s values to raise ``LinAlgError``: computed now, as on the cpu device
    (its Meta rule checks nothing: NOTE [linalg errors])."""
    eager(aten._linalg_check_errors.default, (info, api_name), {"is_matrix": is_matrix},
          "it raises on the values of info")  # fmt: skip


@impl(aten._local_scalar_dense.default, DispatchKey.Lazy)
def _local_scalar_dense(self: Tensor) -> Any:
    """``Tensor.item()``: the graph runs now, and its value is kept (a ``sync::item``)."""
    return aten._local_scalar_dense.default.redispatch(
        CPU_BIT, wrap(values_of(self._edata, "item"))
    )


def _like_on_another_device(op: Any) -> Any:
    """A ``*_like``/``new_*`` op's Lazy kernel: with ``device=`` naming another device, the
    result is made there from the tensor's geometry alone (NOTE [another device] in
    ``ember/ops/native/creation.py``); otherwise it is recorded, from a recipe after the
    first call with a signature (NOTE [recording fast path]: autograd's ``ones_like`` seeds
    every backward)."""
    recorder = Recorder(op)

    def kernel(self: Tensor, *args: Any, **options: Any) -> Any:
        if not is_lazy(self):  # a cpu tensor's geometry, a lazy result: made, then moved
            return to_lazy(op.redispatch(CPU_BIT, self, *args, **options))
        d = options.get("device")
        if d is not None and as_device(d).type != "lazy":
            shape, strides = list(self.shape), list(self.stride())
            stand_in = aten.empty_strided.default(shape, strides, dtype=self.dtype, device="meta")
            return op(stand_in, *args, **options)
        return recorder(op, LAZY_BIT, (self, *args), options)

    kernel.recorder = recorder  # type: ignore[attr-defined]  # (recipes.recipe_hits)
    return kernel


for _op in PLANS:
    if _op._schema.arguments[0].name == "self":
        impl(_op, DispatchKey.Lazy, _like_on_another_device(_op))
