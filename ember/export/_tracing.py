"""The one trace ``ember.export`` makes, for ``export`` and ``run_decompositions`` alike
(NOTE [export])."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ember.fx.experimental.proxy_tensor import _trace, _Tracker
from ember.fx.graph_module import GraphModule

__all__ = ["trace"]


def trace(
    fn: Callable[..., Any],
    inputs: Sequence[Any],
    names: list[str],
    pre_dispatch: bool,
    table: dict[Any, Callable[..., Any]] | None = None,
) -> tuple[GraphModule, Any]:
    """``fn(*inputs)`` traced on fake tensors (writes kept), placeholders named ``names``;
    at the pre-dispatch level, or below autograd with the decomposition ``table``."""
    tracker = _Tracker(dict(table or {}), False)
    gm, out, _ = _trace(fn, tuple(inputs), tracker, "fake", True, names, pre_dispatch)
    return gm, out
