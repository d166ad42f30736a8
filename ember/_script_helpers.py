"""Small top-level functions of ``torch`` that everyday scripts and library code call:
the ``_check`` family, the ``sym_*`` helpers (on plain Python numbers: ember has no symbolic
integers), ``typename``, ``is_storage``, ``asarray``, ``frombuffer``, the default device and
tensor type, and the inter-op thread count. ``ember/__init__.py`` exports them."""

from __future__ import annotations

import builtins
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ember import dtypes
from ember._factory import as_tensor, from_numpy, tensor
from ember._tensor import Tensor
from ember.device import device as _device
from ember.overrides import python_route
from ember.storage import UntypedStorage

__all__ = [
    "get_device_module",
    "_check",
    "_check_index",
    "_check_is_size",
    "_check_not_implemented",
    "_check_type",
    "_check_value",
    "_check_with",
    "asarray",
    "frombuffer",
    "get_default_device",
    "get_num_interop_threads",
    "is_storage",
    "set_default_device",
    "set_default_tensor_type",
    "set_num_interop_threads",
    "sym_float",
    "sym_int",
    "sym_max",
    "sym_min",
    "sym_not",
    "typename",
]

_DEFAULT_MESSAGE = "Expected cond to be True, but got False."


def _check_with(
    error_type: type[Exception], cond: Any, message: Callable[[], str] | None = None
) -> None:
    """Raise ``error_type(message())`` unless ``cond`` holds (PyTorch's ``_check_with``).

    >>> ember._check_with(ValueError, 2 > 1, lambda: "never")
    """
    if not isinstance(cond, (builtins.bool, np.bool_)) and not (
        isinstance(cond, Tensor) and cond.numel() == 1
    ):
        raise TypeError(f"cond must be a bool, but got {type(cond).__name__}")
    if not bool(cond):
        raise error_type(message() if message is not None else _DEFAULT_MESSAGE)


def _check(cond: Any, message: Callable[[], str] | None = None) -> None:
    """RuntimeError(``message()``) unless ``cond``.

    >>> ember._check(1 + 1 == 2)
    """
    _check_with(RuntimeError, cond, message)


def _check_index(cond: Any, message: Callable[[], str] | None = None) -> None:
    """IndexError unless ``cond``."""
    _check_with(IndexError, cond, message)


def _check_value(cond: Any, message: Callable[[], str] | None = None) -> None:
    """ValueError unless ``cond``."""
    _check_with(ValueError, cond, message)


def _check_type(cond: Any, message: Callable[[], str] | None = None) -> None:
    """TypeError unless ``cond``."""
    _check_with(TypeError, cond, message)


def _check_not_implemented(cond: Any, message: Callable[[], str] | None = None) -> None:
    """NotImplementedError unless ``cond``."""
    _check_with(NotImplementedError, cond, message)


def _check_is_size(i: Any, message: Callable[[], str] | None = None) -> None:
    """RuntimeError unless ``i`` can be a size (``i >= 0``)."""
    _check(i >= 0, message)


@python_route("a")
def sym_int(a: Any) -> int:
    """``int(a)``, toward zero (PyTorch's for symbolic numbers; ember's are plain).

    >>> ember.sym_int(3.7), ember.sym_max(2, 3), ember.sym_not(True)
    (3, 3, False)
    """
    return int(math.trunc(a)) if isinstance(a, float) else int(a)


@python_route("a")
def sym_float(a: Any) -> float:
    """``float(a)``."""
    return float(a)


@python_route("a", "b")
def sym_max(a: Any, b: Any) -> Any:
    """The larger of two numbers."""
    return b if b > a else a


@python_route("a", "b")
def sym_min(a: Any, b: Any) -> Any:
    """The smaller of two numbers."""
    return b if b < a else a


@python_route("a")
def sym_not(a: Any) -> bool:
    """``not a``."""
    return not a


def typename(obj: Any) -> str:
    """A tensor's legacy type name (``ember.FloatTensor``), else the object's qualified
    class name.

    >>> ember.typename(ember.ones(2)), ember.typename(3)
    ('ember.FloatTensor', 'int')
    """
    if isinstance(obj, Tensor):
        return obj.type()  # type: ignore[attr-defined,no-any-return]
    cls = obj if isinstance(obj, type) else type(obj)
    module = cls.__module__
    return cls.__qualname__ if module in (None, "builtins") else f"{module}.{cls.__qualname__}"


def is_storage(obj: Any) -> bool:
    """Whether ``obj`` is a storage (``untyped_storage()``, ``storage()``)."""
    return isinstance(obj, UntypedStorage) or type(obj).__name__ == "TypedStorage"


