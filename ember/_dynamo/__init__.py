"""``ember._dynamo``: what code imports from ``torch._dynamo``. ember has no bytecode
tracer (``ember.compile`` traces with ``make_fx``), so ``disable`` and ``allow_in_graph``
return their function, ``reset`` forgets ``ember.compile``'s counters (``utils.counters``),
and ``config`` holds the recompile limit.

>>> ember._dynamo.disable(abs) is abs, ember._dynamo.is_compiling()
(True, False)
"""

from __future__ import annotations

from typing import Any

from ember._compile import _disable_dynamo as disable
from ember._compile import reset as _reset_counters
from ember._dynamo import config, utils
from ember.compiler import allow_in_graph, is_compiling

__all__ = ["allow_in_graph", "config", "disable", "is_compiling", "reset", "utils"]


def reset() -> None:
    """Forget ``ember.compile``'s counters (its compiled functions keep their caches)."""
    _reset_counters()


def __getattr__(name: str) -> Any:
    raise AttributeError(
        f"module 'ember._dynamo' has no attribute {name!r}: ember has no bytecode tracer "
        "(ember.compile traces with make_fx)"
    )
