"""Devices: ``cpu`` (NumPy arrays) and ``meta`` (shape and dtype only, no data).

# NOTE [unavailable devices]
``cuda`` is a device type ember names but has no backend for, as PyTorch's CPU-only build:
``ember.device("cuda")`` constructs, and comparing or printing it works, but making or
moving a tensor there raises what that build raises (``AssertionError: Torch not compiled
with CUDA enabled``). ``check_backend`` is the one place that decides it; the dispatcher's
device-to-key table and ``_to_copy``'s options call it. A bare integer device means "the
current accelerator", which a CPU-only build does not have (``RuntimeError``).
"""

from __future__ import annotations

from typing import Any

__all__ = ["device"]

_KNOWN = ("cpu", "meta", "lazy", "cuda")
#: device types that are known but have no backend: what using one raises
_UNAVAILABLE = {"cuda": "Torch not compiled with CUDA enabled"}
_NO_ACCELERATOR = "Cannot access accelerator device when none is available."


class device:
    """Where a tensor lives, e.g. ``ember.device("cpu")`` or ``ember.device("meta")``.

    >>> ember.device("cpu")
    device(type='cpu')
    """

    __slots__ = ("type", "index")
    type: str  # set once in __new__; devices are immutable and cached
    index: int | None
    _cache: dict[tuple[str, int | None], device] = {}

    def __new__(cls, type: Any, index: int | None = None) -> device:  # noqa: A002
        if isinstance(type, device):
            return type
        if isinstance(type, int) and not isinstance(type, bool):
            raise RuntimeError(_NO_ACCELERATOR)
        if not isinstance(type, str):
            raise TypeError(f"device(): expected a string like 'cpu' or 'meta', got {type!r}")
        if ":" in type:
            type, _, idx = type.partition(":")  # noqa: A001 - PyTorch's parameter name
            index = int(idx)
        if type not in _KNOWN:
            raise RuntimeError(
                f"Expected one of {', '.join(_KNOWN)} device type at start of device string: {type}"
            )
        key = (type, index)
        cached = cls._cache.get(key)
        if cached is None:
            cached = object.__new__(cls)
            object.__setattr__(cached, "type", type)
            object.__setattr__(cached, "index", index)
            cls._cache[key] = cached
        return cached

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("ember.device is immutable")

    def __eq__(self, other: object) -> bool:
        if isinstance(other, str):
            try:
                other = device(other)
            except (RuntimeError, ValueError):
                return False
        return self is other

    def __hash__(self) -> int:
        return hash((self.type, self.index))

    def __repr__(self) -> str:
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __reduce__(self) -> tuple[Any, ...]:
        return (device, (self.type, self.index))


CPU = device("cpu")
META = device("meta")


def as_device(d: Any) -> device:
    """Normalise ``None``/str/device to a device (``None`` means cpu)."""
    if d is None:
        return CPU
    if type(d) is device:
        return d
    return device(d)


def check_backend(type: str) -> None:  # noqa: A002 - PyTorch's word for a device kind
    """Raise what PyTorch's CPU-only build raises when a tensor would live on a device of
    this type (NOTE [unavailable devices]); return for a type with a backend.

    >>> from ember.device import check_backend
    >>> check_backend("cpu")
    """
    message = _UNAVAILABLE.get(type)
    if message is not None:
        raise AssertionError(message)


class DeviceBits(dict[str, int]):
    """Device type -> dispatch key bit; a type with no bit raises as ``check_backend`` (or
    ``device``'s parser, for a string that names no device) does, never ``KeyError``."""

    def __missing__(self, name: str) -> int:
        device(int(name) if name.isdigit() else name)  # unknown names raise here
        check_backend(name)
        raise KeyError(name)
