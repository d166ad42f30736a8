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

Every step is an ember op, so with ``create_graph=True`` the backward records its own graph
and can be differentiated again: the copies are in-place ops on fresh tensors (recorded as
``CopyBackwards``), the region is an ``as_strided`` view (recorded), and the write into the
region is an in-place op on a view, so it gets a CopySlices node of its own. Only one thing
changes when recording: the formula's graph holds the first copy (``as_strided`` saves its
input, with its version), so the write goes into a second copy instead of the first.
Second derivatives also flow through what the formula reads. The copy of ``v``'s old value
(``g * self`` for ``mul_``) gets the history of ``v``'s region of the base *before* the write
(``as_strided`` of the old base edge), not ``v``'s own old history, whose view nodes saved
the base at its old version. The op's result is ``v`` itself: its history is the fresh
``as_strided`` one, which ``record`` returns so a saved result can be relinked to it.

A real view of a complex base (``z.real``, ``z.imag``: ``select`` of ``view_as_real``, NOTE
[complex views] in ``ember/ops/native/views.py``) counts its strides and offset in real
elements, two per complex one. Its region is then located in ``view_as_real`` of the
base-shaped gradient, whose units are the view's, and written through that view, so the
complex gradient holds the result without being turned back.

# NOTE [views of a rewritten base]
Other views of ``b`` taken before the write (or before an in-place op on ``b`` itself) hold
a history of ``b`` as it was: ``v1 = b[0]; v2 = b[0]; v2.mul_(2)`` must give ``v1`` the
multiplication too. PyTorch regenerates a view's ``grad_fn`` lazily, when it is read after
the shared version counter moved on. ember does it eagerly, so reading ``grad_fn`` stays a
plain attribute read on the hot path: a base whose views may need it (a non-leaf that
requires grad: in-place writes through views of a leaf are refused) keeps them weakly
(``track``), and when an in-place op rewrites the base's history, each live view gets the
``as_strided`` history of the new base, as the written view does (``regenerate``).
"""

from __future__ import annotations

import weakref
from typing import Any

from ember._tensor import Tensor
from ember.autograd import view_rules
from ember.autograd.graph import Edge, Node, make_node
from ember.dispatch import marks, state
from ember.ops.registry import ops

_EMPTY_STRIDED = ops.aten.empty_strided.default
_VIEW_AS_REAL = ops.aten.view_as_real.default

#: the base's size, strides and dtype
Geometry = tuple[tuple[int, ...], tuple[int, ...], Any]
#: the view's size, strides and storage offset, relative to the base's, and whether they
#: count real elements of a complex base (``z.real``, ``z.imag``)
Region = tuple[tuple[int, ...], tuple[int, ...], int, bool]


def _like_base(g: Tensor, base: Geometry) -> Tensor:
    """A fresh tensor laid out as the base, holding ``g`` (``as_strided`` reads its strides).
    An in-place copy into a new tensor, not a view: recorded when ``g`` requires grad."""
    shape, stride, dtype = base
    out = _EMPTY_STRIDED(list(shape), list(stride), dtype=dtype, device=g.device)
    out.copy_(g)
    return out


def _in(full: Tensor, region: Region) -> Tensor:
    """``region`` of a base-shaped ``full``: an ``as_strided`` view, of ``view_as_real(full)``
    for a real view of a complex base (NOTE [in-place on a view])."""
    size, stride, offset, parts = region
    return (_VIEW_AS_REAL(full) if parts else full).as_strided(size, stride, offset)


def _geometry(base: Tensor) -> Geometry:
    return (tuple(base.shape), tuple(base.stride()), base.dtype)


def _region(base: Tensor, view: Tensor) -> Region:
    parts = base.dtype.is_complex and not view.dtype.is_complex  # counts real elements
    return (
        tuple(view.shape),
        tuple(view.stride()),
        view.storage_offset() - base.storage_offset() * (2 if parts else 1),
        parts,
    )


def track(view: Tensor, src: Any = None, multi: bool = False) -> None:
    """Remember ``view`` (taken of ``src``; ``multi``: one of several views an op returned)
    in its base, if a write could rewrite the base's history (NOTE [views of a rewritten
    base]), and how it was made (NOTE [view creation meta] in ``view_rules.py``)."""
    view_rules.inherit(view, src)
    if multi:
        view_rules.mark(view, view_rules.MULTI_OUTPUT_NODE)
    base = view._base
    if base is not None and base.grad_fn is not None:
        views = base.__dict__.get("_views")
        if views is None:  # keyed by id: a WeakSet compares a view added again with ``==``
            views = base.__dict__["_views"] = weakref.WeakValueDictionary()
        views[id(view)] = view


def regenerate(base: Tensor, written: Tensor | None) -> None:
    """Give every live tracked view of ``base`` but ``written`` the ``as_strided`` history
    of the base's new one (NOTE [views of a rewritten base])."""
    views = base.__dict__.get("_views")
    if not views:
        return
    fn = base.grad_fn
    geometry = _geometry(base)
    for v in list(views.values()):
        if v is written or not v.requires_grad or view_rules.invalidate(v):
            continue
        _set_history(v, _region_of((fn, base._output_nr), geometry, _region(base, v)))


