"""``torch.autocast``: a context manager (and decorator) enabling automatic mixed precision,
and the thread-local switches it sets (``ember.set_autocast_enabled``, ...).

>>> with ember.autocast("cpu"):
...     (ember.ones(2, 2) @ ember.ones(2, 2)).dtype
ember.bfloat16

On "cpu" the ops of PyTorch's CPU lists run in the region's dtype (bfloat16 by default, or
float16), in float32, or in their arguments' widest dtype (NOTE [autocast policy]); the
casts are ops of the AutocastCPU dispatch key (NOTE [autocast as a dispatch key]).
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from typing import Any, TypeVar

from ember import dtypes
from ember.amp import _state

__all__ = ["autocast", "is_autocast_available"]

F = TypeVar("F", bound=Callable[..., Any])

#: the device types torch.autocast knows but ember has no autocast for
_OTHER_DEVICES = ("mps", "xpu", "hpu", "xla", "ipu", "mtia", "maia", "privateuseone")


def is_autocast_available(device_type: str) -> bool:
    """Whether autocast can be enabled for ``device_type``: "cpu" only.

    >>> ember.amp.is_autocast_available("cpu"), ember.amp.is_autocast_available("cuda")
    (True, False)
    """
    return device_type == "cpu"


def _unsupported(device_type: str) -> RuntimeError:
    return RuntimeError(
        f"ember.autocast: device_type {device_type!r} is not supported: ember computes on the "
        "CPU and has autocast for 'cpu' only (its lazy and meta devices have none); use "
        "ember.autocast('cpu', dtype=ember.bfloat16) (or dtype=ember.float16)"
    )


def _check_device(device_type: str) -> None:
    if device_type not in ("cpu", "cuda"):
        raise _unsupported(device_type)


def check_device_type(device_type: Any) -> None:
    """``device_type`` (of ``autocast``, ``custom_fwd``, ...) must be a string."""
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")


def _device_of(device_type: str | None) -> str:
    if device_type is None:
        return "cuda"  # PyTorch's default for the deprecated no-argument forms
    check_device_type(device_type)
    return device_type


def is_autocast_enabled(device_type: str | None = None) -> bool:
    """Whether autocast is enabled for ``device_type`` in this thread (without an argument:
    for "cuda", as PyTorch's, which is never on here).

    >>> ember.is_autocast_enabled("cpu")
    False
    """
    device_type = _device_of(device_type)
    if device_type == "cpu":
        return _state.cpu_enabled()
    _check_device(device_type)
    return False


def set_autocast_enabled(device_type: str | bool, enabled: bool | None = None) -> None:
    """Enable or disable autocast for ``device_type`` in this thread
    (``set_autocast_enabled("cpu", True)``; the one-argument form is PyTorch's legacy one,
    for "cuda")."""
    if enabled is None:
        device_type, enabled = "cuda", bool(device_type)
    device_type = _device_of(device_type)  # type: ignore[arg-type]
    if device_type == "cpu":
        _state.set_cpu_enabled(bool(enabled))
        return
    _check_device(device_type)
    if enabled:
        raise _unsupported(device_type)


def get_autocast_dtype(device_type: str) -> Any:
    """The lower-precision dtype of ``device_type``'s autocast regions in this thread.

    >>> ember.get_autocast_dtype("cpu")
    ember.bfloat16
    """
    device_type = _device_of(device_type)
    if device_type == "cuda":
        return dtypes.float16
    if device_type != "cpu":
        raise _unsupported(device_type)
    return _state.local.dtype["cpu"]


def set_autocast_dtype(device_type: str, dtype: Any) -> None:
    """Set the lower-precision dtype of ``device_type``'s autocast in this thread."""
    if _device_of(device_type) != "cpu":
        raise _unsupported(device_type)
    _state.local.dtype["cpu"] = dtype


def _deprecated(old: str, new: str) -> None:
    """PyTorch's DeprecationWarning for the CPU-only spellings: ``torch.<old>`` is deprecated,
    use ``torch.<new>`` (attributed to the deprecated function's caller)."""
    warnings.warn(
        f"torch.{old} is deprecated. Please use torch.{new} instead.",
        DeprecationWarning,
        stacklevel=3,
    )


def is_autocast_cpu_enabled() -> bool:
    """Deprecated: ``is_autocast_enabled("cpu")``."""
    _deprecated("is_autocast_cpu_enabled()", "is_autocast_enabled('cpu')")
    return _state.cpu_enabled()


def set_autocast_cpu_enabled(enabled: bool) -> None:
    """Deprecated: ``set_autocast_enabled("cpu", enabled)``."""
    _deprecated("set_autocast_cpu_enabled(enabled)", "set_autocast_enabled('cpu', enabled)")
    _state.set_cpu_enabled(bool(enabled))


def get_autocast_cpu_dtype() -> Any:
    """Deprecated: ``get_autocast_dtype("cpu")``."""
    _deprecated("get_autocast_cpu_dtype()", "get_autocast_dtype('cpu')")
    return _state.local.dtype["cpu"]


def set_autocast_cpu_dtype(dtype: Any) -> None:
    """Deprecated: ``set_autocast_dtype("cpu", dtype)``."""
    _deprecated("set_autocast_cpu_dtype(dtype)", "set_autocast_dtype('cpu', dtype)")
    _state.local.dtype["cpu"] = dtype


def is_autocast_cache_enabled() -> bool:
    """Whether autocast regions cache the casts of parameters (NOTE [autocast cast cache])."""
    return _state.local.cache_enabled


def set_autocast_cache_enabled(enabled: bool) -> None:
    _state.local.cache_enabled = bool(enabled)


def clear_autocast_cache() -> None:
    """Drop the cached casts (the outermost region does on exit)."""
    _state.local.cache.clear()


def autocast_increment_nesting() -> int:
    loc = _state.local
    loc.nesting += 1
    return loc.nesting


def autocast_decrement_nesting() -> int:
    loc = _state.local
    loc.nesting -= 1
    return loc.nesting


_SUPPORTED_CPU = ("bfloat16", "float16")


class autocast:  # noqa: N801  (PyTorch's name)
    """A region in which ops run in mixed precision: ``with ember.autocast("cpu"):`` or
    ``@ember.autocast("cpu")`` over a function.

    >>> lin = ember.nn.Linear(4, 3)
    >>> with ember.autocast("cpu", dtype=ember.bfloat16):
    ...     y = lin(ember.ones(2, 4))
    ...     with ember.autocast("cpu", enabled=False):
    ...         z = lin(ember.ones(2, 4))
    >>> y.dtype, z.dtype
    (ember.bfloat16, ember.float32)

    ``dtype`` defaults to ``ember.get_autocast_dtype(device_type)`` (bfloat16 on "cpu");
    ``cache_enabled`` (default: ``ember.is_autocast_cache_enabled()``) reuses a
    parameter's cast within the outermost region. "cuda" is accepted with PyTorch's warning
    and stays disabled (as on PyTorch without CUDA); other devices raise.
    """

    def __init__(
        self,
        device_type: str,
        dtype: Any = None,
        enabled: bool = True,
        cache_enabled: bool | None = None,
    ) -> None:
        check_device_type(device_type)
        _check_device(device_type)
        self.device = device_type
        self.fast_dtype = get_autocast_dtype(device_type) if dtype is None else dtype
        self._enabled = bool(enabled)
        self._cache_enabled = (
            is_autocast_cache_enabled() if cache_enabled is None else bool(cache_enabled)
        )
        if device_type == "cuda":
            if self._enabled:
                warnings.warn(
                    "CUDA is not available (ember has no CUDA backend). Disabling autocast.",
                    UserWarning,
                    stacklevel=2,
                )
            self._enabled = False
            return
        if self.fast_dtype is None:
            raise RuntimeError(dtypes.BFLOAT16_MISSING)
        if self._enabled and getattr(self.fast_dtype, "name", None) not in _SUPPORTED_CPU:
            warnings.warn(
                "In CPU autocast, but the target dtype is not supported. Disabling autocast.\n"
                "CPU Autocast only supports dtypes of ember.bfloat16, ember.float16 currently.",
                UserWarning,
                stacklevel=2,
            )
            self._enabled = False

    def __enter__(self) -> autocast:
        if self.device == "cuda":
            return self
        loc = _state.local
        self.prev_cache_enabled = loc.cache_enabled
        self.prev_fastdtype = loc.dtype["cpu"]
        self.prev = _state.set_cpu_enabled(self._enabled)
        loc.dtype["cpu"] = self.fast_dtype
        loc.cache_enabled = self._cache_enabled
        autocast_increment_nesting()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.device == "cuda":
            return
        if autocast_decrement_nesting() == 0:
            clear_autocast_cache()
        loc = _state.local
        _state.set_cpu_enabled(self.prev)
        loc.dtype["cpu"] = self.prev_fastdtype
        loc.cache_enabled = self.prev_cache_enabled

    def __call__(self, func: F) -> F:
        @functools.wraps(func)
        def decorate_autocast(*args: Any, **kwargs: Any) -> Any:
            with self:
                return func(*args, **kwargs)

        decorate_autocast.__script_unsupported = (  # type: ignore[attr-defined]
            "@autocast() decorator is not supported in script mode"
        )
        return decorate_autocast  # type: ignore[return-value]
