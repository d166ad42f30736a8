"""Tensors from Python data and ndarrays: ``tensor``, ``as_tensor``, ``from_numpy``.

These are not aten ops (PyTorch's aren't either): they turn outside data into a base tensor,
then hand over to the registry (``.to(device)``) for anything device-specific.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ember import dtypes
from ember._tensor import Tensor, wrap
from ember.device import as_device
from ember.ops.registry import ops

_KIND_DTYPE = {"b": dtypes.bool_, "i": dtypes.int64, "u": dtypes.int64}


def _infer_array(data: Any, dtype: dtypes.dtype | None) -> np.ndarray:
    if isinstance(data, Tensor):
        arr = np.array(data._values("tensor"))
        return arr if dtype is None else arr.astype(dtype.np)
    if isinstance(data, np.ndarray):
        arr = np.array(data)
        if dtype is None:
            dtypes.from_numpy_dtype(arr.dtype)  # rejects uint16 and the like
            return arr
        return arr.astype(dtype.np)
    if isinstance(data, (list, tuple)) and any(isinstance(x, Tensor) for x in _flat(data)):
        data = _untensor(data)
    try:
        arr = np.array(data)
    except ValueError as e:
        raise ValueError(
            f"ember.tensor(): could not build a tensor from ragged data: {e}"
        ) from None
    if arr.dtype == object or arr.dtype.kind in "USV":
        raise TypeError(
            f"ember.tensor(): expected numbers or nested sequences of numbers, got "
            f"{type(data).__name__} holding {arr.dtype}"
        )
    if dtype is not None:
        return arr.astype(dtype.np)
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
    t = wrap(np.asarray(_infer_array(data, dtype), order="C"))
    dev = as_device(device)
    if dev.type != "cpu":
        t = t.to(dev)  # type: ignore[attr-defined]
    t = ops.aten.lift_fresh.default(t)  # what a dispatch mode sees, as in PyTorch
    if requires_grad:
        t.requires_grad_(True)
    return t


def as_tensor(data: Any, dtype: dtypes.dtype | None = None, device: Any = None) -> Tensor:
    """``data`` as a tensor, sharing memory when it already is one (or an ndarray) of the
    requested dtype and device.

    >>> a = np.zeros(2, np.float32); ember.as_tensor(a).numpy() is not None
    True
    """
    dev = as_device(device)
    if isinstance(data, Tensor):
        out = data
        if dtype is not None and dtype is not data.dtype:
            out = out.to(dtype)  # type: ignore[attr-defined]
        return out if dev == out.device else out.to(dev)  # type: ignore[attr-defined]
    if isinstance(data, np.ndarray) and dev.type == "cpu":
        t = from_numpy(data)
        return t if dtype is None or dtype is t.dtype else t.to(dtype)  # type: ignore[attr-defined]
    return tensor(data, dtype=dtype, device=dev)


def from_numpy(ndarray: np.ndarray) -> Tensor:
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
    return wrap(ndarray)
