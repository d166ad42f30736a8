"""PyTorch's checks on Python numbers becoming a tensor's elements (``ember.tensor(data,
dtype=...)``), applied to the ndarray NumPy built from them.

# NOTE [python data ranges]
PyTorch's ``tensor()`` stores each Python number in the requested dtype one by one, and
refuses values that do not fit where NumPy's cast would wrap them silently:
- an integral dtype takes an int when it is in the dtype's range, or, for an unsigned
  dtype, when its magnitude is (``tensor([-1], dtype=uint8)`` is ``255``, ``[-256]`` is
  refused); a float when it is finite and in ``[lowest, max]`` before truncation
  (``tensor([-0.5], dtype=uint8)`` is refused, ``int8`` takes it as ``0``); anything else
  raises ``RuntimeError: value cannot be converted to type uint8 without overflow``;
- an int past int64 raises ``ValueError: Overflow when unpacking long long`` for every
  dtype but the floating, complex and bool ones (and for the inferred int64);
- ``uint64`` unpacks Python ints as unsigned: a negative int raises ``OverflowError: can't
  convert negative int to unsigned``, one past 2**64 ``OverflowError: int too big to
  convert``, and a float ``TypeError: an integer is required``;
- a complex number raises ``TypeError`` for a real dtype (bool excepted);
- a floating dtype takes any real number, past its range as ``inf``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ember import dtypes

_INT64_MAX = 2**63 - 1
_INT64_MIN = -(2**63)


def _leaves(data: Any) -> list[Any]:
    """The numbers of nested lists, in order (the first bad one is the one PyTorch names)."""
    if not isinstance(data, (list, tuple)):
        return [data.item() if isinstance(data, np.generic) else data]
    out: list[Any] = []
    for x in data:
        out.extend(_leaves(x))
    return out


def _int_bounds(d: dtypes.dtype) -> tuple[int, int]:
    """The ints ``d`` takes from Python: its range, or for an unsigned dtype the values of
    magnitude up to its maximum (NOTE [python data ranges])."""
    bits = d.itemsize * 8
    if d.is_signed:
        return -(2 ** (bits - 1)), 2 ** (bits - 1) - 1
    return -(2**bits - 1), 2**bits - 1


def _overflow(value: Any, d: dtypes.dtype) -> RuntimeError:
    return RuntimeError(
        f"ember.tensor(): value cannot be converted to type {d.name} without overflow: "
        f"{value}; pick a wider dtype or a value in range"
    )


def _unpack_overflow(value: Any, d: dtypes.dtype | None) -> ValueError:
    name = "int64 (the inferred dtype)" if d is None else d.name
    return ValueError(
        f"ember.tensor(): Overflow when unpacking long long: {value} is past int64, "
        f"which {name} data is unpacked through; pass dtype=ember.float64 (or "
        "ember.uint64 for ints below 2**64)"
    )


def _uint64_error(v: Any) -> Exception | None:
    if isinstance(v, (float, complex)):
        return TypeError(
            "ember.tensor(): an integer is required: uint64 takes Python ints only (as "
            "PyTorch's), not floats; round them first or build in float64 and .to(uint64)"
        )
    if v < 0:
        return OverflowError(
            f"ember.tensor(): can't convert negative int to unsigned ({v} for uint64); "
            "PyTorch's uint64 takes no negative ints"
        )
    if v >= 2**64:
        return OverflowError(
            f"ember.tensor(): int too big to convert: {v} is past uint64's maximum 2**64 - 1"
        )
    return None


def _leaf_error(v: Any, d: dtypes.dtype | None) -> Exception | None:
    """PyTorch's error for storing the number ``v`` in ``d`` (None: the inferred int64,
    which refuses only ints past int64), or None when it fits."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    if d is dtypes.uint64:
        return _uint64_error(v)
    if isinstance(v, int) and not _INT64_MIN <= v <= _INT64_MAX:
        return _unpack_overflow(v, d)
    if d is None:
        return None
    lo, hi = _int_bounds(d)
    if isinstance(v, float):  # compared before truncation, against the dtype's real range
        lo = lo if d.is_signed else 0
        return None if math.isfinite(v) and lo <= v <= hi else _overflow(v, d)
    return None if lo <= v <= hi else _overflow(v, d)


def _fits(arr: np.ndarray, d: dtypes.dtype | None) -> bool:
    """Every number NumPy's array holds passes ``_leaf_error`` (decided on the array, with
    no look at the Python data); False means look number by number."""
    kind = arr.dtype.kind
    if kind == "b" or not arr.size:
        return kind != "O" and (d is not dtypes.uint64 or kind != "f")
    if kind == "O":
        return False
    lo, hi = (_INT64_MIN, _INT64_MAX) if d is None else _int_bounds(d)
    if d is dtypes.uint64:
        return kind == "u" or (kind == "i" and bool(arr.min() >= 0))
    if kind in "iu":
        return bool(lo <= arr.min() and arr.max() <= hi)
    if kind != "f":
        return True
    finite = arr[np.isfinite(arr)]
    if finite.size and np.abs(finite).max() >= 2.0**63:
        return False  # a float64 array of this magnitude may hold an int past int64
    if d is None:
        return True
    lo = lo if d.is_signed else 0  # an unsigned dtype's negative ints are looked at one by one
    return bool(np.isfinite(arr).all() and lo <= arr.min() and arr.max() <= hi)


def _complex_error(d: dtypes.dtype) -> TypeError:
    if d.category == dtypes.FLOATING:
        return TypeError(
            f"ember.tensor(): must be real number, not complex (for {d.name}); take .real "
            "first or pick a complex dtype"
        )
    return TypeError(
        f"ember.tensor(): 'complex' object cannot be interpreted as an integer (for "
        f"{d.name}); take .real first or pick a complex dtype"
    )


def checked_array(data: Any, arr: np.ndarray, dtype: dtypes.dtype | None) -> np.ndarray:
    """``arr`` (NumPy's array of the Python data ``data``) once PyTorch's checks for
    ``dtype`` pass (NOTE [python data ranges]); raises as PyTorch's ``tensor()`` does."""
    if dtype is dtypes.bool_:
        return arr if arr.dtype != object else arr.astype(bool)
    if dtype is not None and dtype.category == dtypes.COMPLEX:
        return arr if arr.dtype != object else np.array(data, dtype=np.complex128)
    if arr.dtype.kind == "c" and dtype is not None:
        raise _uint64_error(1j) if dtype is dtypes.uint64 else _complex_error(dtype)  # type: ignore[misc]
    if dtype is not None and dtype.category == dtypes.FLOATING:
        if arr.dtype == object and all(isinstance(x, (int, float)) for x in _leaves(data)):
            return np.array(data, dtype=np.float64)  # ints past int64, as floats
        return arr
    if arr.dtype.kind == "c" or _fits(arr, dtype):
        return arr
    leaves = _leaves(data)
    if arr.dtype == object and not all(isinstance(x, (int, float)) for x in leaves):
        return arr  # not numbers: the caller's error
    for v in leaves:
        error = _leaf_error(v, dtype)
        if error is not None:
            raise error
    if dtype is dtypes.uint64:  # ints NumPy held as float64 (``[2**63, 1]``) or none
        return np.array(leaves, dtype=np.uint64).reshape(arr.shape)
    if dtype is not None and not dtype.is_signed and arr.dtype.kind == "f":
        # an unsigned dtype's negative ints, among floats: wrapped as PyTorch stores them
        return np.where(arr < 0, arr + 2.0 ** (dtype.itemsize * 8), arr)
    return arr
