"""``ember._dynamo.config``: the switches code sets on ``torch._dynamo.config``.
``cache_size_limit`` (and its newer name ``recompile_limit``) is ember.compile's
recompile limit, ``ember.aot.config.cache_size_limit``; ``suppress_errors`` is read by
nothing (ember.compile falls back on its own where PyTorch's would need it); other
names raise.

>>> ember._dynamo.config.cache_size_limit = 16
>>> ember.aot.config.cache_size_limit
16
>>> ember._dynamo.config.cache_size_limit = 8
"""

from __future__ import annotations

import sys
import types
from typing import Any

from ember.aot.aot_autograd import config as _aot

__all__ = ["suppress_errors"]  # and the two limits, read through the module's class

_LIMITS = ("cache_size_limit", "recompile_limit")
_NAMES = (*_LIMITS, "suppress_errors")
#: stored for code that sets it; nothing reads it
suppress_errors = False


class _Config(types.ModuleType):
    """The module, with the limits read from and written to AOTAutograd's config."""

    def __getattr__(self, name: str) -> Any:
        if name in _LIMITS:
            return _aot.cache_size_limit
        raise AttributeError(
            f"ember._dynamo.config has no {name!r}: ember has no bytecode tracer; it has "
            f"{', '.join(_NAMES)}"
        )

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _LIMITS:
            _aot.cache_size_limit = int(value)
            return
        if name not in _NAMES and not name.startswith("__"):
            raise AttributeError(
                f"ember._dynamo.config has no {name!r}: ember has no bytecode tracer; it has "
                f"{', '.join(_NAMES)}"
            )
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Config
