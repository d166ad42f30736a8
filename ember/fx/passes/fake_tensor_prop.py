"""``FakeTensorProp``: run a graph on fake tensors and record each node's fake value in
``node.meta["val"]``, as ``torch.fx.passes.fake_tensor_prop``; no data is computed.

>>> from ember.fx.passes.fake_tensor_prop import FakeTensorProp
>>> gm = ember.fx.symbolic_trace(lambda x: (x @ x.t()).sum(0))
>>> _ = FakeTensorProp(gm).propagate(ember.ones(3, 5))
>>> [tuple(n.meta["val"].shape) for n in gm.graph.nodes if n.op == "call_method"]
[(5, 3), (3,)]
"""

from __future__ import annotations

from typing import Any

from ember._subclasses.fake_tensor import FakeTensor, FakeTensorMode
from ember._tensor import Tensor
from ember.fx.interpreter import Interpreter
from ember.fx.node import Node, map_aggregate

__all__ = ["FakeTensorProp"]


class FakeTensorProp(Interpreter):
    """Runs ``module``'s graph under ``mode`` (a new ``FakeTensorMode`` by default)."""

    def __init__(self, module: Any, mode: FakeTensorMode | None = None) -> None:
        super().__init__(module)
        self._mode = mode if mode is not None else FakeTensorMode()

    def run_node(self, n: Node) -> Any:
        result = super().run_node(n)

        def val(obj: Any) -> Any:
            if isinstance(obj, FakeTensor):
                return obj
            if isinstance(obj, Tensor):
                return self._mode.from_tensor(obj)
            if isinstance(obj, (int, float, bool)):
                return obj
            return None

        meta = map_aggregate(result, val)
        if meta is not None:
            n.meta["val"] = meta
        return result

    def propagate(self, *args: Any) -> Any:
        """Run on ``args``, made fake first; returns the fake output."""
        fake = [self._mode.from_tensor(a) if isinstance(a, Tensor) else a for a in args]
        return self.propagate_dont_convert_inputs(*fake)

    def propagate_dont_convert_inputs(self, *args: Any) -> Any:
        """Run on ``args`` as given (already fake)."""
        with self._mode:
            return self.run(*args)
