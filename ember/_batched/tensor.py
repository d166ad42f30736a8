"""``BatchedTensor``: vmap's wrapper, one level of batching over a physical tensor.

# NOTE [vmap levels]
Each ``vmap`` call opens a *level* (a number that only grows, so an inner vmap's level is
always higher than an outer one's) and wraps every input it maps over in a
``BatchedTensor``: a tensor whose shape, dtype and device are the *logical* ones the
function sees (one example), holding the *physical* tensor ``_value`` with the batch
dimension at 0. A nested vmap wraps the outer level's BatchedTensor again.

A BatchedTensor carries the ``FuncTorchBatched`` key only (and ``Autograd`` once it
requires grad). The key's kernels are the batching rules (``ember/_batched/``): a rule
takes the arguments of the highest level, calls ordinary ops on their physical tensors
(full dispatch: a lower level's BatchedTensor runs that level's rule in turn, a lazy tensor
records, a tensor that requires grad records its node) and wraps the result at the same
level. Arguments of lower levels are, to this level, plain tensors that are the same for
every example.

The key sits just *below* Autograd. PyTorch places FuncTorchBatched above Autograd and lets
the DynamicLayer keys pick, for each op, the transform of the innermost level; ember gets
the same order from the key order itself:

- ``grad(vmap(f))``: the BatchedTensors do not require grad; their physical tensors do. The
  batching rules' physical ops record the graph that the outer ``grad`` differentiates.
- ``vmap(grad(f))``: ``grad`` makes its inputs require grad *at the logical level* (a
  BatchedTensor that requires grad, or an unbatched tensor). The Autograd kernel records a
  node on the logical tensors, then runs the op below itself, which is the batching rule.
  The backward formulas run on BatchedTensors too, so every example gets its own gradient.

While the Autograd kernel runs a call below itself it excludes the Autograd key; a batching
rule puts it back (as it was when its vmap level was entered) around its physical ops, so a
transform *outside* the vmap still sees them (``grad(vmap(grad(f)))``): each level runs
with the dispatch state of its own scope, which is what DynamicLayer saves and restores.
"""

from __future__ import annotations

import itertools
import threading
from typing import Any

import numpy as np

from ember._shape_only import ShapeOnlyArray
from ember._tensor import Tensor
from ember.dispatch import marks
from ember.dispatch.protocols import disabled_torch_function_impl

_ndarray = np.ndarray

_ITEM_ERROR = (
    "vmap: It looks like you're calling .item() on a Tensor. We don't support vmap over "
    "calling .item() on a Tensor, please try to rewrite what you're doing with other "
    "operations. If error is occurring somewhere inside PyTorch internals, please file a bug "
    "report."
)
_CONTROL_FLOW_ERROR = (
    "vmap: It looks like you're attempting to use a Tensor in some data-dependent control "
    "flow. We don't support that yet, please shout over at "
    "https://github.com/pytorch/functorch/issues/257 ."
)


class _BatchedData(ShapeOnlyArray):
    """A BatchedTensor's logical shape, strides, dtype and device; reading its values is
    data-dependent control flow, which vmap refuses (PyTorch's errors)."""

    __slots__ = ("physical",)

    @property  # type: ignore[override]
    def offset(self) -> int:
        """The physical tensor's storage offset: example 0's, as in PyTorch."""
        return self.physical.storage_offset()  # type: ignore[no-any-return]

    def materialize(self, what: str) -> Any:
        raise RuntimeError(_ITEM_ERROR if what == "item" else _CONTROL_FLOW_ERROR)


class Level:
    """One vmap call's level: its number, batch size, randomness mode, and whether the
    Autograd key was excluded when it was entered (NOTE [vmap levels])."""

    __slots__ = ("level", "size", "randomness", "autograd_excluded")

    def __init__(self, level: int, size: int, randomness: str, autograd_excluded: bool) -> None:
        self.level, self.size, self.randomness = level, size, randomness
        self.autograd_excluded = autograd_excluded


class _Levels(threading.local):
    def __init__(self) -> None:
        self.stack: list[Level] = []
        self.by_number: dict[int, Level] = {}


LEVELS = _Levels()
_NUMBERS = itertools.count(1)


def new_level_number() -> int:
    return next(_NUMBERS)


def level_of(number: int) -> Level:
    """The live level ``number``; a BatchedTensor whose vmap has returned escaped it."""
    lvl = LEVELS.by_number.get(number)
    if lvl is None:
        raise RuntimeError(
            "vmap: a BatchedTensor escaped the vmap that made it (it was saved or returned "
            "through a side channel); return it from the function instead"
        )
    return lvl


class BatchedTensor(Tensor):
    """A tensor batched at one vmap level (NOTE [vmap levels]): ``_value`` is the physical
    tensor, batch dimension first; ``_level`` the level's number."""

    _value: Tensor
    _level: int
    # not a subclass to the __torch_function__ protocol: PyTorch's BatchedTensor is a C++
    # TensorImpl, so functions written in Python see a plain Tensor
    __torch_function__ = disabled_torch_function_impl

    def __repr__(self) -> str:
        return f"BatchedTensor(lvl={self._level}, bdim=0, value=\n{self._value!r}\n)"

    def __reduce_ex__(self, protocol: Any) -> Any:
        raise RuntimeError("vmap: a BatchedTensor cannot be pickled or deep-copied")


def wrap(value: Tensor, level: int) -> BatchedTensor:
    """``value`` (batch dimension at 0) as a BatchedTensor of ``level``."""
    t = object.__new__(BatchedTensor)
    data = value._edata
    if type(data) is not _ndarray and getattr(data, "layout", None) is not None:
        raise RuntimeError(
            f"vmap: a tensor with layout {value.layout} cannot be batched; ember's vmap "
            "takes strided tensors (use to_dense())"
        )
    meta = object.__new__(_BatchedData)  # (ShapeOnlyArray's fields, set without conversions)
    meta.shape = data.shape[1:]
    meta.dtype = data.dtype
    if type(data) is _ndarray and data.size > 1:
        meta.strides = data.strides[1:]
    else:
        meta.strides = tuple(s * data.itemsize for s in value.stride()[1:])
    meta.physical = value
    meta.device = value.device
    t._edata = meta
    marks.mark_batched(t)
    t._value = value
    t._level = level
    return t


def is_batched_at(x: Any, level: int) -> bool:
    return type(x) is BatchedTensor and x._level == level


def maybe_level(x: Any) -> int:
    """The level of ``x`` if it is a BatchedTensor, else 0."""
    return x._level if type(x) is BatchedTensor else 0
