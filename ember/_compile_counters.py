"""``ember.compile``'s counters (``torch._dynamo.utils.counters``): below both
``ember._compile`` and ``ember.compiler``, so either can name them.

>>> from ember._compile_counters import counters, reset
>>> counters["stats"]["unique_graphs"] >= 0
True
"""

from __future__ import annotations

from collections import Counter, defaultdict

__all__ = ["counters", "reset"]

#: ``counters["graph_break"][reason]``, ``counters["stats"]["unique_graphs"]``, as
#: ``torch._dynamo.utils.counters``
counters: defaultdict[str, Counter[str]] = defaultdict(Counter)


def reset() -> None:
    """Forget the counters (compiled functions keep their own caches), as far as
    ``torch.compiler.reset`` applies: ember keeps no global cache of compiled code.

    >>> ember.compiler.reset()
    """
    counters.clear()
