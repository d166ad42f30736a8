"""``ShapeProp``: record each node's result metadata, as ``torch.fx.passes.shape_prop``.

Running the graph fills ``node.meta['tensor_meta']`` (a ``TensorMetadata``: shape, dtype,
strides, ...) and ``node.meta['val']`` (a meta tensor, or a fake one under a
``FakeTensorMode``, with the result's metadata and no data). Inputs may be real tensors,
meta tensors (``device="meta"``: every op runs its Meta rule, nothing is computed) or, with
``fake_mode``, anything the mode turns into fake tensors.

>>> from ember.fx.passes.shape_prop import ShapeProp
>>> g = ember.fx.Graph(); x = g.placeholder("x")
>>> _ = g.output(g.call_function(ember.ops.aten.sum.dim_IntList, (x, [0]), name="s"))
>>> gm = ember.fx.GraphModule({}, g)
>>> _ = ShapeProp(gm).propagate(ember.empty(3, 4, device="meta"))
>>> gm.graph.find_nodes(op="call_function")[0].meta["tensor_meta"].shape
ember.Size([4])
"""

from __future__ import annotations

from typing import Any, NamedTuple

from ember._memory_format import channels_last, channels_last_3d, contiguous_format
from ember._tensor import Tensor
from ember.dtypes import dtype
from ember.fx.interpreter import Interpreter
from ember.fx.node import Node, map_aggregate
from ember.ops.registry import ops

__all__ = ["ShapeProp", "TensorMetadata", "_extract_tensor_metadata"]


class TensorMetadata(NamedTuple):
    """What ``ShapeProp`` records of a tensor result."""

    shape: Any
    dtype: dtype
    requires_grad: bool
    stride: tuple[int, ...]
    memory_format: Any
    is_quantized: bool
    qparams: dict[str, Any]


def extract_tensor_metadata(t: Tensor, include_contiguity: bool = True) -> TensorMetadata:
    """``t``'s ``TensorMetadata`` (``torch.fx.passes.shape_prop._extract_tensor_metadata``):
    its memory format is the first of contiguous, channels-last and channels-last-3d that it
    is laid out as (None when none is, or without ``include_contiguity``).

    >>> from ember.fx.passes.shape_prop import _extract_tensor_metadata
    >>> m = _extract_tensor_metadata(ember.ones(2, 3).t())
    >>> m.shape, m.stride, m.memory_format
    (ember.Size([3, 2]), (1, 3), None)
    """
    fmt = None
    if include_contiguity:
        for candidate in (contiguous_format, channels_last, channels_last_3d):
            if t.dim() == {channels_last: 4, channels_last_3d: 5}.get(candidate, t.dim()):
                if t.is_contiguous(memory_format=candidate):
                    fmt = candidate
                    break
    return TensorMetadata(t.shape, t.dtype, t.requires_grad, t.stride(), fmt, False, {})


_extract_tensor_metadata = extract_tensor_metadata


def _as_meta(t: Tensor) -> Tensor:
    """A tensor with ``t``'s metadata and no data (``t`` itself if it has none)."""
    if t.device.type == "meta" or not hasattr(t._edata, "ctypes"):
        return t

    return ops.aten.empty_strided.default(
        list(t.shape), list(t.stride()), dtype=t.dtype, device="meta"
    )


class ShapeProp(Interpreter):
    """Runs a ``GraphModule`` and records every node's result metadata (module docstring)."""

    def __init__(self, gm: Any, fake_mode: Any = None) -> None:
        super().__init__(gm)
        self.fake_mode = fake_mode

    def run_node(self, n: Node) -> Any:
        if self.fake_mode is not None:
            with self.fake_mode:
                result = super().run_node(n)
        else:
            result = super().run_node(n)
        found = False

        def meta(x: Any) -> Any:
            nonlocal found
            if isinstance(x, Tensor):
                found = True
                return extract_tensor_metadata(x)
            return x

        tensor_meta = map_aggregate(result, meta)
        if found:
            n.meta["tensor_meta"] = tensor_meta
            n.meta["val"] = map_aggregate(
                result, lambda x: _as_meta(x) if isinstance(x, Tensor) else x
            )
        n.meta["type"] = type(result)
        return result

    def propagate(self, *args: Any) -> Any:
        """Run the graph on ``args`` (made fake first when there is a ``fake_mode``)."""
        if self.fake_mode is not None:
            args = tuple(
                self.fake_mode.from_tensor(a) if isinstance(a, Tensor) else a for a in args
            )
        return self.run(*args)
