"""Tensor methods that convert dtype or device, and the Python bindings PyTorch writes by
hand rather than generating from a schema: ``Tensor.to``'s argument parser,
``nonzero(as_tuple=...)`` and the ``real``/``imag`` properties.

None of these is an aten op (neither are PyTorch's): each one picks an aten overload and calls
it, so ``__torch_dispatch__`` code sees ``to.dtype`` / ``_to_copy`` / ``nonzero`` / ``real`` as
it would on PyTorch. ``ember/__init__.py`` imports this module once, after the generated bindings.
"""

from __future__ import annotations

import sys
from typing import Any

from ember import dtypes
from ember._tensor import Tensor
from ember.device import device as _device
from ember.ops.registry import ops
from ember.overrides import guard_function

aten = ops.aten
_to_dtype = aten.to.dtype
_dtype = dtypes.dtype
_DEVICE_TYPES = (str, _device, int)  # an int is the current accelerator's index


def _to(
    self: Tensor,
    *args: Any,
    dtype: _dtype | None = None,
    device: Any = None,
    tensor: Tensor | None = None,
    non_blocking: bool = False,
    copy: bool = False,
    memory_format: Any = None,
    **kwargs: Any,
) -> Tensor:
    """This tensor with another dtype and/or device; itself when nothing changes (unless
    ``copy=True``). Accepts ``to(dtype)``, ``to(device, dtype=None)`` and ``to(other)``
    (positionally or by those names, ``to(tensor=other)`` as PyTorch's binding names it;
    ``other=``, the schema's name, too).

    >>> ember.ones(2).to(ember.int64)
    tensor([1, 1])
    """
    other = kwargs.pop("other", tensor)
    if kwargs:
        raise TypeError(f"to() got unexpected keyword argument(s) {sorted(kwargs)}")
    rest = list(args)
    if rest and isinstance(rest[0], Tensor):
        other = rest.pop(0)
    elif rest and isinstance(rest[0], _dtype):
        dtype = rest.pop(0)
    elif rest and (rest[0] is None or isinstance(rest[0], _DEVICE_TYPES)):
        device = rest.pop(0)
        if rest and (rest[0] is None or isinstance(rest[0], _dtype)):
            dtype = rest.pop(0)
    if len(rest) > 2 or not all(isinstance(x, bool) for x in rest):
        raise TypeError(
            "to() received an invalid combination of arguments: expected to(dtype), "
            "to(device, dtype=None) or to(other), then non_blocking=False, copy=False; got "
            f"{tuple(type(a).__name__ for a in args)}"
        )
    if rest:
        non_blocking = rest[0]
        copy = rest[1] if len(rest) > 1 else copy
    flags = (non_blocking, copy) if copy else (non_blocking,) if non_blocking else ()
    mf = {} if memory_format is None else {"memory_format": memory_format}
    if other is not None:
        return aten.to.other(self, other, *flags, **mf)
    if device is not None:
        if dtype is None:
            extra = {"non_blocking": True} if non_blocking else {}
            if copy:
                extra["copy"] = True
            return aten.to.dtype_layout(self, device=device, **extra, **mf)
        return aten.to.device(self, device, dtype, *flags, **mf)
    if dtype is not None:
        return _to_dtype(self, dtype, *flags, **mf)
    if copy or memory_format is not None:
        return aten.to.dtype_layout(self, copy=copy, **mf)
    return self


def _as(d: dtypes.dtype, name: str) -> Any:
    def convert(self: Tensor, memory_format: Any = None) -> Tensor:
        if memory_format is None:
            return _to_dtype(self, d)
        return _to_dtype(self, d, False, False, memory_format=memory_format)

    convert.__name__ = convert.__qualname__ = name
    convert.__doc__ = (
        f"``self.to({d!r})``: this tensor as {d.name} (itself if it already is).\n\n"
        f"    >>> ember.zeros(2).{name}().dtype\n    {d!r}\n"
    )
    return convert


