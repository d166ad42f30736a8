"""``ember._dynamo.utils``: what code reads from ``torch._dynamo.utils``, the counters of
``ember.compile`` (``counters["graph_break"][reason]``,
``counters["stats"]["unique_graphs"]``).

>>> from ember._dynamo.utils import counters
>>> counters is ember._compile.counters
True
"""

from __future__ import annotations

from ember._compile_counters import counters

__all__ = ["counters"]
