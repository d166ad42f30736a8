"""In-place ops on views: rewrite the *base's* history (PyTorch's CopySlices).

# NOTE [in-place on a view]
``v = b[0]; v.mul_(w)`` changes ``b``. After it, ``b``'s gradient must flow through the
multiplication for the elements ``v`` covers and straight through for the rest. So the base
gets a new ``grad_fn``, a CopySlices node, whose backward: lays the incoming gradient out
like ``b`` (``empty_strided`` + ``copy_``), takes the region ``v`` covers
(``as_strided`` with ``v``'s size, strides and offset relative to ``b``), runs the in-place
op's formula on that region's gradient, writes the result for ``v``'s old value back into the
region and hands the rest to the op's other inputs. The view itself gets a fresh ``grad_fn``
that is ``as_strided`` of the new base history, so later uses of ``v`` see the change too.
Other views of ``b`` taken before the write keep their old history, as they would on PyTorch
until regenerated: PyTorch regenerates them lazily; ember does not yet.
"""

from __future__ import annotations

from typing import Any

from ember._tensor import Tensor
from ember.autograd.graph import Edge, Node
from ember.dispatch.keys import AUTOGRAD_BIT


def _layout_like_base(g: Any, base_geom: tuple[Any, ...]) -> Any:
    import ember

    shape, stride, dtype = base_geom
    out = ember.empty_strided(shape, stride, dtype=dtype)
    out.copy_(g)
    return out


def record(
    base: Tensor,
    view: Tensor,
    op_node: Node,
    base_edge: Edge,
) -> None:
    """Give ``base`` a CopySlices grad_fn for the in-place op ``op_node`` ran on ``view``."""
    base_geom = (tuple(base.shape), base.stride(), base.dtype)
    region = (tuple(view.shape), view.stride(), view.storage_offset() - base.storage_offset())

    def backward(node: Node, grads: Any) -> Any:
        import ember

        if ember.is_grad_enabled():
            raise NotImplementedError(
                "double backward through an in-place op on a view (CopySlices) is not "
                "supported yet; compute the result out of place to differentiate twice"
            )
        full = _layout_like_base(grads[0], base_geom)
        part = full.as_strided(*region)
        op_grads = list(op_node.apply([part.clone()]))
        part.zero_()
        g_view = op_grads[0]
        if g_view is not None:
            meta = op_node.input_meta[0]
            if meta is not None and tuple(g_view.shape) != meta[0]:
                from ember.autograd.engine import _sum_to

                g_view = _sum_to(g_view, meta[0], meta[1])
            part.copy_(g_view)
        return (full, *op_grads[1:])

    node = Node(
        "CopySlices",
        backward,
        (base_edge, *op_node.next_functions[1:]),
        (None, *op_node.input_meta[1:]),
    )
    node.saved = op_node.saved  # their versions are checked when op_node's formula runs
    base.grad_fn = node
    base._keys |= AUTOGRAD_BIT
    base._output_nr = 0
    _regenerate_view(view, node, base_geom, region)


def _regenerate_view(
    view: Tensor, base_node: Node, base_geom: tuple[Any, ...], region: tuple[Any, ...]
) -> None:
    """``view``'s new history: ``as_strided`` of the base's (AsStridedBackward0)."""

    def backward(node: Node, grads: Any) -> Any:
        import ember

        shape, stride, dtype = base_geom
        full = ember.empty_strided(shape, stride, dtype=dtype).zero_()
        full.as_strided(*region).copy_(grads[0])
        return (full,)

    node = Node("AsStridedBackward0", backward, ((base_node, 0),), (None,))
    view.grad_fn = node
    view._keys |= AUTOGRAD_BIT
    view._output_nr = 0