_CONVERSIONS = {
    "float": dtypes.float32, "double": dtypes.float64, "half": dtypes.float16,
    "long": dtypes.int64, "int": dtypes.int32, "short": dtypes.int16, "char": dtypes.int8,
    "byte": dtypes.uint8, "bool": dtypes.bool_, "cfloat": dtypes.complex64,
    "cdouble": dtypes.complex128,
}  # fmt: skip
if dtypes.HAS_BFLOAT16:  # NOTE [bfloat16] in ember/dtypes.py
    _CONVERSIONS["bfloat16"] = dtypes.bfloat16


def _no_bfloat16(self: Tensor, memory_format: Any = None) -> Tensor:
    """``self.to(ember.bfloat16)``, which needs the optional ml_dtypes package."""
    raise AttributeError(dtypes.BFLOAT16_MISSING)


def _cpu(self: Tensor, memory_format: Any = None) -> Tensor:
    """This tensor on the cpu device (itself if it already is).

    >>> ember.zeros(2).cpu()
    tensor([0., 0.])
    >>> ember.zeros(2, device="meta").cpu()  # a meta tensor has no data to copy
    Traceback (most recent call last):
      ...
    NotImplementedError: ...Cannot copy out of meta tensor; no data!...
    """
    mf = {} if memory_format is None else {"memory_format": memory_format}
    return aten.to.dtype_layout(self, device=_device("cpu"), **mf)


def _cuda(
    self: Tensor, device: Any = None, non_blocking: bool = False, memory_format: Any = None
) -> Tensor:
    """This tensor on a CUDA device: ember has none, so this raises as PyTorch's CPU-only
    build does (NOTE [unavailable devices] in ``ember/device.py``).

    >>> ember.ones(2).cuda()
    Traceback (most recent call last):
      ...
    AssertionError: Torch not compiled with CUDA enabled
    """
    target = _device("cuda") if device is None else _device(device)
    if target.type != "cuda":
        raise RuntimeError("Invalid device, must be cuda device")
    mf = {} if memory_format is None else {"memory_format": memory_format}
    return aten.to.dtype_layout(self, device=target, non_blocking=non_blocking, **mf)


def _is_cuda(self: Tensor) -> bool:
    """Whether this tensor is on a CUDA device: never, in ember.

    >>> ember.ones(2).is_cuda
    False
    """
    return self.device.type == "cuda"


#: "FloatTensor" -> float32, as ``Tensor.type()`` spells them
_TYPE_NAMES = {f"{d._short}Tensor": d for d in dtypes.KNOWN_DTYPES}


def _type_name(t: Tensor) -> str:
    where = "" if t.device.type == "cpu" else f"{t.device.type}."
    return f"ember.{where}{t.dtype._short}Tensor"


def _type(self: Tensor, dtype: Any = None, non_blocking: bool = False, **kwargs: Any) -> Any:
    """With no argument, the type name (``'ember.FloatTensor'``); else this tensor converted to
    ``dtype`` (a dtype or a name like ``'ember.LongTensor'``).

    >>> ember.zeros(2).type()
    'ember.FloatTensor'
    """
    if dtype is None:
        return _type_name(self)
    if isinstance(dtype, str):
        name = dtype.rpartition(".")[2]
        found = _TYPE_NAMES.get(name)
        prefix = dtype.rpartition(".")[0]
        if found is None or prefix not in ("ember", "torch"):
            raise ValueError(
                f"type(): invalid type {dtype!r}; expected a dtype or a name like "
                "'ember.FloatTensor'"
            )
        dtype = found
    if not isinstance(dtype, _dtype):
        raise TypeError(f"type(): expected a dtype or a type name, got {type(dtype).__name__}")
    if dtype is self.dtype:
        return self
    return _to_dtype(self, dtype, non_blocking) if non_blocking else _to_dtype(self, dtype)


def _type_as(self: Tensor, other: Tensor) -> Tensor:
    """This tensor with ``other``'s dtype and device (itself if it already has them).

    >>> ember.zeros(2).type_as(ember.tensor([1])).dtype
    ember.int64
    """
    return aten.to.other(self, other)


