"""Tensors from Python data and ndarrays: ``tensor``, ``as_tensor``, ``from_numpy``.

These are not aten ops (PyTorch's aren't either): they turn outside data into a base tensor,
then hand over to the registry (``.to(device)``) for anything device-specific.

# NOTE [data builders and modes]
What the two modes see of them is PyTorch's. A ``TorchFunctionMode`` sees the call itself,
``tensor(data, **given kwargs)`` or ``as_tensor(...)``, and nothing of its insides (PyTorch
builds in C++): a subclass's ``__torch_function__`` never does (both are in
``get_ignored_functions``). A ``TorchDispatchMode`` sees the ops PyTorch's builders
dispatch: ``lift_fresh`` for each fresh tensor (``tensor``, ``as_tensor`` of data or an
ndarray, ``from_numpy``), then ``_to_copy(dtype=, device=)`` where a tensor or an ndarray is
copied or converted (``tensor(ndarray)``, ``as_tensor`` with another dtype), and
``detach`` + ``_to_copy`` for ``tensor(a_tensor)``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ember import dtypes
from ember._python_data import checked_array
from ember._tensor import Tensor, wrap
from ember.device import as_device
from ember.dispatch import state
from ember.dispatch.keys import TORCH_FUNCTION_MODE_BIT
from ember.ops.registry import ops
from ember.overrides import handle_torch_function

_LIFT = ops.aten.lift_fresh.default
_TO_COPY = ops.aten._to_copy.default
_DETACH = ops.aten.detach.default


def _modes_see_it() -> bool:
    """A TorchFunctionMode is on and would see a data builder's call (NOTE [data builders
    and modes])."""
    local = state.local
    return bool(local.function_modes) and not local.exclude & TORCH_FUNCTION_MODE_BIT


def _to_modes(fn: Any, data: Any, **given: Any) -> Any:
    kwargs = {k: v for k, v in given.items() if v is not None and v is not False}
    return handle_torch_function(fn, (), data, **kwargs)


_KIND_DTYPE = {"b": dtypes.bool_, "i": dtypes.int64, "u": dtypes.int64}


def _cast(arr: np.ndarray, dtype: dtypes.dtype) -> np.ndarray:
    """``arr`` in ``dtype``; values past its range become inf silently, as PyTorch's
    (``ember.tensor([70000.0], dtype=ember.float16)`` is ``inf``), not with NumPy's warning."""
    with np.errstate(all="ignore"):
        return arr.astype(dtype.np)


def _infer_array(data: Any, dtype: dtypes.dtype | None) -> np.ndarray:
    if isinstance(data, Tensor):
        arr = np.array(data._value_array("tensor"))
        return arr if dtype is None else _cast(arr, dtype)
    if isinstance(data, np.ndarray):
        arr = np.array(data)
        if dtype is None:
            dtypes.from_numpy_dtype(arr.dtype)  # rejects uint16 and the like
            return arr
        return _cast(arr, dtype)
    if isinstance(data, (list, tuple)) and any(isinstance(x, Tensor) for x in _flat(data)):
        data = _untensor(data)
    try:
        arr = np.array(data)
    except ValueError as e:
        raise ValueError(
            f"ember.tensor(): could not build a tensor from ragged data: {e}"
        ) from None
    arr = checked_array(data, arr, dtype)
    if arr.dtype == object or arr.dtype.kind in "USV":
        raise TypeError(
            f"ember.tensor(): expected numbers or nested sequences of numbers, got "
            f"{type(data).__name__} holding {arr.dtype}"
        )
    if dtype is not None:
        return _cast(arr, dtype)
    if arr.dtype.kind == "f":
        inferred = (
            dtypes.get_default_dtype()
            if _python_numbers(data)
            else dtypes.from_numpy_dtype(arr.dtype)
        )
    elif arr.dtype.kind == "c":
        inferred = (
            dtypes.default_complex()
            if _python_numbers(data)
            else dtypes.from_numpy_dtype(arr.dtype)
        )
    elif arr.dtype.kind in _KIND_DTYPE and _python_numbers(data):
        inferred = _KIND_DTYPE[arr.dtype.kind]
    else:
        inferred = dtypes.from_numpy_dtype(arr.dtype)
    return arr.astype(inferred.np, copy=False)


