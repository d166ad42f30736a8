"""Tensor subclasses: making instances (``as_subclass``, ``_make_subclass``) and the default
``Tensor.__torch_function__``, which keeps results in the subclass.

>>> class Sub(ember.Tensor):
...     pass
>>> type(ember.ones(2).as_subclass(Sub) + 1).__name__
'Sub'
"""

from __future__ import annotations

import sys
from typing import Any

from ember import dtypes
from ember._layout import strided
from ember._shape_only import ShapeOnlyArray
from ember._tensor import Tensor
from ember._wrapper_metadata import POLICIES, CustomMetadataArray
from ember.device import device as _device
from ember.dispatch.keys import (
    AUTOGRAD_BIT,
    DEVICE_BITS,
    PYTHON_BIT,
    TORCH_FUNCTION_BIT,
    DispatchKey,
    below,
)
from ember.dispatch.protocols import classify
from ember.ops.registry import ops
from ember.overrides import call_again, get_default_nowrap_functions

_BELOW_TF = below(DispatchKey.TorchFunction)  # the real keys: no handler, no mode
_alias = ops.aten.alias.default
_detach = ops.aten.detach.default
_refcount = sys.getrefcount
_FRESH = 2  # references to an object held only by one local name (and getrefcount's argument)
_NOWRAP: list[frozenset[Any]] = []
_CPU = _device("cpu")  # get_default_nowrap_functions(), once Tensor is complete


def _retype(t: Tensor, cls: type) -> Any:
    """Make ``t`` (a fresh object nobody else holds) an instance of ``cls``."""
    if not (isinstance(cls, type) and issubclass(cls, Tensor)):
        raise TypeError(f"as_subclass(): {cls!r} is not a subclass of ember.Tensor")
    return _become(t, cls)


def _become(t: Tensor, cls: type) -> Any:
    """``_retype`` for a ``cls`` known to be a Tensor subclass."""
    try:
        t.__class__ = cls
    except TypeError:  # a class with ``__slots__`` of its own: another layout, a new object
        new = object.__new__(cls)
        new._edata, new._ekeys = t._edata, t._ekeys
        new.__dict__.update(t.__dict__)
        t = new
    t._ekeys = (t._ekeys & ~TORCH_FUNCTION_BIT) | classify(cls)
    return t


def as_subclass(self: Tensor, cls: type) -> Any:
    """This tensor as an instance of ``cls``: the same storage, the same autograd history
    (the result is an alias whose gradient flows back to ``self``).

    >>> class Sub(ember.Tensor): ...
    >>> type(ember.ones(2).as_subclass(Sub)).__name__
    'Sub'
    """
    return _retype(_alias.redispatch(self._ekeys & _BELOW_TF, self), cls)


def _make_subclass(cls: type, data: Tensor, require_grad: bool = False, **_: Any) -> Any:
    """A new leaf of class ``cls`` over ``data``'s storage (``Parameter`` is built this way).

    >>> class Sub(ember.Tensor): ...
    >>> ember.Tensor._make_subclass(Sub, ember.ones(2), True).requires_grad
    True
    """
    if not isinstance(data, Tensor):
        raise TypeError(f"_make_subclass(): data must be a Tensor, got {type(data).__name__}")
    out = _detach.redispatch(data._ekeys & _BELOW_TF & ~AUTOGRAD_BIT, data)
    out = _retype(out, cls)
    if require_grad:  # directly, as PyTorch's C++ does: no __torch_function__ of cls runs
        dt = dtypes.FROM_NUMPY[out._edata.dtype]  # not out.dtype: that asks the handler
        if not (dt.is_floating_point or dt.is_complex):
            raise RuntimeError(
                f"_make_subclass(): only Tensors of floating point or complex dtype can require "
                f"gradients (got {dt})"
            )
        out._ekeys |= AUTOGRAD_BIT
    return out