def _nonzero_tuple(self: Tensor) -> tuple[Tensor, ...]:
    """``nonzero(as_tuple=True)``: one index tensor per dim (a 0-dim input counts as 1-D)."""
    x = self if self.ndim else aten.unsqueeze.default(self, 0)
    return tuple(aten.unbind.int(aten.nonzero.default(x), 1))


def _wrap_nonzero(generated: Any, method: bool) -> Any:
    def nonzero(*args: Any, as_tuple: bool = False, **kwargs: Any) -> Any:
        if not as_tuple:
            return generated(*args, **kwargs)
        if kwargs.get("out") is not None:
            raise RuntimeError("nonzero(): as_tuple=True does not take out=")
        (self,) = args if args else (kwargs.pop("input"),)
        return _nonzero_tuple(self)

    nonzero.__name__ = nonzero.__qualname__ = "nonzero"
    nonzero.__doc__ = (
        "Indices of the nonzero elements: an ``(n, ndim)`` int64 tensor, or with "
        "``as_tuple=True`` one 1-D index tensor per dim.\n\n"
        "    >>> ember.tensor([0, 3, 5]).nonzero(as_tuple=True)\n"
        "    (tensor([1, 2]),)\n\n" + (generated.__doc__ or "")
    )
    return nonzero


def _real(self: Tensor) -> Tensor:
    """The real part: for a complex tensor a view in the real dtype (writes reach this
    tensor), for a real one the tensor itself. Assigning to it writes into that view.

    >>> z = ember.tensor([1 + 2j]); z.real = ember.tensor([5.0]); z
    tensor([5.+2.j])
    """
    return aten.real.default(self)  # type: ignore[no-any-return]


def _write(part: Tensor, value: Any) -> None:
    """``t.real = value``: a tensor is copied in (broadcast, cast), a number fills."""
    if isinstance(value, Tensor):
        part.copy_(value)  # type: ignore[attr-defined]
    elif isinstance(value, (bool, int, float, complex)):
        part.fill_(value)  # type: ignore[attr-defined]
    else:
        raise TypeError(f"can't assign a {type(value).__name__} to a {_type_name(part)}")


def _set_real(self: Tensor, value: Any) -> None:
    _write(aten.real.default(self), value)


def _imag(self: Tensor) -> Tensor:
    """The imaginary part of a complex tensor, as a view in the real dtype (writes reach this
    tensor); real tensors raise. Assigning to it writes into that view.

    >>> z = ember.tensor([1 + 2j]); z.imag = 0; z
    tensor([1.+0.j])
    """
    return aten.imag.default(self)  # type: ignore[no-any-return]


def _set_imag(self: Tensor, value: Any) -> None:
    _write(aten.imag.default(self), value)


def _attach() -> None:
    Tensor.real = property(_real, _set_real, doc=_real.__doc__)  # type: ignore[attr-defined]
    Tensor.imag = property(_imag, _set_imag, doc=_imag.__doc__)  # type: ignore[attr-defined]
    Tensor.to = _to  # type: ignore[method-assign]
    for name, d in _CONVERSIONS.items():
        setattr(Tensor, name, _as(d, name))
    if "bfloat16" not in _CONVERSIONS:
        Tensor.bfloat16 = _no_bfloat16  # type: ignore[attr-defined]
    Tensor.cpu = _cpu  # type: ignore[attr-defined]
    Tensor.cuda = _cuda  # type: ignore[attr-defined]
    Tensor.is_cuda = property(_is_cuda, doc=_is_cuda.__doc__)  # type: ignore[attr-defined]
    Tensor.type = _type  # type: ignore[attr-defined]
    Tensor.type_as = _type_as  # type: ignore[attr-defined]
    Tensor.nonzero = _wrap_nonzero(Tensor.nonzero, method=True)  # type: ignore[attr-defined]
    for module_name in ("ember", "ember.functional"):
        module = sys.modules.get(module_name)
        if module is not None and hasattr(module, "nonzero"):
            module.nonzero = guard_function(_wrap_nonzero(module.nonzero, method=False))


_attach()
