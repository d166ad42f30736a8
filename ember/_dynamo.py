"""``ember._dynamo``: what code imports from ``torch._dynamo``. ember has no bytecode
tracer (``ember.compile`` traces with ``make_fx``), so ``disable`` returns its function and
``reset`` forgets ``ember.compile``'s counters.

>>> ember._dynamo.disable(abs) is abs, ember._dynamo.is_compiling()
(True, False)
"""

from __future__ import annotations

from typing import Any

from ember._compile import _disable_dynamo as disable
from ember._compile import reset as _reset_counters
from ember.compiler import is_compiling

__all__ = ["disable", "is_compiling", "reset"]


def reset() -> None:
    """Forget ``ember.compile``'s counters (its compiled functions keep their caches)."""
    _reset_counters()


def __getattr__(name: str) -> Any:
    raise AttributeError(
        f"module 'ember._dynamo' has no attribute {name!r}: ember has no bytecode tracer "
        "(ember.compile traces with make_fx)"
    )
