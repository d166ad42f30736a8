"""Which views may be written in place, or have their base written: PyTorch's ``CreationMeta``.

# NOTE [view creation meta]
An in-place write through a view, or into its base, rewrites the view's history (NOTE
[in-place on a view], NOTE [views of a rewritten base] in ``copy_slices.py``). For some views
that rewrite would give a wrong gradient, so PyTorch records how each view was made and
refuses them:

- ``IN_CUSTOM_FUNCTION``: an output of a custom ``autograd.Function`` that is a view (or an
  input returned as is, which ``apply`` turns into an alias). Rewriting its history would
  drop the Function's own backward.
- ``MULTI_OUTPUT_NODE``: one of the views ``unbind``/``split``/``split_with_sizes`` (and
  ``chunk``, which is ``split``) return together. Their node computes all of them at once.
- ``NO_GRAD_MODE``: a view taken under ``no_grad`` of a tensor that requires grad. Whether a
  later write in grad mode should be tracked is ambiguous.

A view of such a view inherits its kind. Writing the view itself in grad mode, with some
input requiring grad, raises at once ("... is being modified inplace", ``check``). Writing
its base or another view of it does not: PyTorch raises when the view's ``grad_fn`` is next
read. ember swaps the view's ``grad_fn`` for a node that raises the same error when backward
reaches it (``invalidate``), so the error comes at backward, not when the view is next used
in an op (``docs/autograd.md``, "Known limits"). The kind is stored only when it is not
``DEFAULT``, in the view's ``_creation_meta``.
"""

from __future__ import annotations

import re
from typing import Any

from ember._tensor import Tensor
from ember.autograd.graph import Node, make_node
from ember.dispatch import marks

DEFAULT = 0
IN_CUSTOM_FUNCTION = 1
MULTI_OUTPUT_NODE = 2
NO_GRAD_MODE = 3
INFERENCE_MODE = 4

_WHY = {
    IN_CUSTOM_FUNCTION: (
        " This view was created inside a custom Function (or because an input was returned "
        "as-is) and the autograd logic to handle view+inplace would override the custom "
        "backward associated with the custom Function, leading to incorrect gradients. This "
        "behavior is forbidden. You can fix this by cloning the output of the custom Function."
    ),
    MULTI_OUTPUT_NODE: (
        " This view is the output of a function that returns multiple views. Such functions "
        "do not allow the output views to be modified inplace. You should replace the inplace "
        "operation by an out-of-place one."
    ),
    NO_GRAD_MODE: (
        " Given that this use case is ambiguous and error-prone, it is forbidden. You can "
        "clarify your code by moving both the view and the inplace either both inside the "
        "no_grad block (if you don't want the inplace to be tracked) or both outside (if you "
        "want the inplace to be tracked)."
    ),
    INFERENCE_MODE: (
        " Given that this use case is ambiguous and error-prone, it is forbidden. You can "
        "clarify your code by moving both the view and the inplace either both inside the "
        "inference_mode block (if you don't want the inplace to be tracked) or both outside "
        "(if you want the inplace to be tracked)."
    ),
}


def creation_meta(t: Tensor) -> int:
    """How the view ``t`` was made (``DEFAULT`` for a base or an ordinary view)."""
    return t.__dict__.get("_creation_meta", DEFAULT)  # type: ignore[no-any-return]


def mark(view: Tensor, meta: int) -> None:
    """Record that ``view`` was made as ``meta`` says, unless it inherited a stronger kind."""
    old = view.__dict__.get("_creation_meta", DEFAULT)
    if old == INFERENCE_MODE or meta == DEFAULT:
        return
    view.__dict__["_creation_meta"] = meta


def inherit(view: Tensor, src: Any) -> None:
    """A view of ``src`` keeps ``src``'s kind when it is not ``DEFAULT`` (PyTorch's
    ``propagate_creation_meta``)."""
    if isinstance(src, Tensor):
        meta = src.__dict__.get("_creation_meta", DEFAULT)
        if meta != DEFAULT and view._base is not None:
            mark(view, meta)


def _name(node: Node) -> str:
    return re.sub(r"Backward\d*$", "", node.name())


def message(view: Tensor, meta: int, indirect: bool) -> str:
    """PyTorch's error for writing the view (``indirect``: its base or another view of it)."""
    what = "its base or another view of its base has been" if indirect else "is being"
    fn = view.grad_fn
    if meta in (NO_GRAD_MODE, INFERENCE_MODE) or fn is None:
        prefix = (
            f"Output {view._output_nr} of {_name(fn)} is a view of a view which was created in"
            if fn is not None
            else "A view was created in"
        )
        if meta == INFERENCE_MODE:
            head = f"{prefix} inference mode and {what} modified inplace in normal mode."
        else:
            head = f"{prefix} no_grad mode and {what} modified inplace with grad mode enabled."
    else:
        head = f"Output {view._output_nr} of {_name(fn)} is a view and {what} modified inplace."
    return head + _WHY[meta]


def check(op_name: str, view: Tensor) -> None:
    """Raise PyTorch's error if ``view`` may not be written in place (a direct write, in grad
    mode, with some input requiring grad)."""
    meta = view.__dict__.get("_creation_meta", DEFAULT)
    if meta != DEFAULT and view._base is not None:
        raise RuntimeError(f"{op_name}: {message(view, meta, False)}")


def invalidate(view: Tensor) -> bool:
    """After its base (or another view of it) was written: give a refused ``view`` a
    ``grad_fn`` that raises PyTorch's error when backward reaches it. False for a ``DEFAULT``
    view (the caller regenerates its history instead)."""
    meta = view.__dict__.get("_creation_meta", DEFAULT)
    if meta == DEFAULT:
        return False
    fn = view.grad_fn
    if fn is None or fn._name == "InvalidViewBackward":
        return True
    text = message(view, meta, True)

    def backward(node: Node, grads: Any) -> Any:
        raise RuntimeError(text)

    view.grad_fn = make_node("InvalidViewBackward", backward, ((fn, view._output_nr),))
    view._output_nr = 0
    return True


def written_without_grad(t: Any) -> None:
    """``t`` was written in place under ``no_grad``: its refused views (and ``t``, if it is
    one) can no longer be differentiated (PyTorch raises when their ``grad_fn`` is next
    read)."""
    if not isinstance(t, Tensor):
        return
    base = t._base
    views = (t if base is None else base).__dict__.get("_views")
    if views:
        for v in list(views.values()):
            invalidate(v)
    if base is not None:
        invalidate(t)


def nograd_view(out: Any) -> None:
    """Views taken under ``no_grad`` of a tensor that requires grad require grad too, with no
    history, and refuse a write in grad mode (PyTorch's ``NO_GRAD_MODE`` views)."""
    for o in out if isinstance(out, (tuple, list)) else (out,):
        if isinstance(o, Tensor) and o._base is not None and o.dtype.category >= 2:
            marks.mark_autograd(o)
            mark(o, NO_GRAD_MODE)