def record(
    base: Tensor,
    view: Tensor,
    op_node: Node,
    base_edge: Edge,
) -> Node:
    """Give ``base`` a CopySlices grad_fn for the in-place op ``op_node`` ran on ``view``;
    returns the view's new grad_fn (where a saved result of the op must be relinked to)."""
    geometry = _geometry(base)
    region = _region(base, view)

    def backward(node: Node, grads: Any) -> Any:
        full = _like_base(grads[0], geometry)
        if state.local.grad_enabled:  # create_graph: NOTE [in-place on a view]
            op_grads = op_node.apply([_in(full, region)])
            full = _like_base(full, geometry)
        else:  # the formula may hand its input on (copy_ gives it to src): write elsewhere
            op_grads = op_node.apply([_in(full, region).clone()])
        g_view = op_grads[0]
        if g_view is None:
            _in(full, region).zero_()
        else:
            _in(full, region).copy_(g_view)  # casts, if the formula widened the dtype
        return (full, *op_grads[1:])

    node = make_node(
        "CopySlices",
        backward,
        (base_edge, *op_node.next_functions[1:]),
        (None, *op_node.input_meta[1:]),
    )
    node.saved = op_node.saved  # their versions are checked when op_node's formula runs
    base.grad_fn = node
    marks.mark_autograd(base)
    base._output_nr = 0
    view_node = _region_of((node, 0), geometry, region)
    _set_history(view, view_node)
    regenerate(base, view)
    old_self = op_node.ctx[1][0]  # the kernel's ctx: (vjp, formula args, kwargs)
    if isinstance(old_self, Tensor) and old_self is not view and base_edge[0] is not None:
        # the copy of the view's old value the formula reads: the region of the old base
        _set_history(old_self, _region_of(base_edge, geometry, region))
    return view_node


def _region_of(base: Edge, geometry: Geometry, region: Region) -> Node:
    """The node of ``region`` of a base whose gradient goes to ``base``: an ``as_strided``
    of it (AsStridedBackward0)."""

    def backward(node: Node, grads: Any) -> Any:
        g = grads[0]
        shape, stride, dtype = geometry
        full = _EMPTY_STRIDED(list(shape), list(stride), dtype=dtype, device=g.device).zero_()
        _in(full, region).copy_(g)  # recorded as a CopySlices under create_graph
        return (full,)

    return make_node("AsStridedBackward0", backward, (base,))


def _set_history(t: Tensor, node: Node) -> None:
    t.grad_fn = node
    marks.mark_autograd(t)
    t._output_nr = 0