def _make_wrapper_subclass(
    cls: type,
    size: Any,
    strides: Any = None,
    storage_offset: int | None = None,
    memory_format: Any = None,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    pin_memory: bool = False,
    requires_grad: bool = False,
    dispatch_sizes_strides_policy: str | None = None,
    dispatch_device: bool = False,
    dispatch_layout: bool = False,
    **_: Any,
) -> Any:
    """A ``cls`` instance with the given metadata and no storage: what users and autograd
    see of a wrapper subclass, whose ``__torch_dispatch__`` computes on what it wraps.

    >>> class W(ember.Tensor):
    ...     @classmethod
    ...     def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
    ...         return NotImplemented
    >>> w = ember.Tensor._make_wrapper_subclass(W, (10**6, 10**6))
    >>> w.shape, w.dtype
    (ember.Size([1000000, 1000000]), ember.float32)

    With ``dispatch_sizes_strides_policy="sizes"`` (or ``"strides"``), ``dispatch_device``
    and ``dispatch_layout``, members such as ``size()``, ``stride()`` and ``device`` ask the
    handler (NOTE [custom metadata] in ember/_wrapper_metadata.py).
    """
    if not (isinstance(cls, type) and issubclass(cls, Tensor)):
        raise TypeError(f"_make_wrapper_subclass(): {cls!r} is not a subclass of ember.Tensor")
    keys = classify(cls)
    if not keys & PYTHON_BIT:
        raise TypeError(
            f"_make_wrapper_subclass(): {cls.__name__} must define __torch_dispatch__: a "
            "wrapper has no storage, so only its handler can run ops on it"
        )
    d = dtypes.get_default_dtype() if dtype is None else dtype
    dev = _CPU if device is None else _device(device)
    shape = tuple(map(int, size))
    if dispatch_sizes_strides_policy not in POLICIES:
        raise ValueError(
            f"Unknown sizes_strides_policy: {dispatch_sizes_strides_policy}; expected "
            "'strides' or 'sizes'"
        )
    st = None if strides is None else tuple(strides)
    policy = POLICIES[dispatch_sizes_strides_policy]
    arr: ShapeOnlyArray
    if policy or dispatch_device or dispatch_layout:
        lay = strided if layout is None else layout
        arr = CustomMetadataArray(
            shape, d.np, st, storage_offset or 0, dev, policy, dispatch_device,
            dispatch_layout, lay,
        )  # fmt: skip
    elif st is None and not storage_offset:
        arr = ShapeOnlyArray.contiguous(shape, d.np, dev)
    else:
        arr = ShapeOnlyArray(shape, d.np, st, storage_offset or 0, dev)
    t = object.__new__(cls)
    t._edata = arr
    t._ekeys = DEVICE_BITS[dev.type] | keys
    if requires_grad:
        t.requires_grad_(True)
    return t


def _convert(ret: Any, cls: type) -> Any:
    """``ret`` with every Tensor in it (also in tuples, lists and named tuples) an instance of
    ``cls``."""
    if cls is Tensor:
        return ret
    if isinstance(ret, Tensor):
        return ret if isinstance(ret, cls) else as_subclass(ret, cls)
    if isinstance(ret, (tuple, list)):
        items = [_convert(r, cls) for r in ret]
        if hasattr(ret, "_fields"):  # a named tuple
            return type(ret)(*items)
        return type(ret)(items)
    return ret


def default_torch_function(
    cls: type, func: Any, types: Any, args: Any = (), kwargs: dict[str, Any] | None = None
) -> Any:
    """``Tensor.__torch_function__``: run ``func`` with subclass handling off and return its
    Tensor results as instances of ``cls`` (the most derived class among the arguments, as
    handlers run subclasses first); NotImplemented when some type is not a superclass of
    ``cls`` (a sibling subclass, a tensor-like)."""
    for t in types:
        if not issubclass(cls, t):
            return NotImplemented
    ret = call_again(func, args, kwargs)  # NOTE [one argument pass]
    if cls is Tensor:
        return ret
    if not _NOWRAP:
        _NOWRAP.append(get_default_nowrap_functions())
    if func in _NOWRAP[0]:
        return ret
    if type(ret) is Tensor and ret.grad_fn is None and _refcount(ret) == _FRESH:
        # NOTE [converting fresh results]: nothing else holds this new result, so it
        # becomes the subclass itself instead of an alias of it (the alias's only other
        # trace would be a _base and, with autograd, an AliasBackward0 node); cls is a
        # Tensor subclass (this is its classmethod), so _retype's check is not needed
        return _become(ret, cls)
    return _convert(ret, cls)


Tensor.as_subclass = as_subclass  # type: ignore[attr-defined]
Tensor._make_subclass = staticmethod(_make_subclass)  # type: ignore[attr-defined]
Tensor._make_wrapper_subclass = staticmethod(_make_wrapper_subclass)  # type: ignore[attr-defined]
Tensor.__torch_function__ = classmethod(default_torch_function)  # type: ignore[attr-defined]