def _flat(data: Any) -> list[Any]:
    out: list[Any] = []
    stack = [data]
    while stack:
        x = stack.pop()
        if isinstance(x, (list, tuple)):
            stack.extend(x)
        else:
            out.append(x)
    return out


def _untensor(data: Any) -> Any:
    if isinstance(data, Tensor):
        return data.tolist()
    if isinstance(data, (list, tuple)):
        return [_untensor(x) for x in data]
    return data


def _python_numbers(data: Any) -> bool:
    """True if the leaves are Python numbers (their dtype comes from PyTorch's defaults)."""
    if isinstance(data, (bool, int, float, complex)):
        return True
    if isinstance(data, (list, tuple)):
        return all(_python_numbers(x) for x in data[:1]) if data else True
    return False


def tensor(
    data: Any,
    *,
    dtype: dtypes.dtype | None = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """A new tensor holding a copy of ``data`` (nested lists, numbers, ndarrays, tensors).

    >>> ember.tensor([[1, 2], [3, 4]], dtype=ember.float32)
    tensor([[1., 2.],
            [3., 4.]])
    """
    if _modes_see_it():
        return _to_modes(  # type: ignore[no-any-return]
            tensor, data, dtype=dtype, device=device, requires_grad=requires_grad
        )
    dev = as_device(device)
    with state.TorchFunctionGuard(state.TF_BITS, state.TF_BITS):  # its insides: no modes
        if isinstance(data, Tensor):  # a copy: detach, then _to_copy (PyTorch's ops)
            t = _TO_COPY(_DETACH(data), dtype=dtype or data.dtype, device=dev)
        elif isinstance(data, np.ndarray) and data.dtype.kind in "biufc":
            t = _LIFT(from_numpy(data, lift=False))
            t = _TO_COPY(t, dtype=dtype or t.dtype, device=dev)
        else:
            t = wrap(np.asarray(_infer_array(data, dtype), order="C"))
            if dev.type != "cpu":
                t = t.to(dev)  # type: ignore[attr-defined]
            t = _LIFT(t)  # what a dispatch mode sees, as in PyTorch
        if requires_grad:
            t.requires_grad_(True)
    return t


def as_tensor(data: Any, dtype: dtypes.dtype | None = None, device: Any = None) -> Tensor:
    """``data`` as a tensor, sharing memory when it already is one (or an ndarray) of the
    requested dtype and device.

    >>> a = np.zeros(2, np.float32); ember.as_tensor(a).numpy() is not None
    True
    """
    if _modes_see_it():
        return _to_modes(as_tensor, data, dtype=dtype, device=device)  # type: ignore[no-any-return]
    dev = as_device(device)
    with state.TorchFunctionGuard(state.TF_BITS, state.TF_BITS):  # its insides: no modes
        if isinstance(data, Tensor):
            if (dtype is None or dtype is data.dtype) and dev == data.device:
                return data
            return _TO_COPY(data, dtype=dtype or data.dtype, device=dev)  # type: ignore[no-any-return]
        if isinstance(data, np.ndarray) and dev.type == "cpu":
            t = from_numpy(data)
            if dtype is None or dtype is t.dtype:
                return t
            return _TO_COPY(t, dtype=dtype, device=dev)  # type: ignore[no-any-return]
        return tensor(data, dtype=dtype, device=dev)


def from_numpy(ndarray: np.ndarray, *, lift: bool = True) -> Tensor:
    """A tensor sharing memory with ``ndarray``: writes to either show in both.

    >>> a = np.zeros(2); t = ember.from_numpy(a); a[0] = 5; t
    tensor([5., 0.], dtype=ember.float64)
    """
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    dtypes.from_numpy_dtype(ndarray.dtype)
    if any(s < 0 for s in ndarray.strides):
        raise ValueError(
            "At least one stride in the given numpy array is negative, and tensors with negative "
            "strides are not currently supported. (You can probably work around this by making "
            "a copy of your array with array.copy().)"
        )
    if not ndarray.dtype.isnative:
        ndarray = ndarray.astype(ndarray.dtype.newbyteorder("="))
    t = wrap(ndarray)
    if not lift:
        return t
    if state.local.function_modes:  # PyTorch lifts in C++: TorchFunctionModes see nothing
        with state.TorchFunctionGuard(state.TF_BITS, state.TF_BITS):
            return _LIFT(t)  # type: ignore[no-any-return]
    return _LIFT(t)  # type: ignore[no-any-return]  # a dispatch mode sees it, as PyTorch's
