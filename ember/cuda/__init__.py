"""``ember.cuda``: what ``torch.cuda`` answers on PyTorch's CPU-only build.

ember has no CUDA backend. Scripts written for a GPU ask ``is_available()`` and pick the cpu,
seed CUDA alongside the cpu, or read memory counters; all of that works here and answers as
that build does. Anything that needs a device raises its ``AssertionError`` (NOTE
[unavailable devices] in ``ember/device.py``).

>>> ember.cuda.is_available(), ember.cuda.device_count()
(False, 0)
"""

from __future__ import annotations

from typing import Any

from ember._tensor import Tensor
from ember.device import check_backend

__all__ = [
    "current_device", "current_stream", "device_count", "empty_cache", "get_device_capability",
    "get_device_name", "get_device_properties", "get_rng_state", "get_rng_state_all", "init",
    "initial_seed", "is_available", "is_bf16_supported", "is_initialized", "manual_seed",
    "manual_seed_all", "max_memory_allocated", "max_memory_reserved", "memory_allocated",
    "memory_reserved", "seed", "seed_all", "set_rng_state", "synchronize",
]  # fmt: skip


def _unavailable() -> Any:
    check_backend("cuda")  # raises


def is_available() -> bool:
    """Whether a CUDA device can be used: never, in ember.

    >>> ember.cuda.is_available()
    False
    """
    return False


def device_count() -> int:
    """How many CUDA devices there are: none.

    >>> ember.cuda.device_count()
    0
    """
    return 0


def is_initialized() -> bool:
    """Whether CUDA state has been initialised: never.

    >>> ember.cuda.is_initialized()
    False
    """
    return False


def manual_seed(seed: int) -> None:
    """Seed the current CUDA device's generator: queued until CUDA starts, so a no-op here.

    >>> ember.cuda.manual_seed(0)
    """


def manual_seed_all(seed: int) -> None:
    """Seed every CUDA device's generator: queued until CUDA starts, so a no-op here.

    >>> ember.cuda.manual_seed_all(0)
    """


def seed() -> None:
    """Seed the current CUDA generator randomly: queued until CUDA starts, so a no-op here.

    >>> ember.cuda.seed()
    """


def seed_all() -> None:
    """Seed every CUDA generator randomly: queued until CUDA starts, so a no-op here.

    >>> ember.cuda.seed_all()
    """


def set_rng_state(new_state: Tensor, device: Any = "cuda") -> None:
    """Set a CUDA generator's state: queued until CUDA starts, so a no-op here.

    >>> ember.cuda.set_rng_state(ember.zeros(1, dtype=ember.uint8))
    """


def get_rng_state_all() -> list[Tensor]:
    """Every CUDA generator's state: an empty list, as there are no devices.

    >>> ember.cuda.get_rng_state_all()
    []
    """
    return []


def empty_cache() -> None:
    """Release cached device memory: there is none.

    >>> ember.cuda.empty_cache()
    """


def memory_allocated(device: Any = None) -> int:
    """Bytes of device memory held by tensors: 0.

    >>> ember.cuda.memory_allocated()
    0
    """
    return 0


def max_memory_allocated(device: Any = None) -> int:
    """Peak bytes of device memory held by tensors: 0.

    >>> ember.cuda.max_memory_allocated()
    0
    """
    return 0


def memory_reserved(device: Any = None) -> int:
    """Bytes of device memory held by the caching allocator: 0.

    >>> ember.cuda.memory_reserved()
    0
    """
    return 0


def max_memory_reserved(device: Any = None) -> int:
    """Peak bytes of device memory held by the caching allocator: 0.

    >>> ember.cuda.max_memory_reserved()
    0
    """
    return 0


def is_bf16_supported(including_emulation: bool = True) -> bool:
    """Whether the current CUDA device supports bfloat16: there is no device.

    >>> ember.cuda.is_bf16_supported()
    False
    """
    return False


def init() -> None:
    """Initialise CUDA: raises ``AssertionError``, as PyTorch's CPU-only build does.

    >>> ember.cuda.init()
    Traceback (most recent call last):
      ...
    AssertionError: Torch not compiled with CUDA enabled
    """
    _unavailable()


def synchronize(device: Any = None) -> None:
    """Wait for a CUDA device's work: raises ``AssertionError`` (no device).

    >>> ember.cuda.synchronize()
    Traceback (most recent call last):
      ...
    AssertionError: Torch not compiled with CUDA enabled
    """
    _unavailable()


def current_device() -> int:
    """The current CUDA device's index: raises ``AssertionError`` (no device).

    >>> ember.cuda.current_device()
    Traceback (most recent call last):
      ...
    AssertionError: Torch not compiled with CUDA enabled
    """
    return _unavailable()  # type: ignore[no-any-return]


def current_stream(device: Any = None) -> Any:
    """The current CUDA stream: raises ``AssertionError`` (no device).

    >>> ember.cuda.current_stream()
    Traceback (most recent call last):
      ...
    AssertionError: Torch not compiled with CUDA enabled
    """
    return _unavailable()


def get_device_name(device: Any = None) -> str:
    """A CUDA device's name: raises ``AssertionError`` (no device).

    >>> ember.cuda.get_device_name()
    Traceback (most recent call last):
      ...
    AssertionError: Torch not compiled with CUDA enabled
    """
    return _unavailable()  # type: ignore[no-any-return]


def get_device_properties(device: Any = None) -> Any:
    """A CUDA device's properties: raises ``AssertionError`` (no device).

    >>> ember.cuda.get_device_properties()
    Traceback (most recent call last):
      ...
    AssertionError: Torch not compiled with CUDA enabled
    """
    return _unavailable()


def get_device_capability(device: Any = None) -> tuple[int, int]:
    """A CUDA device's compute capability: raises ``AssertionError`` (no device).

    >>> ember.cuda.get_device_capability()
    Traceback (most recent call last):
      ...
    AssertionError: Torch not compiled with CUDA enabled
    """
    return _unavailable()  # type: ignore[no-any-return]


def get_rng_state(device: Any = "cuda") -> Tensor:
    """A CUDA generator's state: raises ``AssertionError`` (no device).

    >>> ember.cuda.get_rng_state()
    Traceback (most recent call last):
      ...
    AssertionError: Torch not compiled with CUDA enabled
    """
    return _unavailable()  # type: ignore[no-any-return]


def initial_seed() -> int:
    """The current CUDA generator's seed: raises ``AssertionError`` (no device).

    >>> ember.cuda.initial_seed()
    Traceback (most recent call last):
      ...
    AssertionError: Torch not compiled with CUDA enabled
    """
    return _unavailable()  # type: ignore[no-any-return]


from ember.cuda import amp  # noqa: E402  (torch.cuda.amp: deprecated, disabled here)
