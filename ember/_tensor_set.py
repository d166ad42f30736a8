"""``Tensor.set_``: point a tensor at other memory, in each of PyTorch's forms.

# NOTE [set_ forms]
PyTorch's binding picks one of five ``aten.set_`` overloads from the arguments, and, being
C++ that checks no overrides, skips ``__torch_function__`` (a subclass's handler and a
``TorchFunctionMode`` never see the call; a ``TorchDispatchMode`` sees the overload):

- ``set_()``: ``aten.set_.default``, empty on a new storage;
- ``set_(tensor)``: ``aten.set_.source_Tensor``, ``tensor``'s storage, sizes, strides and
  offset (the dtypes must match);
- ``set_(storage)``: ``aten.set_.source_Storage``, the whole storage as one dimension of
  ``self``'s dtype (its bytes read as that dtype; a ``TypedStorage`` passes its untyped one);
- ``set_(storage, storage_offset, size, stride=None)``:
  ``aten.set_.source_Storage_storage_offset``;
- ``set_(tensor, storage_offset, size, stride=None)``: the same overload on ``tensor``'s
  storage, the offset counted from ``tensor``'s first element.

Each bumps ``self``'s version counter (not the source's); on a leaf that requires grad it
raises as in-place ops do (not under ``no_grad``); otherwise autograd records a
``NotImplemented`` node whose backward raises. ember cannot grow a storage in place, so a
layout past the storage's end raises where PyTorch may resize the storage.
"""

from __future__ import annotations

import inspect
from typing import Any

from ember._tensor import Tensor
from ember.dispatch import state
from ember.ops.registry import ops
from ember.storage import TypedStorage, UntypedStorage

_set_ = ops.aten.set_

_FORMS = (
    " * ()\n"
    " * (Storage source)\n"
    " * (Storage source, int storage_offset, tuple of ints size, tuple of ints stride = None)\n"
    " * (Tensor source)\n"
    " * (Tensor source, int storage_offset, tuple of ints size, tuple of ints stride = None)"
)


def _invalid(args: tuple[Any, ...], kwargs: dict[str, Any]) -> TypeError:
    got = ", ".join(
        [type(a).__name__ for a in args] + [f"{k}={type(v).__name__}" for k, v in kwargs.items()]
    )
    return TypeError(
        f"set_() received an invalid combination of arguments - got ({got}), but expected "
        f"one of:\n{_FORMS}"
    )


def _untyped(self: Tensor, source: TypedStorage) -> UntypedStorage:
    if source.dtype != self.dtype:
        raise RuntimeError(
            f"set_: Expected a Storage of type {self.dtype} or an UntypedStorage, but got "
            f"type {source.dtype} for argument 1 'storage'"
        )
    return source.untyped()


_PARAMS = ("source", "storage_offset", "size", "stride")


def set_(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    """``self`` on ``source``'s memory (a tensor or a storage), or empty with no source
    (NOTE [set_ forms]).

    >>> a = ember.arange(6.0); x = ember.zeros(2)
    >>> x.set_(a.untyped_storage(), 1, (2, 2))
    tensor([[1., 2.],
            [3., 4.]])
    """
    if len(args) > len(_PARAMS) or set(kwargs) - set(_PARAMS[len(args) :]):
        raise _invalid(args, kwargs)
    with state.TorchFunctionGuard(state.TF_BITS, state.TF_BITS):  # PyTorch's C++: no protocol
        return _set(self, args, kwargs)


def _set(self: Tensor, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Tensor:
    bound = dict(zip(_PARAMS, args, strict=False)) | kwargs
    if not bound:
        return _set_.default._dispatch(self)  # type: ignore[no-any-return]
    source = bound.pop("source", None)
    storage_offset, size, stride = (bound.get(k) for k in _PARAMS[1:])
    given = {k: v for k, v in bound.items() if v is not None}
    if isinstance(source, TypedStorage):
        source = _untyped(self, source)
    if not isinstance(source, (Tensor, UntypedStorage)):  # (None too: as PyTorch's)
        raise _invalid(args, kwargs)
    if not given:
        if isinstance(source, Tensor):
            return _set_.source_Tensor._dispatch(self, source)  # type: ignore[no-any-return]
        return _set_.source_Storage._dispatch(self, source)  # type: ignore[no-any-return]
    if storage_offset is None or size is None:
        raise _invalid(args, kwargs)
    offset, dims = int(storage_offset), [int(n) for n in size]
    strides = [] if stride is None else [int(n) for n in stride]
    if isinstance(source, Tensor):
        if source.dtype != self.dtype:
            raise RuntimeError(
                f"set_: Could not set tensor of type {source.dtype} to a tensor of type "
                f"{self.dtype}; convert the source with .to({self.dtype}) first"
            )
        offset += source.storage_offset()
        source = source.untyped_storage()
    op = _set_.source_Storage_storage_offset
    return op._dispatch(self, source, offset, dims, strides)  # type: ignore[no-any-return]


#: the signature PyTorch's ``get_testing_overrides`` gives it
set_.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
    [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    + [
        inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=default)
        for name, default in zip(_PARAMS, (None, 0, None, None), strict=True)
    ]
)
set_.checks_torch_function = True  # type: ignore[attr-defined]  # none, as PyTorch's binding
Tensor.set_ = set_  # type: ignore[attr-defined]
