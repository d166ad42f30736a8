"""``custom_fwd`` and ``custom_bwd``: autocast for the ``forward`` and ``backward`` of an
``autograd.Function``.

``custom_fwd`` records whether the forward ran under autocast (and in which dtype), or, with
``cast_inputs``, runs it with autocast off on inputs cast to that dtype; ``custom_bwd`` runs
the backward in the same autocast state as the forward, as PyTorch's.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import numpy as np

from ember import dtypes
from ember._tensor import Tensor
from ember.amp.autocast_mode import (
    autocast,
    check_device_type,
    get_autocast_dtype,
    is_autocast_enabled,
)

__all__ = ["custom_fwd", "custom_bwd"]


def _cast(value: Any, device_type: str, dtype: Any) -> Any:
    """``value`` with its floating tensors on ``device_type`` (not float64) cast to
    ``dtype``, also inside dicts, lists and tuples."""
    if isinstance(value, Tensor):
        keep = (
            not value.is_floating_point()
            or value.device.type != device_type
            or value.dtype is dtypes.float64
        )
        return value if keep else value.to(dtype)
    if isinstance(value, (str, bytes, np.ndarray)):
        return value
    if isinstance(value, Mapping):
        return {
            _cast(k, device_type, dtype): _cast(v, device_type, dtype) for k, v in value.items()
        }
    if isinstance(value, Iterable):
        return type(value)(_cast(v, device_type, dtype) for v in value)  # type: ignore[call-arg]
    return value


def custom_fwd(
    fwd: Callable[..., Any] | None = None, *, device_type: str, cast_inputs: Any = None
) -> Any:
    """Decorate a custom Function's ``forward`` (``@custom_fwd(device_type="cpu")``)."""
    check_device_type(device_type)
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def decorate_fwd(*args: Any, **kwargs: Any) -> Any:
        ctx = args[0]
        ctx._dtype = get_autocast_dtype(device_type)
        if cast_inputs is None:
            ctx._fwd_used_autocast = is_autocast_enabled(device_type)
            return fwd(*args, **kwargs)
        on = is_autocast_enabled(device_type)
        ctx._fwd_used_autocast = False
        if not on:
            return fwd(*args, **kwargs)
        with autocast(device_type=device_type, enabled=False):
            return fwd(
                *_cast(args, device_type, cast_inputs), **_cast(kwargs, device_type, cast_inputs)
            )

    return decorate_fwd


def custom_bwd(bwd: Callable[..., Any] | None = None, *, device_type: str) -> Any:
    """Decorate a custom Function's ``backward`` (``@custom_bwd(device_type="cpu")``): it runs
    with the autocast state its forward ran with."""
    check_device_type(device_type)
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def decorate_bwd(*args: Any, **kwargs: Any) -> Any:
        ctx = args[0]
        with autocast(device_type=device_type, enabled=ctx._fwd_used_autocast, dtype=ctx._dtype):
            return bwd(*args, **kwargs)

    return decorate_bwd
