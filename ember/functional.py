"""The public op functions (``ember.add``, ``ember.sum``, ...), generated from the registry
by ``ember._bind``; ``ember/__init__.py`` re-exports them."""

from __future__ import annotations

from ember._bind import bind_all

__all__ = bind_all(globals())
