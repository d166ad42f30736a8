"""The compiler behind the lazy device: an ``ember.fx`` graph, named passes, code in tiers.

``pipeline.py`` is the table of contents: after ``ember/lazy/lowering.py`` (the lazy graph
as an fx graph over ndarrays), ``dce``, ``cse``, ``constant_folding``, ``fusion`` (numba tier),
``inplace`` and ``buffers``, each run by ``pass_manager.run_pass``; then code from
``interpreter_tier``, ``numpy_tier`` (with ``numpy_ops``, the ops written as direct NumPy)
or ``numba_tier``. ``effects`` says what a node writes and which storage it may share;
``array_ops`` are the storage operations a lowered graph calls; ``metrics`` and ``layout``
serve the lazy device too. The compiler does not import ``ember/lazy/``. See
``docs/lazy.md``.
"""

from __future__ import annotations

from typing import Any

from ember._compile_counters import reset
from ember.fx.experimental.proxy_tensor import TRACING

__all__ = ["allow_in_graph", "disable", "is_compiling", "reset"]


def is_compiling() -> bool:
    """Whether the code runs inside a trace of ``ember.compile`` (or ``make_fx``), as
    PyTorch's ``torch.compiler.is_compiling``: a model can branch on it.

    >>> ember.compiler.is_compiling()
    False
    """
    return TRACING[0] > 0


def allow_in_graph(fn: Any) -> Any:
    """PyTorch's ``torch.compiler.allow_in_graph``: ember.compile traces through every
    Python function (with ``make_fx``, below the Python level), so ``fn`` comes back
    unchanged and its ops are in the graph.

    >>> ember.compiler.allow_in_graph(abs) is abs
    True
    """
    return fn


def disable(fn: Any = None, recursive: bool = True) -> Any:
    """PyTorch's ``torch.compiler.disable``: ember.compile traces the ops ``fn`` runs either
    way (through ``make_fx``), so ``fn`` comes back unchanged (also as a decorator factory).

    >>> ember.compiler.disable(abs) is abs
    True
    """
    if fn is None:
        return lambda f: f
    return fn
