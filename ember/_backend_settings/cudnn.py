"""``ember.backends.cudnn``: cuDNN's switches, as on PyTorch's CPU-only build (no cuDNN).

The flags can be read and set, as scripts do before training (``benchmark = True`` for
speed, ``deterministic = True`` for repeatable runs); with no cuDNN they change nothing.

>>> ember.backends.cudnn.is_available(), ember.backends.cudnn.enabled
(False, True)
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

__all__ = ["allow_tf32", "benchmark", "deterministic", "enabled", "flags", "is_available",
           "version"]  # fmt: skip

enabled = True
benchmark = False
deterministic = False
allow_tf32 = True


def is_available() -> bool:
    """Whether cuDNN can be used: never, in ember.

    >>> ember.backends.cudnn.is_available()
    False
    """
    return False


def version() -> int | None:
    """cuDNN's version: ``None``, as there is none.

    >>> ember.backends.cudnn.version() is None
    True
    """
    return None


@contextlib.contextmanager
def flags(
    enabled: bool = False,
    benchmark: bool = False,
    deterministic: bool = False,
    allow_tf32: bool = True,
) -> Iterator[None]:
    """Set the four flags for the block, then restore them.

    >>> with ember.backends.cudnn.flags(enabled=True, deterministic=True):
    ...     ember.backends.cudnn.deterministic
    True
    """
    module = globals()
    names = ("enabled", "benchmark", "deterministic", "allow_tf32")
    saved = {n: module[n] for n in names}
    module.update(zip(names, (enabled, benchmark, deterministic, allow_tf32), strict=True))
    try:
        yield
    finally:
        module.update(saved)
