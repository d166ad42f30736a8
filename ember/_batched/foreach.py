"""The batching rule of the foreach ops (NOTE [foreach ops] in
``ember/ops/native/foreach.py``): the element op at each position of the lists, dispatched,
so each runs its own batching rule (a BatchedTensor in any list, at any position)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ember._batched.kernel import Rule, register_rule
from ember._batched.tensor import Level
from ember.backends.foreach import per_element_loop
from ember.ops.native.foreach import FOREACH
from ember.ops.registry import OpOverload


def _rule(loop: Callable[..., Any]) -> Rule:
    def foreach_rule(
        op: OpOverload, level: Level, args: tuple[Any, ...], kw: dict[str, Any]
    ) -> Any:
        return loop(*args, **kw)

    return foreach_rule


for _op, _spec in FOREACH.items():
    register_rule(_op, _rule(per_element_loop(_op, _spec)), logical=True)
