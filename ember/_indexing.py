"""``Tensor.__getitem__`` / ``__setitem__``: Python indices translated into aten ops.

# NOTE [indexing translation]
As in PyTorch, each part of an index becomes the op a subclass or mode then sees:
an int → ``select.int``; a slice → ``slice.Tensor`` (a step below 1 raises ValueError);
``None`` → ``unsqueeze``; ``...`` → the dims it skips; ``True``/``False`` → ``unsqueeze`` and
an index of ``[0]``/``[]`` on the new dim; tensors, lists and tuples inside the index →
one ``index.Tensor`` call after all basic indexing, with one entry per remaining dim
(``None`` for dims kept whole). Full slices in a tuple are skipped; an index that changes
nothing gives ``alias``. Assignment writes through the view with ``copy_``/``fill_``, or
with ``index_put_`` when the index has tensors.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from ember import dtypes
from ember._factory import tensor
from ember._tensor import Tensor, wrap
from ember.dispatch import marks
from ember.dispatch.protocols import GENERATED_MEMBERS
from ember.dispatch.state import FUNCTION_MODES
from ember.ops.registry import ops
from ember.ops.strides import INT64_MAX
from ember.overrides import (
    _is_torch_function_mode_enabled,
    dispatch_torch_function,
    has_tensor_likes,
)

aten = ops.aten
_select = aten.select.int._dispatch
_slice = aten.slice.Tensor._dispatch
_unsqueeze = aten.unsqueeze.default._dispatch
_alias = aten.alias.default._dispatch
_index = aten.index.Tensor._dispatch
_index_put_ = aten.index_put_.default._dispatch
_view = aten.view.default._dispatch
_expand = aten.expand.default._dispatch
_lift_fresh = aten.lift_fresh.default._dispatch

_INTEGERS = (int, np.integer)
_SCALARS = (bool, int, float, complex, np.number, np.bool_)
_MASK_DTYPES = (dtypes.bool_, dtypes.uint8)


def _slice_args(s: slice) -> tuple[int, int, int]:
    step = 1 if s.step is None else _as_int(s.step)
    if step <= 0:
        raise ValueError(
            "slice step cannot be zero" if step == 0 else "step must be greater than zero"
        )
    start = 0 if s.start is None else _as_int(s.start)
    stop = INT64_MAX if s.stop is None else _as_int(s.stop)
    return start, stop, step


def _as_int(x: Any) -> int:
    if isinstance(x, Tensor):
        return int(x.item())
    return x.__index__()


def _sequence_as_tuple(index: list[Any]) -> bool:
    """A list index holding slices, ``...``, ``None``, tensors or sequences is read as a tuple
    (NumPy's legacy rule, which PyTorch keeps with a warning)."""
    if len(index) >= 32:
        return False
    return any(
        x is None or x is Ellipsis or isinstance(x, (slice, Tensor, list, tuple, np.ndarray))
        for x in index
    )


def _items(index: Any) -> tuple[Any, ...]:
    if type(index) is tuple:
        return index
    if type(index) is list and _sequence_as_tuple(index):
        warnings.warn(
            "Using a non-tuple sequence for multidimensional indexing is deprecated; use "
            "x[tuple(seq)] instead of x[seq]",
            UserWarning,
            stacklevel=3,
        )
        return tuple(index)
    return (index,)


def _dims_used(items: tuple[Any, ...], ndim: int) -> int:
    used = 0
    ellipsis = False
    for it in items:
        if it is None or type(it) in (bool, np.bool_):
            continue
        if it is Ellipsis:
            if ellipsis:
                raise IndexError("an index can only have a single ellipsis ('...')")
            ellipsis = True
            continue
        if isinstance(it, Tensor) and it.dtype in _MASK_DTYPES:
            used += it.ndim
        else:
            used += 1
    if used > ndim:
        raise IndexError(f"too many indices for tensor of dimension {ndim}")
    return used


def _to_index_tensor(it: Any) -> Tensor:
    """A list, tuple or ndarray inside an index as an int64 or bool tensor."""
    arr = np.asarray(it) if not isinstance(it, np.ndarray) else it
    kind = arr.dtype.kind
    if kind in "iu" or (arr.size == 0 and kind == "f"):
        return _lift_fresh(wrap(arr.astype(np.int64)))
    if kind == "b":
        return _lift_fresh(wrap(np.array(arr)))
    if kind == "O":  # holds tensors: let ember.tensor sort them out
        return tensor(it)
    raise IndexError(
        "tensors used as indices must be long, int, byte or bool tensors; got a sequence of "
        f"{arr.dtype} values"
    )


def _apply(self: Tensor, items: tuple[Any, ...]) -> tuple[Tensor, list[Any] | None]:
    """Apply the basic parts of an index as views; return the view and the ``index.Tensor``
    entries left to apply (None if there are none). NOTE [indexing translation]."""
    ndim = self.ndim
    used = _dims_used(items, ndim)
    result = self
    dim = 0
    entries: list[Any] = []
    advanced = False
    for it in items:
        t = type(it)
        if t is int or (isinstance(it, _INTEGERS) and t is not bool and t is not np.bool_):
            result = _select(result, dim, int(it))
        elif t is slice:
            start, stop, step = _slice_args(it)
            if start != 0 or stop != INT64_MAX or step != 1:
                args = (start, stop) if step == 1 else (start, stop, step)
                result = _slice(result, dim, *args)
            dim += 1
            entries.append(None)
        elif it is None:
            result = _unsqueeze(result, dim)
            dim += 1
            entries.append(None)
        elif it is Ellipsis:
            skipped = ndim - used
            dim += skipped
            entries.extend([None] * skipped)
        elif t is bool or t is np.bool_:
            result = _unsqueeze(result, dim)
            entries.append(wrap(np.zeros(1 if it else 0, np.int64)))
            advanced = True
            dim += 1
        else:
            if not isinstance(it, Tensor):
                if not isinstance(it, (list, tuple, np.ndarray)):
                    raise IndexError(
                        "only integers, slices (`:`), ellipsis (`...`), None and long or byte "
                        f"Variables are valid indices (got {t.__name__})"
                    )
                it = _to_index_tensor(it)
            if it.ndim == 0 and it.dtype not in _MASK_DTYPES and not it.dtype.is_floating_point:
                result = _select(result, dim, int(it.item()))
                continue
            if it.ndim == 0 and it.dtype is dtypes.bool_:
                result = _unsqueeze(result, dim)
                entries.append(wrap(np.zeros(1 if it.item() else 0, np.int64)))
                advanced = True
                dim += 1
                continue
            entries.append(it)
            advanced = True
            dim += it.ndim if it.dtype in _MASK_DTYPES else 1
    if not advanced:
        return result, None
    while entries and entries[-1] is None:
        entries.pop()
    return result, entries


def __getitem__(self: Tensor, index: Any) -> Tensor:
    """``x[index]`` as PyTorch spells it in aten ops (NOTE [indexing translation]).

    >>> ember.arange(6).view(2, 3)[1, ::2]
    tensor([3, 5])
    """
    if (marks.wants_torch_function(self) or FUNCTION_MODES[0]) and _overridden((self, index)):
        return dispatch_torch_function(Tensor.__getitem__, (self, index), {})
    t = type(index)
    if t is int:
        return _select(self, 0, index)
    if t is slice:
        if index.step is None:
            start, stop = index.start, index.stop
            return _slice(
                self, 0, 0 if start is None else start, INT64_MAX if stop is None else stop
            )
        start, stop, step = _slice_args(index)
        return _slice(self, 0, start, stop, step) if step != 1 else _slice(self, 0, start, stop)
    if index is None:
        return _unsqueeze(self, 0)
    if index is Ellipsis:
        return _alias(self)
    if has_tensor_likes((index,), {}):  # an index's class takes the call over
        return dispatch_torch_function(Tensor.__getitem__, (self, index), {})
    result, entries = _apply(self, _items(index))
    if entries is not None:
        return _index(result, entries)
    return _alias(result) if result is self else result


def _value_tensor(self: Tensor, value: Any) -> Tensor:
    if isinstance(value, Tensor):
        return value
    if isinstance(value, _SCALARS):
        npdt = self.dtype.np
        if type(value) is int and npdt.kind in "iu":
            info = np.iinfo(npdt)
            if npdt == np.uint8 and -256 <= value < 0:
                value %= 256  # PyTorch lets a negative int wrap into uint8 (-2 stores 254)
            elif not info.min <= value <= info.max:
                raise RuntimeError(
                    f"value cannot be converted to type {npdt.name}_t without overflow: {value} "
                    f"is outside [{info.min}, {info.max}]"
                )
        return _lift_fresh(wrap(np.array(value, dtype=npdt)))
    raise TypeError(
        f"can't assign a {type(value).__name__} to a tensor of dtype {self.dtype}; assign a "
        "number or an ember.Tensor (ember.tensor(value))"
    )


def _copy_to(dst: Tensor, src: Tensor) -> None:
    if dst.shape == src.shape:
        aten.copy_.default(dst, src)
    elif src.ndim == 0:
        aten.fill_.Tensor(dst, src)
    else:
        shape = list(src.shape)
        while shape and shape[0] == 1:
            shape.pop(0)
        aten.copy_.default(dst, _expand(_view(src, shape), list(dst.shape)))


def __setitem__(self: Tensor, index: Any, value: Any) -> None:
    """``x[index] = value``: write through the indexed view, or ``index_put_`` for tensors.

    >>> x = ember.zeros(3); x[1:] = 2.0; x
    tensor([0., 2., 2.])
    """
    if (
        marks.wants_torch_function(self)
        or FUNCTION_MODES[0]
        or (type(index) is not int and has_tensor_likes((index, value), {}))
        or (type(value) is not Tensor and has_tensor_likes((value,), {}))
    ) and _overridden((self, index, value)):
        dispatch_torch_function(Tensor.__setitem__, (self, index, value), {})
        return
    src = _value_tensor(self, value)
    if type(index) is int:
        _copy_to(_select(self, 0, index), src)
        return
    result, entries = _apply(self, _items(index))
    if entries is not None:
        _index_put_(result, entries, src)
    else:
        _copy_to(result, src)


def _overridden(args: tuple[Any, ...]) -> bool:
    """Whether a mode or the class of the tensor, an index or the value takes the call."""
    return _is_torch_function_mode_enabled() or has_tensor_likes(args, {})


Tensor.__getitem__ = __getitem__  # type: ignore[method-assign]
Tensor.__setitem__ = __setitem__  # type: ignore[method-assign]
GENERATED_MEMBERS.update(("__getitem__", "__setitem__"))  # they check the protocol inline
