"""Pickling and deep copies of tensors and of Tensor subclasses, as PyTorch's
``Tensor.__reduce_ex__`` and ``Tensor.__deepcopy__``.

# NOTE [subclass pickling]
A plain tensor with no Python attributes pickles as its values and ``requires_grad``. Any
other (an instance of a subclass, or a tensor with attributes set on it) pickles as
PyTorch's does: ``_rebuild_from_type_v2(func, cls, args, state)``, which rebuilds the plain
tensor with ``func(*args)``, makes it an instance of ``cls`` (``as_subclass``) and restores
``state``: the object's user attributes (its ``__dict__`` without ember's own per-tensor
entries, ``INTERNAL``) and, for a class with ``__slots__``, its slots, as PyTorch's
``_get_obj_state``/``_set_obj_state`` (a class's own ``__setstate__``/``__getstate__``
take over). A storage-less wrapper subclass rebuilds through
``_rebuild_wrapper_subclass`` (its class, dtype, size, strides, requires_grad: no values;
its slots and attributes, such as the wrapped tensor, come back with the state).

``deepcopy`` copies the values (``clone``, which a wrapper subclass's handler answers and
which must keep its class, as PyTorch requires), ``requires_grad``, the ``.grad`` and the
same state; only leaves may be copied (PyTorch's error otherwise). PyTorch 2.13 refuses
to deep-copy a non-wrapper subclass unless it defines ``new_empty`` to keep its class;
ember copies it, class and state (docs/fidelity.md).
"""

from __future__ import annotations

import copy
import copyreg
from typing import Any

from ember._shape_only import ShapeOnlyArray
from ember._tensor import Tensor, wrap
from ember.autograd.grad_mode import no_grad

#: ember's own per-tensor entries of ``__dict__`` (NOTE [tensor slot names]): never part
#: of a tensor's pickled or copied state
INTERNAL = frozenset({
    "grad_fn", "grad", "_vc", "_base", "_views", "_retains_grad", "_output_nr",
    "_grad_accumulator", "_leaf_hooks", "_post_accumulate_hooks", "_creation_meta",
    "_ember_storage", "_offset", "_layout",
})  # fmt: skip
#: Tensor's own slots
_TENSOR_SLOTS = frozenset({"_edata", "_ekeys", "__dict__", "__weakref__"})


def obj_state(t: Any) -> Any:
    """The state PyTorch's ``_get_obj_state`` gives: the user attributes, with the slots'
    values beside them (a pair) for a class with ``__slots__``; a class's own
    ``__getstate__`` gives it instead."""
    getstate = getattr(type(t), "__getstate__", None)
    if (
        getstate is not None
        and getstate is not object.__getstate__
        and getstate is not getattr(Tensor, "__getstate__", None)
    ):
        return t.__getstate__()
    attrs = {k: v for k, v in t.__dict__.items() if k not in INTERNAL}
    names = [n for n in copyreg._slotnames(type(t)) if n not in _TENSOR_SLOTS]  # type: ignore[attr-defined]
    slots = {n: getattr(t, n) for n in names if hasattr(t, n)}
    return (attrs, slots) if slots else attrs


def set_obj_state(t: Any, state: Any) -> Any:
    """Restore ``obj_state``'s state on ``t`` (PyTorch's ``_set_obj_state``)."""
    if isinstance(state, tuple):
        if len(state) != 2 or not isinstance(state[0], dict):
            raise RuntimeError(f"Invalid serialized state: {state}")
        attrs, slots = state
    else:
        attrs, slots = state, None
    for k, v in (attrs or {}).items():
        setattr(t, k, v)
    for k, v in (slots or {}).items():
        setattr(t, k, v)
    return t


def _rebuild_tensor(data: Any, requires_grad: bool) -> Any:
    t = wrap(data)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _rebuild_wrapper_subclass(
    cls: type,
    dtype: Any,
    size: Any,
    stride: Any,
    storage_offset: int,
    layout: Any,
    device: Any,
    requires_grad: bool,
) -> Any:
    """A storage-less wrapper of class ``cls`` (PyTorch's ``_rebuild_wrapper_subclass``)."""
    return Tensor._make_wrapper_subclass(  # type: ignore[attr-defined]
        cls, size, strides=stride, storage_offset=storage_offset, dtype=dtype,
        layout=layout, device=device, requires_grad=requires_grad,
    )  # fmt: skip


def _rebuild_from_type_v2(func: Any, new_type: type, args: Any, state: Any) -> Any:
    """``func(*args)`` as an instance of ``new_type`` with ``state`` restored (PyTorch's
    ``torch._tensor._rebuild_from_type_v2``)."""
    ret = func(*args)
    if type(ret) is not new_type:
        ret = ret.as_subclass(new_type)
    setstate = getattr(ret.__class__, "__setstate__", None)
    if (
        setstate is not None
        and setstate is not getattr(Tensor, "__setstate__", None)
        and (setstate is not object.__dict__.get("__setstate__"))
    ):
        ret.__setstate__(state)
    else:
        ret = set_obj_state(ret, state)
    return ret


def _is_wrapper(t: Any) -> bool:
    """A storage-less wrapper subclass (``_make_wrapper_subclass``): no values of its own."""
    return isinstance(t._edata, ShapeOnlyArray) and type(t).__torch_dispatch__ is not getattr(
        _plain(), "__torch_dispatch__", None
    )


def _plain() -> type:
    return Tensor


def reduce_ex(t: Any, protocol: Any) -> Any:
    """``Tensor.__reduce_ex__`` (NOTE [subclass pickling])."""
    state = obj_state(t)
    if _is_wrapper(t):
        func: Any = _rebuild_wrapper_subclass
        args: Any = (
            type(t), t.dtype, tuple(t.size()), t.stride(), t.storage_offset(), t.layout,
            t.device, t.requires_grad,
        )  # fmt: skip
    else:
        func, args = _rebuild_tensor, (t._value_array("pickle").copy(), t.requires_grad)
    if type(t) is Tensor and not state:
        return func, args
    return _rebuild_from_type_v2, (func, type(t), args, state)


def deepcopy(t: Any, memo: dict[int, Any]) -> Any:
    """``Tensor.__deepcopy__`` (NOTE [subclass pickling])."""

    if not t.is_leaf:
        raise RuntimeError(
            "Only Tensors created explicitly by the user (graph leaves) support the deepcopy "
            "protocol at the moment.  If you were attempting to deepcopy a module, this may "
            "be because of a torch.nn.utils.weight_norm usage, see "
            "https://github.com/pytorch/pytorch/pull/103001"
        )
    found = memo.get(id(t))
    if found is not None:
        return found
    with no_grad():
        new = t.clone()
        if type(t) is not Tensor and type(new) is not type(t):
            if _is_wrapper(t):
                raise RuntimeError(
                    "The default implementation of __deepcopy__() for wrapper subclasses "
                    "only works for subclass types that implement clone() and for which "
                    "cloning returns another instance of the same subclass. You should either "
                    "properly implement clone() for your subclass or override __deepcopy__() "
                    "if it is intended behavior for clone() to return an instance of a "
                    "different type."
                )
            new = new.as_subclass(type(t))
        if t.requires_grad:
            new.requires_grad_(True)
        if t.grad is not None:
            new.grad = copy.deepcopy(t.grad, memo)
        state = obj_state(t)
        set_obj_state(new, copy.deepcopy(state, memo))
    memo[id(t)] = new
    return new