def asarray(
    obj: Any,
    *,
    dtype: Any = None,
    device: Any = None,
    copy: bool | None = None,
    requires_grad: bool = False,
) -> Tensor:
    """``obj`` as a tensor, sharing its memory when it can (a tensor, an ndarray or a
    buffer of the requested dtype) unless ``copy=True``; ``copy=False`` refuses to copy.

    >>> a = np.zeros(2, dtype=np.float32)
    >>> t = ember.asarray(a); t[0] = 1.0; a[0]
    np.float32(1.0)
    """
    if isinstance(obj, Tensor) or isinstance(obj, np.ndarray):
        src = obj if isinstance(obj, Tensor) else from_numpy(np.asarray(obj))
        want = src.dtype if dtype is None else dtype
        if want is not src.dtype:
            if copy is False:
                raise ValueError(
                    f"can't alias tensor with dtype '{src.dtype._short}' into dtype "
                    f"'{want._short}'; pass copy=None or copy=True"
                )
            out = src.to(want)  # type: ignore[attr-defined]
        else:
            out = src.clone() if copy else src  # type: ignore[attr-defined]
        if device is not None:
            out = out.to(device)
    elif copy is False and not hasattr(obj, "__array_interface__"):
        raise ValueError(
            f"asarray(copy=False): a {type(obj).__name__} has no memory a tensor can share; "
            "pass copy=None"
        )
    elif hasattr(obj, "__array_interface__") or hasattr(obj, "__array__"):
        out = as_tensor(np.asarray(obj), dtype=dtype, device=device)
    else:
        out = tensor(obj, dtype=dtype, device=device)
    if requires_grad:
        out.requires_grad_(True)  # type: ignore[attr-defined]
    return out


def frombuffer(
    buffer: Any, *, dtype: Any, count: int = -1, offset: int = 0, requires_grad: bool = False
) -> Tensor:
    """A 1-d tensor over the memory of an object with the buffer protocol (shared, not
    copied).

    >>> ember.frombuffer(bytearray(b"\\x00\\x00\\x80\\x3f"), dtype=ember.float32)
    tensor([1.])
    """
    if not isinstance(dtype, dtypes.dtype):
        raise TypeError(f"frombuffer(): dtype must be an ember dtype, got {dtype!r}")
    arr = np.frombuffer(buffer, dtype=dtype.np, count=count, offset=offset)
    if not arr.flags.writeable:
        arr = arr.copy()  # a read-only buffer (bytes): PyTorch warns and shares; ember copies
    out = from_numpy(arr)
    if requires_grad:
        out.requires_grad_(True)  # type: ignore[attr-defined]
    return out


def get_device_module(device: Any = None) -> Any:
    """The module of a device type (``torch.get_device_module``): ``ember.cpu`` for the cpu
    (and by default), ``ember.cuda`` for cuda (which answers as a CPU-only build).

    >>> ember.get_device_module("cpu").is_available()
    True
    """
    import importlib  # (ember.cpu and ember.cuda load after this module)

    kind = "cpu" if device is None else _device(device).type
    if kind not in ("cpu", "cuda", "mps"):
        raise RuntimeError(f"get_device_module: device {device!r} has no device module in ember")
    return importlib.import_module(f"ember.{kind}")


def get_default_device() -> Any:
    """The device factories use when none is given: always ``cpu`` in ember."""
    return _device("cpu")


def set_default_device(device: Any) -> None:
    """Only ``"cpu"`` (or None) is accepted: ember's factories always default to it."""
    if device is not None and _device(device).type != "cpu":
        raise NotImplementedError(
            f"set_default_device({device!r}): ember's factories always make cpu tensors; pass "
            "device= to each factory instead"
        )


def set_default_tensor_type(t: Any) -> None:
    """PyTorch's deprecated switch: ``FloatTensor`` or ``DoubleTensor`` (a class or its
    name) sets the default dtype to float32 or float64."""
    name = t if isinstance(t, str) else getattr(t, "__name__", repr(t))
    short = name.rsplit(".", 1)[-1]
    table = {"FloatTensor": dtypes.float32, "DoubleTensor": dtypes.float64}
    if short not in table:
        raise TypeError(
            f"set_default_tensor_type(): only FloatTensor or DoubleTensor, got {name}; use "
            "ember.set_default_dtype"
        )
    dtypes.set_default_dtype(table[short])


_INTEROP = [1]


def get_num_interop_threads() -> int:
    """Threads for inter-op parallelism (ember runs ops one after another: 1 unless set)."""
    return _INTEROP[0]


def set_num_interop_threads(n: int) -> None:
    """Record the inter-op thread count (ember does not run ops in parallel)."""
    if not isinstance(n, int) or n < 1:
        raise RuntimeError(f"Expected a positive number of threads, got {n!r}")
    _INTEROP[0] = n
